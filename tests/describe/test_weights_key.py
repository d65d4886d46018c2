"""A description cache follows the weights: a model rebuilt in place, a hub commit, a server's model swapped under one
name each get a folder of their own; a describer that cannot be reached stops even a run with nothing to do; the
batch size stays out of the key."""
from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from sova_lib.cli import main  # noqa: E402
from sova_lib.describe.backends.openai import OpenAIDescriber  # noqa: E402
from sova_lib.describe.backends.transformers import TransformersDescriber  # noqa: E402
from sova_lib.describe.backends.transformers_models import weights_fingerprint  # noqa: E402
from sova_lib.describe.contract import DescriberEnvironmentError, DescribeRequest  # noqa: E402
from sova_lib.describe.item import Item  # noqa: E402
from sova_lib.describe.run_cache import RunOptions  # noqa: E402
from sova_lib.describe.runner import describe_items  # noqa: E402
from sova_lib.fingerprint import folder_fingerprint  # noqa: E402
from sova_lib.item_vectors import read_descriptions  # noqa: E402
from tests.hub_cache import MAIN, V1, write_hub_cache  # noqa: E402
from tests.paths import DATA  # noqa: E402

QUIET = RunOptions(show_progress=False, verbose=False)
IMAGES = sorted((DATA / "vtest_frames").glob("frame_*.png"))


def _items(n: int = 3) -> list[Item]:
    return [Item(path.stem, path) for path in IMAGES[:n]]


def _manifest(folder) -> dict:
    return json.loads((folder / "manifest.json").read_text())


@pytest.mark.slow
def test_a_model_rebuilt_in_place_gets_a_new_folder_and_new_answers_and_the_batch_resumes(tmp_path):
    from tests.tiny_vlm import build_tiny_llava

    model = build_tiny_llava(tmp_path / "model", seed=0)
    cache = tmp_path / "cache"

    def run(batch_size: int, items: list[Item]):
        describer = TransformersDescriber(model=str(model), max_new_tokens=6, device="cpu", batch_size=batch_size)
        return describe_items(describer, items, cache, prompt="Describe the image.", run=QUIET)

    first = run(2, _items(2))  # a batch of two
    resumed = run(1, _items(3))  # lowered to one: the same folder, only the third item described
    assert resumed.folder == first.folder and (resumed.done, resumed.skipped_cached) == (1, 2)
    manifest = _manifest(first.folder)
    assert manifest["fingerprint"] == {"method": "folder-digest", "sha256": folder_fingerprint(model)}
    assert "batch_size" not in manifest["describer"]
    assert [run["batch_size"] for run in manifest["runs"]] == [2, 1]
    assert manifest["run"]["batch_size"] == 1
    before = read_descriptions(first.folder)

    build_tiny_llava(model, seed=1)  # the next checkpoint, saved over the last
    rebuilt = run(1, _items(3))
    assert rebuilt.folder != first.folder and (rebuilt.done, rebuilt.skipped_cached) == (3, 0)
    after = read_descriptions(rebuilt.folder)
    assert set(after) == set(before) and after != before  # other weights, other answers
    assert _manifest(rebuilt.folder)["fingerprint"]["sha256"] == folder_fingerprint(model) != \
        manifest["fingerprint"]["sha256"]


def test_a_hub_id_is_keyed_by_the_commit_of_its_revision(tmp_path):
    commit, other = MAIN, V1
    write_hub_cache(tmp_path / "hub")
    hub = str(tmp_path / "hub")
    assert weights_fingerprint("org/tiny", cache_dir=hub) == {"method": "hub-commit", "commit": commit}
    assert weights_fingerprint("org/tiny", "v1", cache_dir=hub) == {"method": "hub-commit", "commit": other}
    with pytest.raises(DescriberEnvironmentError, match="org/absent"):  # offline, not in the cache: unknown
        weights_fingerprint("org/absent", cache_dir=hub)


def _card(root: str, created: int) -> dict:
    return {"id": "M", "object": "model", "root": root, "created": created, "owned_by": "vllm"}


def test_a_model_swapped_on_the_server_gets_a_new_folder(server_factory, tmp_path):
    server = server_factory(models=[_card("/ckpt/step-100", 1_700_000_000)])
    items = _items(2)
    first = describe_items(OpenAIDescriber(model="M", base_url=server.url), items, tmp_path, prompt="Describe.", run=QUIET)
    assert _manifest(first.folder)["fingerprint"] == {"method": "server-models", "id": "M", "root": "/ckpt/step-100",
                                                      "created": 1_700_000_000, "owned_by": "vllm"}
    again = describe_items(OpenAIDescriber(model="M", base_url=server.url), items, tmp_path, prompt="Describe.", run=QUIET)
    assert again.folder == first.folder and again.skipped_cached == 2
    server.models = [_card("/ckpt/step-200", 1_700_000_500)]  # the next checkpoint, served under the same name
    swapped = describe_items(OpenAIDescriber(model="M", base_url=server.url), items, tmp_path, prompt="Describe.", run=QUIET)
    assert swapped.folder != first.folder and swapped.done == 2


def test_a_created_time_that_is_the_requests_own_is_left_out(server_factory):
    import time

    server = server_factory(models=[_card("Qwen/Qwen2.5-VL-7B-Instruct", int(time.time()))])  # as vLLM lists
    assert OpenAIDescriber(model="M", base_url=server.url).fingerprint() == {
        "method": "server-models", "id": "M", "root": "Qwen/Qwen2.5-VL-7B-Instruct", "owned_by": "vllm"}


def test_a_model_tag_names_the_weights_and_endpoints_must_agree(server_factory):
    bare = server_factory()  # no /models route
    tagged = OpenAIDescriber(model="M", base_url=bare.url, model_tag="step-300")
    assert tagged.fingerprint() == {"method": "tag", "tag": "step-300"} and tagged.weights_note is None
    untagged = OpenAIDescriber(model="M", base_url=bare.url)
    assert untagged.fingerprint() == {"method": "server-models"}
    assert untagged.weights_note.startswith(f"the cache cannot follow the weights: {bare.url}/models reports nothing "
                                            "for model 'M'")
    one, two = server_factory(models=[_card("/a", 1)]), server_factory(models=[_card("/b", 1)])
    with pytest.raises(DescriberEnvironmentError, match="the endpoints report different models named 'M'"):
        OpenAIDescriber(model="M", base_url=[one.url, two.url]).fingerprint()
    with pytest.raises(ValueError, match="model_tag"):
        OpenAIDescriber(model="M", base_url=bare.url, model_tag=" ")


def test_a_run_with_nothing_to_do_against_a_server_that_is_down_exits_1(server_factory, tmp_path, capsys):
    server = server_factory(models=["M"])
    command = ["describe", "--backend", "openai", "--model", "M", "--model-tag", "step-1", "--prompt", "general",
               "--base-url", server.url, "--videos", str(DATA / "vtest_frames"), "--cache-dir", str(tmp_path),
               "--no-progress"]
    assert main(command) == 0
    assert "described 3, skipped 0 (already cached)" in capsys.readouterr().out
    server.close()  # the server goes down; the cache holds every item
    assert main(command) == 1
    out, err = capsys.readouterr()
    assert "already cached" not in out
    (line,) = err.splitlines()
    assert line.startswith(f"sova: error: cannot reach {server.url}/chat/completions for model 'M': nothing accepts "
                           "connections at 127.0.0.1:")


def _checkpoint(folder, weights: bytes):
    """A model folder as a trainer saves it: configuration and weights (any bytes: only their digest matters)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "qwen2_5_vl"}')
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def test_a_served_folder_rewritten_in_place_gets_a_new_folder(server_factory, tmp_path):
    """``transformers serve`` lists the path it serves as ``id`` with ``created: 0`` (its
    ``cli/serving/model_manager.py``): the folder's content keys the cache, as the transformers backend's does."""
    model = _checkpoint(tmp_path / "tiny", b"step-100")
    server = server_factory(models=[{"id": str(model), "object": "model", "created": 0, "owned_by": "local"}])
    items, cache = _items(2), tmp_path / "cache"

    def run():
        return describe_items(OpenAIDescriber(model=str(model), base_url=server.url), items, cache, prompt="Describe.",
                              run=QUIET)

    first = run()
    assert _manifest(first.folder)["fingerprint"] == {
        "method": "server-models", "id": str(model), "created": 0, "owned_by": "local", "folder": str(model),
        "sha256": folder_fingerprint(model)}
    assert first.notes == [] and "weights_note" not in _manifest(first.folder)["run"]
    assert run().folder == first.folder  # the same weights: the same folder
    _checkpoint(model, b"step-200")  # the next checkpoint saved over the last, the server restarted on it
    rewritten = run()
    assert rewritten.folder != first.folder and (rewritten.done, rewritten.skipped_cached) == (2, 0)
    assert _manifest(rewritten.folder)["fingerprint"]["sha256"] == folder_fingerprint(model)


def test_the_servers_root_names_the_folder_when_the_model_is_a_name(server_factory, tmp_path):
    """vLLM lists a local folder it serves under ``--served-model-name M`` as ``root``."""
    model = _checkpoint(tmp_path / "ckpt", b"weights")
    server = server_factory(models=[{"id": "M", "root": str(model) + "/", "owned_by": "vllm"}])
    fingerprint = OpenAIDescriber(model="M", base_url=server.url).fingerprint()
    assert (fingerprint["folder"], fingerprint["sha256"]) == (str(model), folder_fingerprint(model))


def test_a_server_that_reports_nothing_that_follows_the_weights_says_so_once(server_factory, tmp_path, capsys):
    """No folder here, no creation date (0, as ``transformers serve`` lists every model): the summary and the
    manifest say that the cache cannot follow the weights, once, and name --model-tag."""
    server = server_factory(models=[{"id": "M", "object": "model", "created": 0, "owned_by": "local"}])
    command = ["describe", "--backend", "openai", "--model", "M", "--prompt", "general", "--base-url", server.url,
               "--videos", str(DATA / "vtest_frames"), "--cache-dir", str(tmp_path), "--no-progress"]
    assert main(command) == 0
    out, err = capsys.readouterr()
    (line,) = [x for x in (out + err).splitlines() if "cannot follow the weights" in x]
    assert line == (f"  note: the cache cannot follow the weights: {server.url}/models reports id 'M', created 0, "
                    "owned_by 'local' for model 'M', nothing that changes with the weights, and names no folder on "
                    "this machine, so a checkpoint saved over this one would reuse these descriptions; --model-tag "
                    "names the weights (e.g. --model-tag step-1200)")
    (manifest,) = tmp_path.glob("descriptions/*/manifest.json")
    assert json.loads(manifest.read_text())["run"]["weights_note"] == line.removeprefix("  note: ")
    dated = server_factory(models=[_card("Qwen/Qwen2.5-VL-7B-Instruct", 1_700_000_000)])  # a dated checkpoint
    described = OpenAIDescriber(model="M", base_url=dated.url)
    assert "folder" not in described.fingerprint() and described.weights_note is None


def test_one_model_folder_spelled_three_ways_is_one_key_and_one_folder_name(server_factory, tmp_path, monkeypatch):
    """Absolute, relative, with a trailing slash, through a symbolic link: one path in the key, the folder name and
    the record, for the transformers backend and for a server that lists the name it was asked for."""
    from sova_lib.describe.cache import cache_folder
    from sova_lib.describe.runner import describer_fingerprint, plan_run

    model = _checkpoint(tmp_path / "models" / "tiny-qwen2.5-vl", b"weights")
    (tmp_path / "link").symlink_to(model)
    monkeypatch.chdir(tmp_path)
    spellings = [str(model), "models/tiny-qwen2.5-vl", str(model) + "/", "link"]
    server = server_factory(models=spellings)  # as transformers serve lists a model it was asked for by that name

    def keys(make):
        return [plan_run(d, []).key_with(describer_fingerprint(d)) for d in map(make, spellings)]

    local = keys(lambda m: TransformersDescriber(model=m, device="cpu"))
    served = keys(lambda m: OpenAIDescriber(model=m, base_url=server.url))
    for found in (local, served):
        assert all(key == found[0] for key in found[1:])
        assert found[0]["describer"]["model"] == str(model)
        assert cache_folder(tmp_path, found[0]).name.split("__")[0].split("-", 1)[1].startswith("tiny-qwen2.5-vl-")
    assert local[0]["fingerprint"] == {"method": "folder-digest", "sha256": folder_fingerprint(model)}
    assert served[0]["fingerprint"]["id"] == served[0]["fingerprint"]["folder"] == str(model)
    request = DescribeRequest("a", [], "Describe.", None, False, ())
    assert OpenAIDescriber(model="link", base_url=server.url).request_body(request)["model"] == "link"  # the server's own name
