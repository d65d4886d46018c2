"""The description cache folder: key and hash, torn and broken lines, the lock."""
import json
from pathlib import Path

import pytest

from sova_lib.describe.cache import CacheLockedError, DescriptionCache, cache_folder, cache_key
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.describe.provenance import config_hash


def test_key_hash_and_folder_name(tmp_path):
    key = cache_key("openai", {"model": "org/Some Model", "temperature": 0}, resolve_prompt("general"), 1,
                    sampler_version="1", crop_source="clip-files")
    assert sorted(key) == ["backend", "crop_source", "describer", "fps", "prompt", "sampler_version", "system_prompt"]
    assert key["fps"] == 1.0 and isinstance(key["fps"], float)
    digest = config_hash(key)
    assert len(digest) == 12 and int(digest, 16) >= 0
    assert config_hash(dict(reversed(list(key.items())))) == digest  # key order does not matter
    assert config_hash({**key, "crop_source": "manifest:abc"}) != digest
    folder = cache_folder(tmp_path, key)
    assert folder == tmp_path / "descriptions" / f"openai-Some-Model-general-1fps__{digest}"
    with pytest.raises(ValueError, match="secrets must never be written"):
        cache_key("openai", {"model": "m", "headers": {"Authorization": "Bearer x"}}, resolve_prompt("general"), 1)


def test_records_errors_and_manifest_round_trip(tmp_path):
    cache = DescriptionCache(tmp_path / "c").open()
    try:
        cache.add(1, "a car turns left")
        cache.add_error(2, "VideoError: broken")
        cache.add_error(1, "late failure of an item already described")
        cache.write_manifest({"counts": {"done": 1}})
    finally:
        cache.close()
    again = DescriptionCache(tmp_path / "c").open()
    try:
        assert again.done == {1: "a car turns left"} and again.failures == {2: "VideoError: broken"}
        assert again.manifest() == {"counts": {"done": 1}}
    finally:
        again.close()
    errors = [json.loads(line) for line in (tmp_path / "c" / "errors.jsonl").read_text().splitlines()]
    assert [e["id"] for e in errors] == [2, 1] and all("time" in e for e in errors)


def test_broken_line_in_the_middle_is_reported(tmp_path):
    cache = DescriptionCache(tmp_path / "c")
    (tmp_path / "c").mkdir()
    cache.descriptions_path.write_text('{"id": 1, "text": "a"}\n{"id": 2, "te\n{"id": 3, "text": "c"}\n')
    with pytest.raises(ValueError, match=r"descriptions\.jsonl, line 2: broken record"):
        cache.open()


def test_a_second_run_on_the_same_folder_is_refused(tmp_path):
    first = DescriptionCache(tmp_path / "c").open()
    try:
        with pytest.raises(CacheLockedError, match="another run is writing"):
            DescriptionCache(tmp_path / "c").open()
    finally:
        first.close()
    DescriptionCache(tmp_path / "c").open().close()  # free again once the first one is closed


def test_the_runner_import_and_the_synthetic_demonstration_write_one_manifest_schema(tmp_path):
    """The three ways a description cache is made all go through ``open_cache``: same manifest keys."""
    from sova_lib.cli import main
    from sova_lib.describe.item import Item
    from sova_lib.describe.run_cache import RunOptions
    from sova_lib.describe.runner import LocalEngine, describe_items
    from tests.synthetic_cache import write_synthetic_cache

    class Constant:
        name, max_batch_size, max_concurrency = "constant", 4, 1

        def config(self):
            return {"model": "constant"}

        def describe(self, requests):
            return ["A car turns." for _ in requests]

    run = describe_items(Constant(), [Item(k, Path(f"{k}.mp4")) for k in range(3)], tmp_path / "a",
                         prompt="Say it.", engine=LocalEngine(lambda item, fps: ([], [], True)),
                         run=RunOptions(show_progress=False, verbose=False)).folder
    authors = tmp_path / "authors.json"
    authors.write_text(json.dumps({"0": "A car turns.", "1": "A car stops."}))
    assert main(["import", "--authors-json", str(authors), "--cache-dir", str(tmp_path / "b"), "--backend",
                 "transformers", "--model", "some/model", "--prompt", "general", "--fps", "1"]) == 0
    (imported,) = (tmp_path / "b" / "descriptions").iterdir()
    synthetic = write_synthetic_cache(tmp_path / "c", {0: "a", 1: "b"}, description="two letters")
    manifests = {name: json.loads((folder / "manifest.json").read_text())
                 for name, folder in [("run", run), ("import", imported), ("synthetic", synthetic)]}
    base = {"schema", "backend", "describer", "prompt", "system_prompt", "fps", "sampler_version", "crop_source",
            "config_hash", "hash_fields", "model", "revision", "source", "source_details", "versions", "device",
            "counts", "created", "updated"}
    for name, m in manifests.items():
        assert base <= set(m), (name, base - set(m))
        assert m["source"] == name and m["schema"] == 1
        assert set(m) - base <= {"run", "max_answer_chars", "started", "last_run", "runs",
                                    "throughput_items_per_s", "fingerprint"}
    assert manifests["import"]["counts"] == {"done": 2, "failed": 0}
    assert manifests["synthetic"]["source_details"] == {"description": "two letters"}
    assert manifests["import"]["source_details"]["imported_from"]["file"] == "authors.json"


def test_a_whole_last_record_without_its_line_end_is_kept_and_a_torn_one_cut(tmp_path, capsys):
    folder = tmp_path / "c"
    folder.mkdir()
    whole = '{"id": 1, "text": "a car"}\n{"id": 2, "text": "a bus"}'
    (folder / "descriptions.jsonl").write_text(whole)
    cache = DescriptionCache(folder).open()
    try:
        assert cache.done == {1: "a car", 2: "a bus"}
        cache.add(3, "a van")
    finally:
        cache.close()
    assert (folder / "descriptions.jsonl").read_text() == whole + '\n{"id": 3, "text": "a van"}\n'
    assert capsys.readouterr().err == ""  # nothing was cut
    with open(folder / "descriptions.jsonl", "a") as f:
        f.write('{"id": 4, "text": "a tr')  # torn by a kill
    cache = DescriptionCache(folder).open()
    cache.close()
    assert (folder / "descriptions.jsonl").read_text() == whole + '\n{"id": 3, "text": "a van"}\n'
    assert capsys.readouterr().err == (f"sova: {folder / 'descriptions.jsonl'}: cut off an incomplete last line "
                                       "(23 bytes) left by an interrupted run\n")


def test_duplicates_follow_the_rule_evaluate_follows(tmp_path):
    """The same id with the same text counts once; with another text both readers refuse, naming both lines."""
    from sova_lib.item_vectors import read_descriptions

    folder = tmp_path / "c"
    folder.mkdir()
    path = folder / "descriptions.jsonl"
    path.write_text('{"id": 1, "text": "a car"}\n{"id": 2, "text": "a bus"}\n{"id": 1, "text": "a car"}\n')
    with DescriptionCache(folder).open() as cache:
        assert cache.done == {1: "a car", 2: "a bus"}
    assert read_descriptions(folder) == {1: "a car", 2: "a bus"}
    path.write_text(path.read_text() + '{"id": 2, "text": "a van"}\n')
    expected = (f"{path}, line 4: id 2 appears again with a different text (first at {path}, line 2); keep one of "
                "the two, then run again")
    with pytest.raises(ValueError) as described:
        DescriptionCache(folder).open()
    with pytest.raises(ValueError) as evaluated:
        read_descriptions(folder)
    assert str(described.value) == str(evaluated.value) == expected
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:3]))  # one of the two kept, as it says
    with DescriptionCache(folder).open() as cache:  # and the refusal left the lock free
        assert cache.done == {1: "a car", 2: "a bus"}
