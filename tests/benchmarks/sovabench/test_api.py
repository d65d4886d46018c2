"""``sova_lib.benchmarks.sovabench``'s functions, as the command and the notebooks call them: each score records
what it scored without being told again, and prints itself as the command does."""
import json

import pytest

from sova_lib.benchmarks import sovabench
from tests.paths import ROOT

QUICKSTART = next((ROOT / "cache" / "descriptions").glob("quickstart-motion-classical-motion-general-2fps__*"))


def test_a_baseline_records_itself():
    result = sovabench.evaluate_files("intra-pair", baseline="prevalence", bootstrap=0)
    record = result.to_record()
    # 50.31: the prevalence row of docs/sovabench.md (Pair-mAP, query counted in both)
    assert (record["kind"], record["source"], record["baseline"], record["value"]) == ("baseline", "prevalence",
                                                                                       "prevalence", 50.31)
    assert record["benchmark"] == "SOVABench" and record["encoder"] is None and record["seed"] == 0
    assert "a random ranking scores" in result.text() and "a random ranking" not in result.text(chance=False)


def test_descriptions_record_their_cache_encoder_and_split(encoder):
    whole = sovabench.evaluate_files("quickstart-direction", descriptions=QUICKSTART, encoder=encoder, sentences=False)
    split = sovabench.evaluate_files("quickstart-direction", descriptions=QUICKSTART, encoder=lambda: encoder)
    assert round(split.value, 2) == 58.89  # the README's quickstart score
    for result, text_split in ((whole, "whole text"), (split, "sentences")):
        record = result.to_record()
        assert (record["kind"], record["cache"], record["encoder"], record["text_split"]) == (
            "description cache", QUICKSTART.name, "all-MiniLM-L6-v2", text_split)
    # the record's fields may still be given, as for any result
    assert split.to_record(seed=7)["seed"] == 7


def test_clips_of_a_file_or_a_protocol_and_nothing_else(tmp_path):
    assert len(sovabench.clips_of("intra-pair")) == 2300
    with pytest.raises(ValueError, match="--tsv intrapair: no such file .or give a protocol: inter-pair,"):
        sovabench.clips_of("intrapair")  # the name of a packaged TSV is no protocol


def test_the_first_clips_all_missing_is_a_wrong_video_root(tmp_path):
    with pytest.raises(ValueError, match=f"--video-root {tmp_path}: the first 5 items all miss their video"):
        sovabench.items(tmp_path, protocol="intra-pair")


def test_import_reads_the_authors_object_and_refuses_json_lines(tmp_path):
    from sova_lib.describe.prompts import resolve_prompt

    path = tmp_path / "authors.json"
    path.write_text(json.dumps({"3": "A car stops.", "x": "not an index"}))
    options = {"backend": "transformers", "model": "m", "prompt": resolve_prompt("general"), "fps": 1.0}
    folder, added, texts, notes = sovabench.import_authors(path, tmp_path / "cache", **options)
    assert added == 2 and texts == {3: "A car stops.", "x": "not an index"}
    assert notes == [f"{path}: 1 key(s) are not benchmark indices (e.g. ['x']); they are imported as text ids, "
                     "which no SOVABench protocol scores"]
    assert sovabench.import_authors(path, tmp_path / "cache", **options)[:2] == (folder, 0)  # nothing new
    path.write_text('{"3": "a"}\n{"4": "b"}\n')
    with pytest.raises(ValueError, match=r"line 2: a second JSON value after the first; this looks like JSON Lines"):
        sovabench.import_authors(path, tmp_path / "cache", **options)
