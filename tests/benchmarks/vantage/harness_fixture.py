"""One small VANTAGE-Bench set of all eight tasks in the harness's layouts, written by the tests.

``write_harness_set(folder)`` writes, for every task, the answer key
``gt/<harness key>_gt.jsonl`` (the records the harness's adapters read,
``vlmeval/dataset/utils/vantagebench/adapter_*.py``: ``id``, ``task``,
``media``, ``category``, the ``gpt`` turn's value as JSON text,
``metadata.extra``) and the submission ``submission/<harness key>.jsonl``
(records as ``emit.py`` lines 227-240 writes them), plus the two images
object localization opens. ``EXPECTED`` holds each task's primary value
(x100) worked out by hand in ``test_end_to_end.py``.
"""
import json
from pathlib import Path

from PIL import Image

HARNESS_KEYS = {"vqa": "vqa", "event_verification": "event_verification", "temporal": "temporal", "dvc": "dvc",
                "refex": "grounding", "pointing": "pointing", "astro": "astro", "sot": "sot"}
TASK_STRINGS = {"vqa": "video_qa", "event_verification": "event_verification", "temporal": "temporal_grounding",
                "dvc": "dense_video_captioning", "refex": "referring_expressions", "pointing": "spatial_pointing",
                "astro": "object_localization", "sot": "single_object_tracking"}


def _gt(rid, task, value, extra=None, media="", category="c"):
    value = value if isinstance(value, str) else json.dumps(value)
    return {"id": rid, "task": TASK_STRINGS[task], "media": media, "category": category,
            "conversations": [{"from": "human", "value": "<question>"}, {"from": "gpt", "value": value}],
            "metadata": {"extra": extra or {}}}


def _cases(folder: Path) -> dict:
    """task -> [(ground-truth record, raw answer)]."""
    img1, img2 = folder / "images" / "IVA_frame_0001.png", folder / "images" / "IVA_frame_0002.png"
    cases = {
        "vqa": [(_gt(f"clip_{k}__q_{k:06d}", "vqa", gt, {"task_type": "counting"}, f"clip_{k}.mp4"), ans)
                for k, (gt, ans) in enumerate([("C", "Answer: C"), ("B", "I pick b."),
                                               ("A", "The forklift is a machine")])],
        "event_verification": [(_gt(f"clip_{k}__ev_{k:06d}", "event_verification", gt, {}, f"clip_{k}.mp4"), ans)
                               for k, (gt, ans) in enumerate([("Yes", "Yes."), ("Yes", "No"), ("No", "no"),
                                                              ("No", "I cannot tell")])],
        "temporal": [
            (_gt("clip_0__tg_000000", "temporal", {"start": "00:10", "end": "00:14"}, {"duration": 30}, "clip_0.mp4"),
             '{"start": "00:08", "end": "00:12"}'),
            (_gt("clip_1__tg_000001", "temporal", {"start": "00:10", "end": "00:14"}, {"duration": 30}, "clip_1.mp4"),
             "I don't know"),
            # plain text: the harness reads JSON only, so this exact interval is the whole video there
            (_gt("clip_2__tg_000002", "temporal", {"start": "00:10", "end": "00:14"}, {"duration": 30}, "clip_2.mp4"),
             "00:10-00:14"),
        ],
        "dvc": [
            (_gt("clip_0__dvc_000000", "dvc", [{"start": "00:00", "end": "00:10", "caption": "a man walks"},
                                                {"start": "00:10", "end": "00:20", "caption": "a car parks"},
                                                {"start": "00:20", "end": "00:25", "caption": ""}], {}, "clip_0.mp4"),
             "<00:00:00><00:00:10> a man walks\n<00:00:12><00:00:20> a car parks"),
            (_gt("clip_1__dvc_000001", "dvc", [{"start": "00:30", "end": "00:40", "caption": "a dog runs"}], {},
                 "clip_1.mp4"),
             '[{"start": "0:00:30", "end": "0:00:40", "caption": "a dog runs"}]'),
        ],
        "refex": [
            (_gt("frame_a__rx_000000", "refex", [[200, 100, 600, 500]], {"image_width": 2000, "image_height": 1000},
                 "frame_a.jpg"), '{"x1": 100, "y1": 100, "x2": 300, "y2": 500}'),
            (_gt("frame_b__rx_000001", "refex", [[0, 0, 100, 100]], {"image_width": 1000, "image_height": 1000},
                 "frame_b.jpg"), "[[0, 0, 50, 100]]"),
            (_gt("frame_c__rx_000002", "refex", [[0, 0, 100, 100]], {"image_width": 1000, "image_height": 1000},
                 "frame_c.jpg"), "I cannot see it."),
        ],
        "pointing": [(_gt(f"img_{k}__sp_{k:06d}", "pointing", gt, {"question_id": f"q{k}"}, f"img_{k}.jpg"), ans)
                     for k, (gt, ans) in enumerate([("C", "The answer is (C)."), ("D", "D"), ("A", "B")])],
        "astro": [
            (_gt("IVA_frame_0001__ol_000000", "astro",
                 [{"label": "Pedestrian", "bbox": [64, 48, 128, 96]}, {"label": "car", "bbox": [320, 240, 384, 288]},
                  {"label": "person", "bbox": [0, 0, 5, 5]}],
                 {"image_filename": img1.name, "image_path": str(img1), "min_bbox_area": 50}, img1.name),
             '[[100, 100, 200, 200], {"box_2d": [500, 500, 600, 600], "label": "car"}, '
             '{"bbox_2d": [600, 600, 700, 700], "label": "people"}, {"bbox": [0, 0, 5, 5]}]'),
            (_gt("IVA_frame_0002__ol_000001", "astro", [{"label": "person", "bbox": [320, 240, 448, 336]}],
                 {"image_filename": img2.name, "image_path": str(img2), "min_bbox_area": 50}, img2.name),
             '```json\n[{"box_2d": [500, 500, 700, 700], "label": "person"}]\n```'),
        ],
        "sot": [
            (_gt("W__C_0005648__obj37", "sot", {"5663": [100, 100, 200, 200], "5678": None},
                 {"frame_ids": [5648, 5663, 5678], "occluded": {}, "init_bbox": [90, 90, 190, 190],
                  "object_type": "Person"}, "W__C_0005648__obj37"),
             '{"frame_1": [100, 100, 200, 150], "frame_2": null}'),
        ],
    }
    return cases


def write_harness_set(folder) -> tuple[Path, Path]:
    """Write the set under ``folder``; return ``(ground-truth folder, submission folder)``."""
    folder = Path(folder)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    for name in ("IVA_frame_0001.png", "IVA_frame_0002.png"):
        Image.new("RGB", (640, 480)).save(folder / "images" / name)
    gt_dir, sub_dir = folder / "gt", folder / "submission"
    gt_dir.mkdir(exist_ok=True)
    sub_dir.mkdir(exist_ok=True)
    for task, pairs in _cases(folder).items():
        key = HARNESS_KEYS[task]
        with open(gt_dir / f"{key}_gt.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for rec, _ in pairs:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        with open(sub_dir / f"{key}.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for rec, answer in pairs:
                f.write(json.dumps({"id": rec["id"], "task": TASK_STRINGS[task],
                                    "conversations": [{"from": "assistant", "value": answer}],
                                    "metadata": {"model": "hand-written", "box_coord_order": "xyxy", "extra": {}}},
                                   ensure_ascii=False) + "\n")
    return gt_dir, sub_dir
