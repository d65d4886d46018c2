"""``sova image-tasks evaluate`` and ``sova image-tasks embed`` with a tiny random CLIP."""
import hashlib
import json

import numpy as np
import pytest
from PIL import Image

from sova_lib.benchmarks.image_tasks import datasets
from sova_lib.cli import main
from sova_lib.item_vectors import read_embeddings
from sova_lib.video import example_videos, probe, sample_indices


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _vsr_file(tmp_path):
    rows = [{"image": "000000000001.jpg", "caption": "The cat is on the bed.", "label": 1, "relation": "on"},
            {"image": "000000000003.jpg", "caption": "The cat is under the bed.", "label": 0, "relation": "under"},
            {"image": "000000000002.jpg", "caption": "The dog is left of the car.", "label": 1, "relation": "left of"}]
    path = tmp_path / "small_vsr.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_random_baseline_over_the_vendored_zeroshot_split(capsys):
    code, out, _ = _run(capsys, "image-tasks", "evaluate", "--task", "vsr-zeroshot", "--baseline", "random", "--json")
    result = json.loads(out)
    lines = datasets.vendored_vsr("zeroshot").read_text().splitlines()
    assert code == 0 and result["value"] == 50.0 and result["n_items"] == len(lines) == 1222
    assert result["metric"] == "accuracy"


def test_oracle_and_descriptions(capsys, tmp_path):
    path = _vsr_file(tmp_path)
    code, out, _ = _run(capsys, "image-tasks", "evaluate", "--task", "vsr-zeroshot", "--annotations", path, "--baseline",
                        "oracle", "--json")
    assert code == 0 and json.loads(out)["value"] == 100.0
    texts = tmp_path / "descriptions.jsonl"  # ids: image stems as sova describe --images writes them
    texts.write_text(json.dumps({"id": 1, "text": "A kitchen.\nThe cat is on the bed."}) + "\n"
                     + json.dumps({"id": 2, "text": "The dog is not left of the car."}) + "\n"
                     + json.dumps({"id": 3, "text": "The cat is not under the bed. It sleeps."}) + "\n")
    code, out, _ = _run(capsys, "image-tasks", "evaluate", "--task", "vsr-zeroshot", "--annotations", path,
                        "--descriptions", texts, "--json")
    result = json.loads(out)
    # each image holds one choice verbatim (cosine 1): items 0 and 1 right, item 2 (a true caption) wrong
    assert code == 0 and result["n_items"] == 3 and result["value"] == pytest.approx(200 / 3)
    assert result["ties"] == "expected" and result["text_split"] == "sentences+max"


def test_usage_errors_are_one_line_and_status_2(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("SOVA_IMAGE_TASKS", raising=False)
    code, out, err = _run(capsys, "image-tasks", "evaluate", "--task", "whatsup-a", "--baseline", "random")
    assert code == 2 and "controlled_images_dataset.json" in err and len(err.strip().splitlines()) == 1
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair", "--baseline", "random")
    assert code == 2 and "argument --baseline: invalid choice: 'random'" in err
    code, _, err = _run(capsys, "image-tasks", "evaluate", "--task", "vsr-zeroshot", "--embeddings", tmp_path / "x.npz")
    assert code == 2 and "--text-model" in err


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.tiny_contrastive import build_tiny_clip

    return build_tiny_clip(tmp_path_factory.mktemp("clip") / "model")


def test_embed_images_then_zero_shot(capsys, tmp_path, tiny_clip):
    from sova_lib.describe.contrastive import ContrastiveModel

    images = tmp_path / "images"
    images.mkdir()
    rng = np.random.default_rng(1)
    for stem in ("000000000001", "000000000002", "000000000003"):
        Image.fromarray(rng.integers(0, 256, (40, 48, 3), dtype=np.uint8)).save(images / f"{stem}.jpg")
    out_npz = tmp_path / "images.npz"
    code, out, _ = _run(capsys, "image-tasks", "embed", "--model", tiny_clip, "--images", images, "--pool", "mean",
                        "--cache-dir", tmp_path / "cache", "--out", out_npz, "--no-progress")
    assert code == 0 and "3 embedded" in out
    # images have no frame rate: the key keeps the 1 fps the image commands always recorded
    (folder,) = (tmp_path / "cache" / "frame-embeddings").iterdir()
    assert folder.name.startswith("model-mean-1fps__")
    assert json.loads((folder / "manifest.json").read_text())["fps"] == 1.0
    vectors = read_embeddings(out_npz)
    assert vectors.ids.tolist() == [1, 2, 3]
    path = _vsr_file(tmp_path)
    code, out, _ = _run(capsys, "image-tasks", "evaluate", "--task", "vsr-zeroshot", "--annotations", path, "--embeddings",
                        out_npz, "--text-model", tiny_clip, "--json", "--out", tmp_path / "results")
    assert code == 0
    (written,) = (tmp_path / "results").glob("*.json")  # named by the file's content and the text tower
    record = json.loads(written.read_text())
    assert record["cache"] == "images.npz" and record["encoder"] == str(tiny_clip)
    assert record["fingerprint"] == {"method": "file-digest", "sha256": hashlib.sha256(out_npz.read_bytes()).hexdigest()}
    # independent: cosine of each image vector with each choice's text vector, argmax with ties shared
    model = ContrastiveModel(model=str(tiny_clip))
    credit = []
    for item in datasets.load_vsr(path):
        text = model.text_features(list(item.choices))
        text /= np.linalg.norm(text, axis=1, keepdims=True)
        cos = text @ vectors.vectors[vectors.ids.tolist().index(item.image_key)]
        best = np.flatnonzero(np.isclose(cos, cos.max(), atol=1e-7))
        credit.append(1 / best.size if item.answer in best else 0.0)
    assert json.loads(out)["value"] == pytest.approx(100 * np.mean(credit))


def test_embed_videos_pool_none_exports_every_sampled_frame(capsys, tmp_path, tiny_clip):
    out_npz = tmp_path / "frames.npz"
    code, out, _ = _run(capsys, "embed", "--model", tiny_clip, "--videos", example_videos()[0].parent, "--pool",
                        "none", "--fps", 1, "--cache-dir", tmp_path / "cache", "--out", out_npz, "--no-progress")
    assert code == 0
    back = np.load(out_npz)
    counts = np.bincount(back["owner"]).tolist()
    expected = [len(sample_indices(probe(p).num_frames, probe(p).fps, 1.0)) for p in sorted(example_videos())]
    assert back["ids"].tolist() == sorted(p.stem for p in example_videos()) and counts == expected
    code, _, err = _run(capsys, "embed", "--model", tmp_path / "no-such-model", "--videos", example_videos()[0], "--cache-dir",
                        tmp_path / "cache")
    assert code == 2 and "no-such-model" in err
