"""``sova sovabench evaluate`` says how many descriptions are empty (``sova_lib.item_vectors.empty_note``)."""
import json

from sova_lib.cli import main
from sova_lib.evaluation import oracle_texts
from sova_lib.item_vectors import empty_note


def test_empty_note_counts_and_names_ids():
    assert empty_note({1: "a car", 2: "b"}) == []
    assert empty_note({1: "a car", 2: "", 3: " \n"}) == [
        "2 of 3 descriptions are empty or whitespace only (ids 2, 3): the describer gave no text for them"]
    many = {i: "" for i in range(7)}
    assert "(ids 0, 1, 2, 3, 4, ...)" in empty_note(many)[0]


def test_evaluate_prints_a_note_for_empty_descriptions(capsys, tmp_path):
    texts = oracle_texts("intra-pair")
    first, second = sorted(texts)[:2]
    texts[first], texts[second] = "", "  "
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in texts.items()))
    code = main(["sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", str(path),
                 "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert code == 0
    assert (f"  note: 2 of 2300 descriptions are empty or whitespace only (ids {first}, {second}): "
            "the describer gave no text for them") in err.splitlines()
