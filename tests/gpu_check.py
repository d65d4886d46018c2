"""The GPU check: the describe and embed paths of a local model on a GPU, offline, in a few minutes.

``make gpu-check`` runs ``python -m tests.gpu_check``. With the tiny random
architectures the tests build (``tests/tiny_vlm.py``, ``tests/tiny_vlm_zoo.py``,
``tests/tiny_contrastive.py``; no download, no network), on ``--device``
(default ``cuda``) in ``--dtype`` (default ``bfloat16``):

* each architecture describes the packaged street-camera excerpts (three clips
  of 6 or 7 frames at 1 frame per second, and their first frames as images),
  one at a time and in batches of 2, once with the model on the device and once
  spread by ``--device-map auto``; a row gives the items per second and whether
  the batched answers equal those given one at a time;
* the tiny CLIP embeds the frames on the device, and all-MiniLM-L6-v2 encodes
  sentences there; each is compared with the same on the CPU in float32;
* an absurd batch with the device's memory capped (``torch.cuda.
  set_per_process_memory_fraction``) must stop the run with the describer's
  environment error, the one line ``sova describe`` prints, and nothing blamed on
  an item.

It prints one table and writes it as JSON (``--out``). The models are random:
their text is noise, so only what is stable is checked (an answer batched and
alone in one dtype; vectors within a stated tolerance of float32 on the CPU).
In bfloat16 a batch's padding can move the last bits of a random model's
logits, so a batched answer that differs from the one given alone is reported,
not a failure; in float32 it is a failure. Exit status: 0 when every check
passed, 1 when one failed or no GPU is visible (said in one line), 2 for a
wrong invocation. ``--device cpu`` runs the same checks on the CPU (the test
suite does, on two architectures), without the out-of-memory check.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tests import tiny_contrastive, tiny_vlm, tiny_vlm_zoo

#: Every tiny architecture of the tests, by name.
ARCHITECTURES = {"llava": tiny_vlm.build_tiny_llava, "qwen2.5-vl": tiny_vlm.build_tiny_qwen2_5_vl,
                 "qwen3-vl": tiny_vlm.build_tiny_qwen3_vl, **tiny_vlm_zoo.BUILDERS, **tiny_vlm_zoo.VIDEO_BUILDERS}
#: The largest difference from float32 on the CPU that a vector may show (cosine similarity of unit vectors).
TOLERANCE = {"float32": 1e-4, "bfloat16": 2e-2, "float16": 5e-3}
#: The largest difference between a request's first-token logits alone and in a batch, by dtype (on the CPU the
#: tiny models show at most 1e-7 in float32 and 2e-3 in bfloat16).
LOGIT_TOLERANCE = {"float32": 1e-4, "bfloat16": 5e-2, "float16": 1e-2}
NEW_TOKENS = 6


@dataclass
class Row:
    """One line of the table: an architecture (or the embedders, the out-of-memory check) in one setting."""

    check: str
    dtype: str
    placement: str
    items_per_s: float | None = None
    batched_equals_alone: bool | None = None
    max_vector_difference: float | None = None
    passed: bool = False
    note: str = ""


@dataclass
class Report:
    """What ran where, and its rows (``to_json``)."""

    device: str
    dtype: str
    versions: dict
    rows: list[Row] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.rows) and all(row.passed for row in self.rows)

    def to_json(self) -> dict:
        return {"device": self.device, "dtype": self.dtype, "versions": self.versions, "passed": self.passed,
                "rows": [asdict(row) for row in self.rows]}

    def table(self) -> str:
        head = ("check", "dtype", "placement", "items/s", "batched = alone", "max |diff|", "passed", "note")
        lines = [head]
        for r in self.rows:
            lines.append((r.check, r.dtype, r.placement, "" if r.items_per_s is None else f"{r.items_per_s:.1f}",
                          {None: "", True: "yes", False: "no"}[r.batched_equals_alone],
                          "" if r.max_vector_difference is None else f"{r.max_vector_difference:.2e}",
                          "yes" if r.passed else "NO", r.note))
        widths = [max(len(str(line[k])) for line in lines) for k in range(len(head) - 1)]
        return "\n".join("  ".join(str(v).ljust(w) for v, w in zip(line, widths)) + "  " + line[-1]
                         for line in lines).rstrip()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gpu-check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", help="torch device (default: cuda)")
    parser.add_argument("--dtype", default="bfloat16", choices=sorted(TOLERANCE), help="default: bfloat16")
    parser.add_argument("--architectures", default=",".join(ARCHITECTURES), metavar="A,B",
                        help=f"comma-separated, of {', '.join(ARCHITECTURES)} (default: all)")
    parser.add_argument("--out", default="gpu-check.json", metavar="FILE", help="the table as JSON")
    args = parser.parse_args(argv)
    args.architectures = [a.strip() for a in args.architectures.split(",") if a.strip()]
    unknown = [a for a in args.architectures if a not in ARCHITECTURES]
    if unknown or not args.architectures:
        parser.error(f"--architectures: unknown {unknown or 'none given'}; choose from {', '.join(ARCHITECTURES)}")
    return args


def no_gpu_line(device: str) -> str | None:
    """One line saying that ``device`` is a CUDA device torch cannot see, else None."""
    import torch

    if not device.startswith("cuda") or torch.cuda.is_available():
        return None
    return (f"gpu-check: no CUDA GPU is visible to torch {torch.__version__} (built for CUDA "
            f"{torch.version.cuda or 'none'}): nothing checked; run it on a machine with an NVIDIA GPU and driver")


def clips():
    """The packaged excerpts as video requests (1 frame per second) and their first frames as image requests."""
    from sova_lib.describe.contract import DescribeRequest
    from sova_lib.video.frames import example_videos, sample_frames

    videos, images = [], []
    for path in example_videos():
        frames = sample_frames(path, 1.0)
        videos.append(DescribeRequest(path.stem, list(frames.images), "Briefly classify the actions.",
                                      "Watch the motion.", True, tuple(float(t) for t in frames.timestamps)))
        images.append(DescribeRequest(path.stem + "-still", [frames.images[0]], "Describe the image.", None, False))
    return videos + images


def first_token_logits(describer, requests):
    """The logits of the first answer token of each request (``(n, vocabulary)`` float32), computed together."""
    import torch

    engine = describer.load()._engine
    with torch.inference_mode():
        return engine.model(**engine.inputs(requests)).logits[:, -1, :].float().cpu().numpy()


def logit_gap(alone, batched, requests) -> float:
    """The largest difference between the first-token logits of each request alone and in its batch of ``batched``
    (the batches ``describe`` forms: ``_ImageTextToText._groups``, two at a time)."""
    import numpy as np

    engine = batched.load()._engine
    gap = 0.0
    for _, positions in engine._groups(list(requests)):
        for start in range(0, len(positions), batched.batch_size):
            chunk = [requests[i] for i in positions[start:start + batched.batch_size]]
            together = first_token_logits(batched, chunk)
            one = np.concatenate([first_token_logits(alone, [r]) for r in chunk])
            gap = max(gap, float(np.max(np.abs(together - one))))
    return gap


def describe_rows(arch: str, folder: Path, requests, device: str, dtype: str) -> list[Row]:
    """The architecture on ``device`` and spread by ``device_map="auto"``: speed; batched against alone, as
    answers and as the first token's logits (a random model's near-ties can flip an answer on the last bit)."""
    from sova_lib.describe.backends.transformers import TransformersDescriber

    rows = []
    for placement, where in (("device", {"device": device}), ("device_map=auto", {"device_map": "auto"})):
        row = Row(arch, dtype, placement)
        try:
            alone = TransformersDescriber(model=str(folder), max_new_tokens=NEW_TOKENS, dtype=dtype, **where)
            batched = TransformersDescriber(model=str(folder), max_new_tokens=NEW_TOKENS, dtype=dtype, batch_size=2,
                                            **where)
            alone.load(), batched.load()
            one = [alone.describe([r])[0] for r in requests]
            start = time.perf_counter()
            two = batched.describe(requests)
            row.items_per_s = len(requests) / (time.perf_counter() - start)
            row.batched_equals_alone = two == one
            row.max_vector_difference = logit_gap(alone, batched, requests)
            row.passed = row.max_vector_difference <= LOGIT_TOLERANCE[dtype]
            used = sorted(alone.run_info().get("devices_used", []))
            row.note = f"on {', '.join(used)}; first-token logits within {LOGIT_TOLERANCE[dtype]:g}"
            if not row.batched_equals_alone:
                row.note += f"; {sum(a != b for a, b in zip(one, two))} of {len(one)} answers differ batched"
        except Exception as error:  # noqa: BLE001 - a row says what failed; the check goes on
            row.note = f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
        rows.append(row)
    return rows


def cosine_gap(a, b) -> float:
    """The largest ``1 - cos`` between matching rows of ``a`` and ``b``."""
    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    return float(np.max(1.0 - np.sum(a * b, axis=1)))


def embed_rows(folder: Path, requests, device: str, dtype: str) -> list[Row]:
    """The tiny CLIP's frame vectors and all-MiniLM-L6-v2's sentence vectors on ``device``, against the CPU."""
    from sova_lib.describe.contrastive.model import ContrastiveModel
    from sova_lib.encoder import SentenceEncoder

    rows = []
    frames = [frame for r in requests for frame in r.frames]
    row = Row("tiny CLIP frame vectors", dtype, "device")
    try:
        start = time.perf_counter()
        here = ContrastiveModel(model=str(folder), device=device, dtype=dtype).image_features(frames)
        row.items_per_s = len(frames) / (time.perf_counter() - start)
        cpu = ContrastiveModel(model=str(folder), device="cpu", dtype="float32").image_features(frames)
        row.max_vector_difference = cosine_gap(here, cpu)
        row.passed = row.max_vector_difference <= TOLERANCE[dtype]
        row.note = f"{len(frames)} frames; tolerance {TOLERANCE[dtype]:g} (1 - cosine to float32 on the CPU)"
    except Exception as error:  # noqa: BLE001
        row.note = f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
    rows.append(row)
    sentences = [f"A person walks from the {a} to the {b} of the square." for a in ("left", "right", "top")
                 for b in ("bottom", "middle", "entrance")] * 8
    row = Row("all-MiniLM-L6-v2 sentence vectors", "float32", "device")
    try:
        start = time.perf_counter()
        here = SentenceEncoder(device=device, show_progress=False).encode(sentences)
        row.items_per_s = len(sentences) / (time.perf_counter() - start)
        cpu = SentenceEncoder(device="cpu", show_progress=False).encode(sentences)
        row.max_vector_difference = cosine_gap(here, cpu)
        row.passed = row.max_vector_difference <= TOLERANCE["float32"]
        row.note = f"{len(sentences)} sentences; tolerance {TOLERANCE['float32']:g}"
    except Exception as error:  # noqa: BLE001
        row.note = f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
    rows.append(row)
    return rows


def out_of_memory_row(folder: Path, requests, device: str, dtype: str, workdir: Path, batch: int = 256) -> Row:
    """An absurd batch (``batch`` clips of 4 x a clip's frames) with the device's memory capped at 8 MiB above what
    is in use: the run must stop as an environment error (``DescriberEnvironmentError``, exit status 1 in
    ``sova describe``), no item blamed."""
    import torch

    from sova_lib.describe.backends.transformers import TransformersDescriber
    from sova_lib.describe.contract import DescriberEnvironmentError
    from sova_lib.describe.item import Item
    from sova_lib.describe.prompts import Prompt
    from sova_lib.describe.run_cache import RunOptions
    from sova_lib.describe.runner import LocalEngine, describe_items
    from sova_lib.video.frames import example_videos

    row = Row("out of memory stops the run", dtype, "device")
    video = requests[0]
    frames = video.frames * 4
    times = tuple(float(k) for k in range(len(frames)))  # one frame a second, as the sampler gives them
    describer = TransformersDescriber(model=str(folder), max_new_tokens=NEW_TOKENS, dtype=dtype, device=device,
                                      batch_size=batch).load()
    index = torch.device(device).index or 0
    total = torch.cuda.get_device_properties(index).total_memory
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction(min(1.0, (torch.cuda.memory_reserved(index) + 8 * 2**20) / total),
                                               index)
    try:
        items = [Item(f"copy{k}", str(example_videos()[0])) for k in range(batch)]
        describe_items(describer, items, workdir / "oom-cache", prompt=Prompt("custom", video.prompt, video.prompt, video.system_prompt or None),
                       engine=LocalEngine(lambda item, fps: (frames, times, True)),
                       run=RunOptions(show_progress=False, verbose=False))
        row.note = f"a batch of {batch} clips of {len(frames)} frames did not run out of 8 MiB"
    except DescriberEnvironmentError as error:
        errors = [p.read_text() for p in (workdir / "oom-cache").rglob("errors.jsonl")]
        message = str(error)
        row.passed = "ran out of memory" in message and "\n" not in message and errors in ([], [""])
        row.note = message[:160] + ("..." if len(message) > 160 else "")
    except Exception as error:  # noqa: BLE001
        row.note = f"not stopped as an environment error: {type(error).__name__}: {str(error)[:200]}"
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0, index)
        torch.cuda.empty_cache()
    return row


def versions() -> dict:
    import torch
    import transformers

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "transformers": transformers.__version__, "gpu": gpu}


def run(args: argparse.Namespace) -> Report:
    """Every check of ``args`` (``parse_args``), in one report."""
    report = Report(args.device, args.dtype, versions())
    requests = clips()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for arch in args.architectures:
            folder = ARCHITECTURES[arch](work / arch)
            report.rows += describe_rows(arch, folder, requests, args.device, args.dtype)
            print(f"gpu-check: {arch} done", file=sys.stderr)
        clip = tiny_contrastive.build_tiny_clip(work / "clip")
        report.rows += embed_rows(clip, requests, args.device, args.dtype)
        if args.device.startswith("cuda"):
            llava = work / "llava" if "llava" in args.architectures else tiny_vlm.build_tiny_llava(work / "llava")
            report.rows.append(out_of_memory_row(llava, requests, args.device, args.dtype, work))
    return report


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    line = no_gpu_line(args.device)
    if line:
        print(line, file=sys.stderr)
        return 1
    report = run(args)
    print(report.table())
    Path(args.out).write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    print(f"gpu-check: {'every check passed' if report.passed else 'a check failed'}; the table: {args.out}")
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
