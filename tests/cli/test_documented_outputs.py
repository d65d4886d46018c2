"""What the command lines of the README and the docs print and write, byte for byte.

Each row of ``COMMANDS`` is a command line of the README or of a page of ``docs/`` (or of a command's own help),
with its placeholders (``ROOT``, ``clips/``, a model behind a server) filled by what this machine has: the
bundled excerpts, the packaged MEVA annotation sample, the synthetic MUVR and VANTAGE-Bench sets the notebooks
build, a loopback chat-completions server (``tests.chat_server``, one request at a time) for the OpenAI-compatible
backend, a tiny random CLIP (``tests.tiny_contrastive``). The rows run in order, once per module, in one temporary
folder (inputs under ``in/``, outputs under ``out/``), each after the ones it reads. ``tests/data/documented/<row>.txt``
holds what each printed (exit status, stdout, stderr without progress bars) and every file it wrote or changed
under ``out/`` (the sentence encoder's and the splitter's own caches aside). Normalised: the temporary folder, the
server's address, times, durations, rates, shard names (time, process id, random tail) and the Python, torch and
transformers versions; a cache's two logs (descriptions.jsonl, errors.jsonl), whose lines come in the order items
finished, are compared sorted; a long file by its digest and first lines. ``SOVA_UPDATE_DOCUMENTED=1`` rewrites the
files (then read the diff).
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.paths import DATA, ROOT

GOLDEN = DATA / "documented"
UPDATE = os.environ.get("SOVA_UPDATE_DOCUMENTED") == "1"

QUICK = "{out}/sova/descriptions/quickstart-motion-classical-motion-general-2fps__35741fb179ec"
QUICK1 = "{out}/sova/descriptions/quickstart-motion-classical-motion-general-1fps__6cfa0fb51578"
SAMPLE = "{repo}/sova_lib/benchmarks/sovabench/data/meva-annotations-sample"
MUVR = "--data {in}/muvr"
FEATURES = "--features {in}/muvr/features/VLMs_1_15/synthetic-clip"
STREET = "{in}/street"
#: The street benchmark's TSVs, in the harness's LMUData layout (``synthetic.write_street_benchmark``).
TEMPORAL_TSV, DVC_TSV, VQA_TSV = (f"{STREET}/datasets/{name}/{name}.tsv"
                                  for name in ("VANTAGE_Temporal", "VANTAGE_DVC", "VANTAGE_VQA"))
SERVE = "--backend openai --base-url {server} --concurrency 1"

#: (name, command line after ``sova``). ``{in}``: the inputs; ``{out}``: the outputs; ``{glob:PATTERN}``: the one
#: path under ``{out}`` that PATTERN matches when the row runs; ``{server}``/``{yes}``: chat servers.
COMMANDS = [
    # README: the quickstart and the comparison
    ("readme-describe-2fps", "describe --backend motion --fps 2 --protocol quickstart-direction --cache-dir {out}/sova"),
    ("readme-evaluate", f"sovabench evaluate --protocol quickstart-direction --cache-dir {{out}}/sova "
                        f"--descriptions {QUICK}"),
    ("readme-describe-1fps", "describe --backend motion --fps 1 --protocol quickstart-direction --cache-dir {out}/sova"),
    ("readme-compare", f"compare --protocol quickstart-direction --cache-dir {{out}}/sova --names '2 fps' '1 fps' "
                       f"--top 1 {QUICK} {QUICK1}"),
    # docs/explore.md
    ("explore-compare-json", f"compare --protocol quickstart-direction {QUICK} {QUICK1} --bootstrap 2000 --seed 1 "
                             "--top 20 --json --cache-dir {out}/sova"),
    ("explore-compare-out", f"compare --protocol quickstart-direction {QUICK} {QUICK1} --out {{out}}/figures/results "
                            "--cache-dir {out}/sova"),
    ("explore-compare-npz", "compare --protocol quickstart-direction {in}/a.npz {in}/b.npz --names 'noisy direction' "
                            "random --top 3"),
    # docs/sovabench.md: scores, baselines, clips, the authors' output
    ("sovabench-evaluate-json", f"sovabench evaluate --protocol quickstart-direction --descriptions {QUICK} --json "
                                "--cache-dir {out}/sova"),
    ("sovabench-evaluate-out", f"sovabench evaluate --protocol quickstart-direction --descriptions {QUICK} "
                               "--no-split --aggregate mean --ties optimistic --out {out}/figures/results "
                               "--cache-dir {out}/sova"),
    ("sovabench-evaluate-embeddings", "sovabench evaluate --protocol quickstart-direction --embeddings {in}/a.npz "
                                      "--ties expected"),
    *[(f"baseline-{p}-{b}", f"sovabench evaluate --protocol {p} --baseline {b}")
      for p in ("inter-pair", "inter-pair-constrained", "intra-pair", "two-class")
      for b in ("prevalence", "random-ranking")],
    ("baseline-intra-pair-oracle", "sovabench evaluate --protocol intra-pair --baseline oracle --json "
                                   "--cache-dir {out}/cache"),
    ("clips-plan-inter-pair", f"sovabench clips plan --tsv inter-pair --annotations {SAMPLE} --out {{out}}/sample.tsv"),
    ("clips-plan-intra-pair", f"sovabench clips plan --tsv intra-pair --annotations {SAMPLE} "
                              "--out {out}/manifests/intrapair.tsv"),
    ("clips-stats", "sovabench clips stats --manifest {out}/sample.tsv"),
    ("clips-sources-inter-pair", f"sovabench clips sources --tsv inter-pair --annotations {SAMPLE} "
                                 "--out {out}/sources.tsv"),
    ("clips-fetch-dry-run", "sovabench clips fetch --tsv inter-pair --video-root {out}/videos --limit 2 --dry-run"),
    ("import", "import --authors-json {in}/minicpm_general.json --cache-dir {out}/cache --backend transformers "
               "--model openbmb/MiniCPM-V-4_5 --prompt general --fps 1"),
    ("import-evaluate", "sovabench evaluate --protocol intra-pair --descriptions {glob:cache/descriptions/imported-*} "
                        "--allow-missing --bootstrap 0 --cache-dir {out}/cache"),
    ("reproduce-baselines", "reproduce --skip-notebooks --out {out}/figures --cache-dir {out}/cache"),
    # docs/gpu.md, README: any folder of videos; docs/contrastive.md: frame vectors
    ("describe-videos", f"describe {SERVE} --model M --prompt general --videos {{in}}/videos --cache-dir {{out}}/cache"),
    ("embed-videos", "embed --videos {in}/videos --model {in}/tiny-clip --cache-dir {out}/cache --out {out}/v.npz"),
    # docs/image-tasks.md
    ("image-tasks-random", "image-tasks evaluate --task vsr-zeroshot --baseline random --json"),
    ("image-tasks-oracle", "image-tasks evaluate --task vsr-zeroshot --baseline oracle --cache-dir {out}/cache"),
    ("image-tasks-describe", f"image-tasks describe {SERVE} --model M --prompt task-aware-vsr --images {{in}}/coco-vsr "
                             "--cache-dir {out}/cache"),
    ("image-tasks-evaluate", "image-tasks evaluate --task vsr-zeroshot --descriptions "
                             "{glob:cache/descriptions/openai-M-task-aware-vsr*} --bootstrap 1000 --allow-missing "
                             "--cache-dir {out}/cache --out {out}/figures/results"),
    ("image-tasks-embed", "image-tasks embed --model {in}/tiny-clip --images {in}/coco-vsr --cache-dir {out}/cache "
                          "--out {out}/vsr-clip.npz"),
    ("image-tasks-zero-shot", "image-tasks evaluate --task vsr-zeroshot --embeddings {out}/vsr-clip.npz --text-model "
                              "{in}/tiny-clip --allow-missing --json"),
    # docs/muvr.md
    ("muvr-base-features", f"muvr evaluate {MUVR} --version base --query text+video {FEATURES}"),
    ("muvr-filter-features", f"muvr evaluate {MUVR} --version filter --tag-weight 0.3 {FEATURES}"),
    ("muvr-random-ranking", f"muvr evaluate {MUVR} --version base --baseline random-ranking"),
    ("muvr-features-json-out", f"muvr evaluate {MUVR} --version base --query video {FEATURES} --json "
                               "--out {out}/figures/results"),
    ("muvr-video-embeddings", f"muvr evaluate {MUVR} --version base --query video --embeddings {{in}}/muvr.npz "
                              "--ties gallery-order"),
    ("muvr-describe-windows", f"muvr describe {MUVR} --video-root {{in}}/muvr-videos {SERVE} --model M "
                              "--prompt general --fps 1 --cache-dir {out}/muvr-cache"),
    ("muvr-evaluate-windows", f"muvr evaluate {MUVR} --version base --descriptions "
                              "{glob:muvr-cache/descriptions/openai-M-general-1fps__*} --cache-dir {out}/cache"),
    ("muvr-describe-qa", f"muvr describe --version qa {MUVR} --video-root {{in}}/muvr-videos --backend openai "
                         "--model M --base-url {yes} --concurrency 1 --cache-dir {out}/muvr-cache"),
    ("muvr-evaluate-qa", f"muvr evaluate {MUVR} --version qa --answers {{glob:muvr-cache/descriptions/openai-M-muvr-qa-*}}"),
    ("muvr-evaluate-qa-strict", f"muvr evaluate {MUVR} --version qa --answers {{glob:muvr-cache/descriptions/openai-M-muvr-qa-*}} "
                                "--scoring strict --json --out {out}/figures/results"),
    # docs/vantage.md
    ("vantage-describe-temporal", f"vantage describe --task temporal --items {TEMPORAL_TSV} --media-root "
                                  "{in}/videos --backend openai --model Qwen/Qwen2.5-VL-7B-Instruct --base-url {server} --concurrency 1 "
                                  "--cache-dir {out}/cache --out {out}/submissions/temporal.jsonl"),
    ("vantage-submit-temporal", f"vantage submit --task temporal --items {TEMPORAL_TSV} --answers "
                                "{glob:cache/descriptions/openai-Qwen*} --model Qwen2.5-VL-7B "
                                "--out {out}/submission/temporal.jsonl"),
    ("vantage-validate-temporal", f"vantage validate {{out}}/submission/temporal.jsonl --task temporal "
                                  f"--items {TEMPORAL_TSV}"),
    ("vantage-evaluate-temporal", f"vantage evaluate --task temporal --ground-truth {STREET}/temporal_gt.jsonl "
                                  "--submission {out}/submissions/temporal.jsonl"),
    ("vantage-describe-dvc", f"vantage describe --task dvc --items {DVC_TSV} --media-root {{in}}/videos "
                             f"{SERVE} --model M --cache-dir {{out}}/vantage-cache --out {{out}}/dvc.jsonl"),
    ("vantage-evaluate-dvc", f"vantage evaluate --task dvc --ground-truth {STREET}/dvc_gt.jsonl --submission "
                             "{out}/dvc.jsonl --scoring strict --json --similarity token-f1"),
    ("vantage-describe-vqa-scored", f"vantage describe --task vqa --items {VQA_TSV} --media-root {{in}}/videos "
                                    f"{SERVE} --model M --cache-dir {{out}}/vantage-cache "
                                    f"--ground-truth {STREET}/vqa_gt.jsonl"),
    ("vantage-evaluate-vqa-answers", f"vantage evaluate --task video_qa --ground-truth {STREET}/vqa_gt.jsonl "
                                     "--answers {glob:vantage-cache/descriptions/openai-M-vantage-vqa*} "
                                     f"--items {VQA_TSV} --out {{out}}/figures/results"),
    ("vantage-validate-against-answer-key", f"vantage validate {{out}}/submission/temporal.jsonl --task temporal "
                                            f"--ground-truth {STREET}/temporal_gt.jsonl"),
    ("vantage-validate-dvc", f"vantage validate {{out}}/dvc.jsonl --task dvc --items {DVC_TSV}"),
]

# --------------------------------------------------------------------------- the inputs


def _write_inputs(src: Path) -> None:
    """Everything the rows read that the repository does not ship: the synthetic sets, two vector files, an
    authors' JSON, images named as VSR's, MUVR videos, a tiny CLIP."""
    from PIL import Image

    from sova_lib.benchmarks.muvr import write_synthetic
    from sova_lib.benchmarks.muvr.features import write_vectors_npz
    from sova_lib.benchmarks.vantage.synthetic import write_street_benchmark
    from sova_lib.protocols import get_protocol
    from sova_lib.similarity import ItemVectors
    from sova_lib.video.frames import example_videos, probe
    from tests.tiny_contrastive import build_tiny_clip

    videos = example_videos()
    shutil.copytree(videos[0].parent, src / "videos", ignore=shutil.ignore_patterns("README.md"))
    write_street_benchmark(src / "street", videos, [probe(v).num_frames / probe(v).fps for v in videos])
    rng = np.random.default_rng(0)
    ids = [clip.index for clip in get_protocol("quickstart-direction").clips()]
    direction = np.array([[1.0, 0.0] if not str(i).endswith("-reversed") else [-1.0, 0.0] for i in ids])
    noisy = direction + 0.6 * rng.standard_normal(direction.shape)
    for name, vectors in (("a", noisy), ("b", rng.standard_normal(direction.shape))):
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        np.savez(src / f"{name}.npz", ids=np.array([str(i) for i in ids]), owner=np.arange(len(ids)),
                 vectors=vectors.astype(np.float32))
    (src / "minicpm_general.json").write_text(json.dumps(
        {"0": "A car turns left at the crossing.", "1": "A car turns right.\nIt stops.", "5": "A person opens a door.",
         "7": "A truck stops."}))
    (src / "coco-vsr").mkdir()
    for k, name in enumerate(("000000017697.jpg", "000000087739.jpg")):
        Image.fromarray(np.full((24, 32, 3), 60 + 90 * k, np.uint8)).save(src / "coco-vsr" / name)
    root = write_synthetic(src / "muvr", np.random.default_rng(0), topics=1, queries_per_topic=1,
                           videos_per_topic=3, distractors=1)
    names = {path.stem for path in (root / "features").rglob("*.npy")}
    (src / "muvr-videos").mkdir()
    for k, name in enumerate(sorted(names)):
        shutil.copyfile(videos[k % len(videos)], src / "muvr-videos" / f"{name}.mp4")
    vectors = np.random.default_rng(1).standard_normal((len(names), 32)).astype(np.float32)
    write_vectors_npz(src / "muvr.npz", ItemVectors(ids=sorted(names), owner=np.arange(len(names)),
                                                    vectors=vectors / np.linalg.norm(vectors, axis=1, keepdims=True)))
    build_tiny_clip(src / "tiny-clip", seed=0)


# --------------------------------------------------------------------------- normalising


_TQDM = re.compile(r"\d+%\||\|\s*\d+/\d+ \[|it/s\]|\?\w+/s\]")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")
_WALL = [
    (re.compile(r'"(seconds|items_per_s|throughput_items_per_s|elapsed_s|frames_per_s)": [0-9.e+-]+'),
     r'"\1": <wall>'),
    (re.compile(r"\bin \d+(?:\.\d+)? s\b"), "in <wall> s"),
    (re.compile(r"\(\d+(?:\.\d+)? (items|frames)/s\)"), r"(<wall> \1/s)"),
    (re.compile(r'"(python|torch|transformers)": "[^"]*"'), r'"\1": "<version>"'),
    (re.compile(r"shard-\d{8}T\d{6}-\d+-(\d+)-[0-9a-f]{8}"), r"shard-<time>-<pid>-\1-<random>"),
    # a comparison record's name digests the two resolved paths, which hold the temporary folder
    (re.compile(r"(-vs-\S*__)[0-9a-f]{10}\.json"), r"\1<digest of the paths>.json"),
]


def normalise(text: str, places: dict[str, str]) -> str:
    for value, name in sorted(places.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(value, name)
    text = _TIME.sub("<time>", text)
    for pattern, replacement in _WALL:
        text = pattern.sub(replacement, text)
    return text


def _stderr(text: str) -> str:
    """stderr without tqdm's progress bars (each redraw a ``\\r`` segment)."""
    kept = []
    for line in text.split("\n"):
        parts = [p for p in line.split("\r") if p and not _TQDM.search(p)]
        if parts or not line:
            kept.append("\r".join(parts))
    return "\n".join(kept)


#: Caches of the sentence encoder and the splitter, which a command fills but does not report: their layout is
#: theirs. Lock files are left out too.
_SKIPPED = {"embeddings", "sentences", "splits"}

#: Characters of a written file above which its record is its digest and first lines.
_LONG = 20_000

#: A cache's append-only logs, one line per item in the order the items finished: compared sorted.
_LOGS = {"descriptions.jsonl", "errors.jsonl"}


def _files(out: Path) -> dict[str, str]:
    found = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out)
        if path.is_file() and not _SKIPPED & set(rel.parts[:-1]) and path.name != ".lock":
            found[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _content(path: Path, places: dict[str, str]) -> str:
    if path.suffix in (".npz", ".npy"):
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files} if hasattr(data, "files") else {"": data}
        lines = []
        for key, array in arrays.items():
            head = f"array {key}: {array.dtype.kind}{array.dtype.itemsize} {list(array.shape)}"
            if array.dtype.kind == "f":  # floats of a model: shape and type only (the last bits are the CPU's)
                lines.append(head)
            else:
                lines.append(f"{head} {array.tolist()}")
        return normalise("\n".join(lines), places) + "\n"
    try:
        text = normalise(path.read_bytes().decode("utf-8"), places)
        if path.name in _LOGS:
            text = "".join(sorted(text.splitlines(keepends=True)))
        if len(text) > _LONG:  # its digest, and its first lines to read
            lines = text.splitlines(keepends=True)
            text = (f"<{len(lines)} lines, sha256 {hashlib.sha256(text.encode()).hexdigest()}; the first 5:>\n"
                    + "".join(lines[:5]))
        return text
    except UnicodeDecodeError:
        return f"<{path.stat().st_size} bytes>\n"


# --------------------------------------------------------------------------- running the rows


def _argv(command: str, places: dict[str, str], out: Path) -> list[str]:
    def fill(match):
        key = match.group(1)
        if key.startswith("glob:"):
            found = sorted(out.glob(key[5:]))
            assert len(found) == 1, f"{key}: {found}"
            return str(found[0].relative_to(out.parent))
        return places[key]

    return [re.sub(r"\{([^{}]+)\}", fill, token) for token in shlex.split(command)]


def _record(name: str, command: str, code: int, stdout: str, stderr: str, wrote: dict[str, str]) -> str:
    parts = [f"$ sova {command}\n", f"exit {code}\n", "--- stdout\n", stdout, "--- stderr\n", stderr]
    for rel, text in wrote.items():
        parts += [f"--- wrote {normalise(rel, {})}\n", text if text.endswith("\n") or not text else text + "\n<no newline>\n"]
    return "".join(p if p.endswith("\n") or not p else p + "\n" for p in parts)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Every row of ``COMMANDS``, run in order: name -> its record (normalised)."""
    from sova_lib.cli import main
    from tests.chat_server import ChatServer

    work = tmp_path_factory.mktemp("documented")
    src, out = work / "in", work / "out"
    src.mkdir()
    out.mkdir()
    _write_inputs(src)
    servers = [ChatServer(), ChatServer(repeat=("content", "Yes"))]
    places = {"in": "in", "out": "out", "server": servers[0].url, "yes": servers[1].url, "repo": str(ROOT)}
    names = {servers[0].url: "{server}", servers[1].url: "{yes}", str(ROOT): "{repo}", str(work): "{work}"}
    records = {}
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SOVA_KPF_INDEX_DIR", str(work / "kpf-index"))
            mp.setenv("SOVA_CACHE", str(work / "default-cache"))
            mp.chdir(work)
            for name, command in COMMANDS:
                before = _files(out)
                try:
                    argv = _argv(command, places, out)
                except AssertionError as err:
                    records[name] = f"cannot run: {err}\n"
                    continue
                stdout, stderr = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                    code = main(argv)
                after = _files(out)
                wrote = {rel: _content(out / rel, names) for rel, digest in after.items() if before.get(rel) != digest}
                records[name] = _record(name, command, code, normalise(stdout.getvalue(), names),
                                        normalise(_stderr(stderr.getvalue()), names), wrote)
    finally:
        for server in servers:
            server.close()
    return records


def test_the_rows_are_documented_command_lines():
    names = [name for name, _ in COMMANDS]
    assert len(names) == len(set(names)) == 55, len(names)
    stale = sorted({p.stem for p in GOLDEN.glob("*.txt")} - set(names))
    assert stale == [], f"golden files without a row: {stale}"


@pytest.mark.parametrize("name", [name for name, _ in COMMANDS])
def test_prints_and_writes_what_it_did(recorded, name):
    path = GOLDEN / f"{name}.txt"
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(recorded[name], encoding="utf-8")
    assert path.is_file(), f"no golden file {path.name}: run with SOVA_UPDATE_DOCUMENTED=1 and read the diff"
    assert recorded[name] == path.read_text(encoding="utf-8")
