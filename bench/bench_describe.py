"""Speed of the describe step on tiny random vision-language models: batched against one at a time.

For each architecture that can run here (Gemma 3, Idefics3 and LLaVA always;
Qwen2-VL, Qwen2.5-VL, Qwen3-VL and SmolVLM2 only where torchvision imports),
a tiny random model (``tests/tiny_vlm*.py``, hidden size 32: the numbers
measure the pipeline's overhead, decoding, the processor and padding, not a
real model's compute) describes the same clips cut from the packaged example
videos (1 fps, 8 new tokens) twice through the runner (``describe_items``):
``batch_size=1`` and ``batch_size=4``. Printed: clips per second of each
(wall clock of the whole run, decoding included) and the speed-up; and
whether the two runs wrote the same text (they must).

Run: python bench/bench_describe.py [--clips 24]  (about three minutes on 2 cores; --quick: 2 clips on one
architecture, to check that it runs)
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sova_lib.describe.backends.transformers import TransformersDescriber  # noqa: E402
from sova_lib.describe.item import Item  # noqa: E402
from sova_lib.describe.run_cache import RunOptions  # noqa: E402
from sova_lib.describe.runner import describe_items  # noqa: E402
from sova_lib.video.frames import example_videos  # noqa: E402
from tests import tiny_vlm, tiny_vlm_zoo  # noqa: E402


def torchvision_works() -> bool:
    try:
        import torchvision  # noqa: F401
    except Exception:
        return False
    return True


def clips(count: int) -> list[Item]:
    """``count`` windows of 20 to 40 frames (2 to 4 s at 10 fps) of the example videos."""
    videos = example_videos()
    items = []
    for k in range(count):
        start = (k * 7) % 20
        items.append(Item(f"c{k}", videos[k % len(videos)], window=(start, start + 20 + (k % 3) * 10)))
    return items


def run(folder: Path, items: list[Item], batch_size: int, cache: Path) -> tuple[float, dict]:
    describer = TransformersDescriber(model=str(folder), max_new_tokens=8, device="cpu", batch_size=batch_size).load()
    start = time.perf_counter()
    summary = describe_items(describer, items, cache, prompt="Briefly classify the actions.", fps=1.0,
                             run=RunOptions(show_progress=False, verbose=False))
    seconds = time.perf_counter() - start
    assert summary.failed == 0, summary.failures
    texts = {}
    for line in (summary.folder / "descriptions.jsonl").read_text().splitlines():
        record = json.loads(line)
        texts[record["id"]] = record["text"]
    return len(items) / seconds, texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--clips", type=int, default=24)
    parser.add_argument("--quick", action="store_true", help="2 clips, LLaVA alone: checks that it runs")
    args = parser.parse_args()
    builders = {**tiny_vlm_zoo.BUILDERS, "llava": tiny_vlm.build_tiny_llava}
    if args.quick:
        args.clips, builders = 2, {"llava": tiny_vlm.build_tiny_llava}
    elif torchvision_works():
        builders.update({"qwen2-vl": tiny_vlm_zoo.build_tiny_qwen2_vl, "qwen2.5-vl": tiny_vlm.build_tiny_qwen2_5_vl,
                         "qwen3-vl": tiny_vlm.build_tiny_qwen3_vl, "smolvlm": tiny_vlm_zoo.build_tiny_smolvlm})
    else:
        print("torchvision does not import here: the video-processor architectures are left out")
    items = clips(args.clips)
    print(f"{'architecture':<12} {'1 at a time':>12} {'batch of 4':>11} {'speed-up':>9}  same text")
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in builders.items():
            folder = build(Path(tmp) / name)
            single, texts_single = run(folder, items, 1, Path(tmp) / f"cache-{name}-1")
            batched, texts_batched = run(folder, items, 4, Path(tmp) / f"cache-{name}-4")
            print(f"{name:<12} {single:9.2f} c/s {batched:8.2f} c/s {batched / single:8.2f}x  "
                  f"{texts_single == texts_batched}")


if __name__ == "__main__":
    main()
