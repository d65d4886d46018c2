"""The description cache folder: key and hash, torn and broken lines, the lock."""
import json

import pytest

from sova_lib.describe.cache import DescriptionCache, cache_folder, cache_key, config_hash
from sova_lib.describe.prompts import resolve_prompt


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
        with pytest.raises(RuntimeError, match="another run is writing"):
            DescriptionCache(tmp_path / "c").open()
    finally:
        first.close()
    DescriptionCache(tmp_path / "c").open().close()  # free again once the first one is closed
