"""Bad input gets one line on stderr naming the file, line or id, exit status 2 and no traceback;
odd but accepted input gets a one-line note. One test per case."""
import json

import numpy as np
import pytest

from sova_lib.cli import main
from sova_lib.evaluation import oracle_texts
from sova_lib.protocols import get_protocol


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _error_line(err):
    """The single 'sova: error:' line of stderr."""
    lines = [x for x in err.splitlines() if x.startswith("sova: error:")]
    assert len(lines) == 1, err
    return lines[0]


def _npz(path, **arrays):
    np.savez(path, **arrays)
    return path


def _import_argv(src, tmp_path, *extra):
    return ["import", "--authors-json", src, "--cache-dir", tmp_path / "cache", "--backend", "transformers",
            "--model", "m", "--prompt", "general", *extra]


# --------------------------------------------------------------------------- errors: exit 2, one line


def test_allow_missing_with_a_file_that_covers_no_clip(capsys, tmp_path):
    path = _npz(tmp_path / "other.npz", ids=np.array([90000001, 90000002]), owner=np.arange(2),
                vectors=np.eye(2))
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--embeddings", path, "--allow-missing")
    line = _error_line(err)
    assert code == 2 and "covers none of the 2300 clips of protocol 'intra-pair'" in line and "90000001" in line


def test_negative_bootstrap_in_evaluate(capsys):
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--baseline", "prevalence", "--bootstrap", -5)
    assert code == 2 and "argument --bootstrap: -5 is negative; give 0 or more" in _error_line(err)


def test_negative_bootstrap_in_reproduce(capsys, tmp_path):
    code, _, err = _run(capsys, "reproduce", "--out", tmp_path / "fig", "--bootstrap", -5, "--skip-notebooks")
    assert code == 2 and "argument --bootstrap: -5 is negative" in _error_line(err)
    assert not (tmp_path / "fig").exists()


def test_reproduce_with_a_missing_notebook_folder_writes_nothing(capsys, tmp_path):
    code, _, err = _run(capsys, "reproduce", "--out", tmp_path / "fig", "--notebooks", tmp_path / "nonexist")
    assert code == 2 and f"--notebooks {tmp_path / 'nonexist'}: no such folder" in _error_line(err)
    assert not (tmp_path / "fig").exists()


def test_descriptions_that_are_not_utf8(capsys, tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"id": 0, "text": "ok"}\n{"id": 1, "text": "caf\u00e9"}\n'.encode("latin-1"))
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", path)
    assert code == 2 and f"{path}, line 2: byte 0xe9 is not UTF-8 text" in _error_line(err)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_vectors_with_nan_or_inf_name_file_and_id(capsys, tmp_path, bad):
    vectors = np.ones((3, 4))
    vectors[2, 1] = bad
    path = _npz(tmp_path / "v.npz", ids=np.array([7, 8, 9]), owner=np.arange(3), vectors=vectors)
    with np.errstate(all="raise"):  # and no RuntimeWarning on the way
        code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--embeddings", path)
    line = _error_line(err)
    assert code == 2 and str(path) in line and "row 2, of id 9" in line and "NaN or inf" in line


def test_one_dimensional_vectors(capsys, tmp_path):
    path = _npz(tmp_path / "flat.npz", ids=np.array([1, 2]), owner=np.arange(2), vectors=np.ones(2))
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--embeddings", path)
    assert code == 2 and f"{path}: vectors must be a 2-D numeric array" in _error_line(err)


def test_a_text_file_named_npz(capsys, tmp_path):
    path = tmp_path / "notes.npz"
    path.write_text("ids,owner,vectors\n1,0,0.5\n")
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--embeddings", path)
    line = _error_line(err)
    assert code == 2 and f"{path}: not an .npz archive" in line and "pickle" not in line


def test_import_given_json_lines(capsys, tmp_path):
    src = tmp_path / "d.jsonl"
    src.write_text('{"id": 1, "text": "a"}\n{"id": 2, "text": "b"}\n')
    code, _, err = _run(capsys, *_import_argv(src, tmp_path, "--fps", 1))
    line = _error_line(err)
    assert code == 2 and f"{src}, line 2:" in line and "looks like JSON Lines" in line
    assert not (tmp_path / "cache").exists()


# --------------------------------------------------------------------------- accepted, with a note


def test_blank_answers_at_evaluation_get_a_note(capsys, tmp_path):
    texts = oracle_texts("intra-pair")
    first, second = list(texts)[:2]
    texts[first], texts[second] = "", "  \n "
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in texts.items()))
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", path,
                        "--cache-dir", tmp_path / "cache")
    assert code == 0
    assert f"note: 2 of 2300 descriptions are empty or whitespace only (ids {first!r}, {second!r})" in err


def test_plan_with_an_empty_annotation_folder_gets_a_note(capsys, tmp_path):
    (tmp_path / "ann").mkdir()
    code, _, err = _run(capsys, "sovabench", "clips", "plan", "--tsv", "intra-pair", "--annotations", tmp_path / "ann",
                        "--out", tmp_path / "m.tsv", "--no-index", "--no-progress")
    assert code == 0
    assert f"--annotations {tmp_path / 'ann'}: none of the 2300 rows got a clip; it holds no KPF annotation" in err


def test_bootstrap_of_one_resample_gets_a_note(capsys):
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "intra-pair", "--baseline", "prevalence",
                        "--bootstrap", 1)
    assert code == 0 and "sova: note: --bootstrap 1 resamples the queries once: the interval has zero width" in err


def test_embedder_with_embeddings_gets_a_note(capsys, tmp_path):
    ids = get_protocol("inter-pair-constrained").ids()
    rng = np.random.default_rng(0)
    path = _npz(tmp_path / "v.npz", ids=ids, owner=np.arange(ids.size), vectors=rng.normal(size=(ids.size, 4)))
    code, _, err = _run(capsys, "sovabench", "evaluate", "--protocol", "inter-pair-constrained", "--embeddings", path,
                        "--embedder", "some/model")
    assert code == 0 and "sova: note: --embedder does not apply to --embeddings" in err


def test_protocol_with_videos_is_refused_by_the_parser(capsys, tmp_path):
    """Two item sources: refused while parsing (they are one mutually exclusive group), nothing written."""
    code, _, err = _run(capsys, "describe", "--backend", "motion", "--videos", tmp_path,
                        "--protocol", "quickstart-direction", "--cache-dir", tmp_path / "cache")
    assert code == 2 and "argument --protocol: not allowed with argument --videos" in _error_line(err)
    assert not (tmp_path / "cache").exists()


def test_import_of_a_text_id_gets_a_note(capsys, tmp_path):
    src = tmp_path / "a.json"
    src.write_text(json.dumps({"3": "A car turns.", "abc": "A person walks."}))
    code, _, err = _run(capsys, *_import_argv(src, tmp_path, "--fps", 1))
    assert code == 0
    assert f"sova: note: {src}: 1 key(s) are not benchmark indices (e.g. ['abc'])" in err


def test_import_without_fps_gets_a_note(capsys, tmp_path):
    src = tmp_path / "a.json"
    src.write_text(json.dumps({"3": "A car turns."}))
    code, _, err = _run(capsys, *_import_argv(src, tmp_path))
    assert code == 0 and "sova: note: --fps not given; the import records 1 frame per second" in err
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    assert json.loads((folder / "manifest.json").read_text())["fps"] == 1.0


def test_a_packaged_split_name_is_no_protocol_of_clips_plan(capsys, tmp_path):
    (tmp_path / "ann").mkdir()
    code, _, err = _run(capsys, "sovabench", "clips", "plan", "--tsv", "intrapair", "--annotations", tmp_path / "ann",
                        "--out", tmp_path / "m.tsv", "--no-index", "--no-progress")
    # the name of a packaged TSV is no protocol: the protocols' names are inter-pair, intra-pair, ...
    assert code == 2 and "--tsv intrapair: no such file (or give a protocol: inter-pair," in _error_line(err)


# --------------------------------------------------------------------------- every command: checked first, then notes

#: One refused input per command, each given with an option that draws a note when the input is fine (``--model``
#: for the motion backend, ``--fps`` left out of an import, ``--bootstrap 1``, ``--embedder`` with vectors,
#: ``--no-split`` with vectors, ``--workers`` without ``--engine``): the note must not come before the refusal.
REFUSALS = {
    "import": ["import", "--authors-json", "{jsonl}", "--cache-dir", "{tmp}/c", "--backend", "transformers",
               "--model", "m", "--prompt", "general"],
    "describe": ["describe", "--backend", "motion", "--model", "x", "--videos", "{empty}", "--cache-dir", "{tmp}/c"],
    "describe (ray implied)": ["describe", "--backend", "motion", "--model", "x", "--workers", "2", "--videos",
                               "{empty}", "--cache-dir", "{tmp}/c"],
    "embed": ["embed", "--videos", "{empty}", "--model", "x", "--cache-dir", "{tmp}/c"],
    "compare": ["compare", "--protocol", "intra-pair", "--no-split", "{npz}", "{npz}"],
    "reproduce": ["reproduce", "--bootstrap", "1", "--notebooks", "{empty}"],
    "sovabench clips plan": ["sovabench", "clips", "plan", "--tsv", "{tmp}/none.tsv", "--annotations", "{empty}",
                             "--out", "{tmp}/m.tsv"],
    "sovabench clips extract": ["sovabench", "clips", "extract", "--manifest", "{jsonl}", "--video-root", "{empty}",
                                "--out", "{tmp}/clips"],
    "sovabench clips stats": ["sovabench", "clips", "stats", "--manifest", "{jsonl}"],
    "sovabench describe": ["sovabench", "describe", "--backend", "motion", "--model", "x", "--protocol", "intra-pair",
                           "--video-root", "{empty}", "--cache-dir", "{tmp}/c"],
    "sovabench embed": ["sovabench", "embed", "--protocol", "intra-pair", "--video-root", "{empty}", "--model", "x",
                        "--cache-dir", "{tmp}/c"],
    "sovabench evaluate": ["sovabench", "evaluate", "--protocol", "intra-pair", "--bootstrap", "1", "--embeddings",
                           "{npz}", "--embedder", "x", "--no-split"],
    "image-tasks describe": ["image-tasks", "describe", "--backend", "motion", "--model", "x", "--images", "{empty}",
                             "--cache-dir", "{tmp}/c"],
    "image-tasks embed": ["image-tasks", "embed", "--images", "{empty}", "--model", "x", "--cache-dir", "{tmp}/c"],
    "image-tasks evaluate": ["image-tasks", "evaluate", "--task", "vsr-random", "--bootstrap", "1", "--embeddings",
                             "{npz}", "--embedder", "x"],
    "muvr describe": ["muvr", "describe", "--data", "{empty}", "--video-root", "{empty}", "--backend", "motion",
                      "--model", "x", "--cache-dir", "{tmp}/c"],
    "muvr evaluate": ["muvr", "evaluate", "--data", "{empty}", "--embeddings", "{npz}", "--embedder", "x",
                      "--bootstrap", "1"],
    "vantage describe": ["vantage", "describe", "--task", "vqa", "--items", "{jsonl}", "--backend", "motion",
                         "--model", "x", "--cache-dir", "{tmp}/c"],
    "vantage evaluate": ["vantage", "evaluate", "--task", "vqa", "--items", "{jsonl}", "--answers", "{empty}"],
    "vantage submit": ["vantage", "submit", "--task", "vqa", "--items", "{jsonl}", "--answers", "{empty}",
                       "--model", "m", "--out", "{tmp}/s.jsonl"],
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_every_commands_refused_input_is_exactly_one_line_on_stderr(tmp_path, case):
    """A refused input: exit status 2 and one line on stderr, that line the error (no note, no progress bar)."""
    import os
    import subprocess
    import sys

    from tests.paths import ROOT

    (tmp_path / "empty").mkdir()
    files = {"tmp": tmp_path, "empty": tmp_path / "empty", "jsonl": tmp_path / "d.jsonl", "npz": tmp_path / "v.npz"}
    files["jsonl"].write_text('{"id": 1, "text": "a"}\n{"id": 2, "text": "b"}\n')
    files["npz"].write_text("not an archive\n")
    argv = [a.format(**files) for a in REFUSALS[case]]
    done = subprocess.run([sys.executable, "-m", "sova_lib", *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("sova: error: "), done.stderr


def test_a_note_comes_once_the_input_is_checked(capsys, tmp_path):
    """The same import with a good file: the note about --fps comes, after the command's own output."""
    src = tmp_path / "a.json"
    src.write_text(json.dumps({"3": "A car turns."}))
    code, out, err = _run(capsys, *_import_argv(src, tmp_path))
    assert code == 0 and out.startswith("imported 1 descriptions")
    assert err == "sova: note: --fps not given; the import records 1 frame per second (the paper's rate)\n"


def _command_that(monkeypatch, then):
    """``sova compare`` replaced by a command that logs a library warning while checking its input, then ``then``."""
    import logging

    from sova_lib.cli import compare

    def run(args):
        logging.getLogger("sova_lib.describe.backends.openai").warning(
            "%s reports nothing about the model %r but its name", "http://127.0.0.1:9/v1", "fake-vlm")
        return then()

    monkeypatch.setattr(compare, "run_compare", run)
    return ["compare", "--protocol", "intra-pair", "a", "b"]


@pytest.mark.parametrize("error, code", [(OSError(28, "No space left on device"), 1),
                                         (ValueError("cache/manifest.json: not valid JSON"), 2)])
def test_a_warning_logged_before_a_refusal_is_not_printed(capsys, monkeypatch, error, code):
    def fail():
        raise error

    assert main(_command_that(monkeypatch, fail)) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sova: error: ") and "reports nothing" not in err, err


def test_a_warning_logged_by_a_command_that_goes_on_is_printed_once(capsys, monkeypatch):
    assert main(_command_that(monkeypatch, lambda: 0)) == 0
    assert capsys.readouterr().err == ("sova: warning: http://127.0.0.1:9/v1 reports nothing about the model "
                                       "'fake-vlm' but its name\n")


def test_a_single_problem_is_one_line(capsys, tmp_path, monkeypatch):
    """A prompts file with one id that is no item of the run: the problem is the error line, not printed twice."""
    import sova_lib.cli.compare as compare
    from sova_lib.describe.prompt_file import PromptFileError

    problem = f"{tmp_path / 'p.jsonl'}, line 7: id '9' is no item of this run"

    def fail(args):
        raise PromptFileError(tmp_path / "p.jsonl", [problem])

    monkeypatch.setattr(compare, "run_compare", fail)
    assert main(["compare", "--protocol", "intra-pair", "a", "b"]) == 2
    assert capsys.readouterr().err == f"sova: error: {problem}\n"


@pytest.mark.parametrize("command", [["sources", "--out", "s.tsv"], ["fetch", "--video-root", "videos", "--no-progress"]])
def test_a_missing_clip_list_is_named_once(capsys, tmp_path, command):
    missing = tmp_path / "nope.tsv"
    code, out, err = _run(capsys, "sovabench", "clips", *command, "--tsv", missing)
    assert code == 2 and out == ""
    assert err == (f"sova: error: --tsv {missing}: no such file (or give a protocol: "
                   "inter-pair, inter-pair-constrained, intra-pair, two-class)\n")
