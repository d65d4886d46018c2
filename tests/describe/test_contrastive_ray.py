"""``sova embed --engine ray`` against the local engine, with a tiny random CLIP, on one shared local Ray instance."""
import json
import shutil

import numpy as np
import pytest

from sova_lib.cli import main
from sova_lib.describe import ray_engine
from sova_lib.describe.contrastive import ContrastiveModel, ContrastiveOptions, embed_items, read_cache
from sova_lib.describe.contrastive.ray_engine import embed_items_ray
from sova_lib.describe.item import Item
from sova_lib.describe.ray_options import RayOptions
from sova_lib.describe.run_cache import RunOptions
from sova_lib.video import probe, sample_indices
from tests.tiny_contrastive import build_tiny_clip

pytest.importorskip("ray")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow
QUIET = RunOptions(show_progress=False)


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    """A tiny random CLIP (16-d towers, built offline from a config), saved to a folder."""
    return build_tiny_clip(tmp_path_factory.mktemp("clip") / "model")


def _errors(folder):
    return {r["id"]: r["error"] for r in map(json.loads, (folder / "errors.jsonl").read_text().splitlines())}


def test_ray_engine_writes_the_local_engines_vectors_errors_and_folder(ray_address, tiny_clip, media, tmp_path,
                                                                       capsys, monkeypatch):
    args = ["embed", "--model", str(tiny_clip), "--fps", "1", "--pool", "none", "--device", "cpu",
            "--batch-frames", "5", "--videos", str(media), "--no-progress"]
    assert main(args + ["--cache-dir", str(tmp_path / "local")]) == 0
    assert main(args + ["--cache-dir", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2",
                        "--ray-items-per-call", "2"]) == 0
    out = capsys.readouterr().out
    (local,) = (tmp_path / "local" / "frame-embeddings").iterdir()
    (remote,) = (tmp_path / "ray" / "frame-embeddings").iterdir()
    assert local.name == remote.name  # the same cache key
    mine, theirs = read_cache(local), read_cache(remote)
    assert sorted(theirs) == sorted(mine) and len(mine) == 6
    for item_id, (vectors, frames) in mine.items():
        path = next(media.glob(f"{item_id}.*"))
        info = probe(path)
        assert frames.tolist() == sample_indices(info.num_frames, info.fps, 1.0).tolist() == theirs[item_id][1].tolist()
        np.testing.assert_allclose(theirs[item_id][0], vectors, rtol=0, atol=1e-6)
    errors = _errors(remote)
    assert errors == _errors(local) and list(errors) == ["broken"]
    manifest = json.loads((remote / "manifest.json").read_text())
    assert manifest["counts"] == {"done": 6, "failed": 1}
    assert manifest["run"]["engine"] == {"name": "ray", "workers": 2, "gpus_per_worker": 0.0, "cpus_per_worker": 1.0,
                                         "items_per_call": 2}
    assert "6 embedded, 0 already cached, 1 failed" in out
    # the same items again: nothing is sent, Ray is not even asked
    started = []
    monkeypatch.setattr(ray_engine, "ray_session", lambda *args: started.append(args))
    items = [Item(p.stem, p) for p in sorted(media.iterdir())]
    again = embed_items_ray(ContrastiveOptions(model=str(tiny_clip), device="cpu", batch_frames=5), items, tmp_path / "ray",
                            fps=1.0, pool="none", run=QUIET)
    assert (again.done, again.skipped, again.failed, again.folder, started) == (0, 7, 0, remote, [])


def test_mean_pool_on_ray_matches_the_local_engine_and_resumes(ray_address, tiny_clip, media, tmp_path):
    paths = sorted(media.iterdir(), key=lambda p: (p.stem == "broken", p.name))
    items = [Item(p.stem, p) for p in paths if "copy" not in p.stem]  # 3 videos, then the broken one
    options = ContrastiveOptions(model=str(tiny_clip), device="cpu", batch_frames=4)
    first = embed_items_ray(options, items[:2], tmp_path / "ray", fps=2.0, ray=RayOptions(items_per_call=1), run=QUIET)
    second = embed_items_ray(options, items, tmp_path / "ray", fps=2.0, ray=RayOptions(items_per_call=3), run=QUIET)
    assert (first.done, second.done, second.skipped, second.failed) == (2, 1, 2, 1)
    assert first.folder == second.folder and list(second.failures) == ["broken"]
    local = embed_items(ContrastiveModel(model=str(tiny_clip), device="cpu", batch_frames=4), items, tmp_path / "local",
                        fps=2.0, run=QUIET)
    mine, theirs = read_cache(local.folder), read_cache(second.folder)
    assert local.folder.name == second.folder.name and sorted(mine) == sorted(theirs) and len(mine) == 3
    for item_id, (vectors, frames) in mine.items():
        assert vectors.shape[0] == 1 and frames.tolist() == theirs[item_id][1].tolist() == [-1]
        np.testing.assert_allclose(theirs[item_id][0], vectors, rtol=0, atol=1e-6)


def _stderr_of(args, capsys):
    code = main(args)
    return code, capsys.readouterr().err


def test_a_model_that_cannot_load_stops_the_ray_run_with_the_local_message(ray_address, tiny_clip, media, tmp_path,
                                                                           capsys):
    no_weights = tmp_path / "no-weights"
    shutil.copytree(tiny_clip, no_weights, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    for model in (tmp_path / "no-such-model", no_weights):
        args = ["embed", "--model", str(model), "--device", "cpu", "--videos", str(media), "--no-progress",
                "--cache-dir", str(tmp_path / "cache")]
        (code, message), (ray_code, ray_err) = (_stderr_of(args, capsys),
                                                _stderr_of(args + ["--engine", "ray", "--workers", "1"], capsys))
        assert code == ray_code == 2 and message.startswith("sova: error: ") and str(model) in message, message
        # Ray's executor may log its own shutdown to stderr too; the command's one line is the local one
        assert message.strip() in ray_err.splitlines()
        assert not list((tmp_path / "cache").rglob("shard-*.npz"))


def test_ray_options_of_embed_need_the_ray_engine(tiny_clip, media, tmp_path, capsys):
    code = main(["embed", "--model", str(tiny_clip), "--videos", str(media), "--cache-dir", str(tmp_path),
                 "--engine", "local", "--ray-items-per-call", "2"])
    assert code == 2 and "sova: error: --ray-items-per-call applies to --engine ray" in capsys.readouterr().err
    assert not (tmp_path / "frame-embeddings").exists()
