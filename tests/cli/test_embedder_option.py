"""``--embedder-option KEY=VALUE``: the sentence encoder's settings on every command that embeds sentences."""
import json

import pytest

from sova_lib.cli import main
from sova_lib.protocols import get_protocol
from tests.tiny_encoder import build_remote_code_encoder


@pytest.fixture(scope="module")
def remote_folder(tmp_path_factory):
    """The tiny encoder whose modeling code is a file of its folder (``tests.tiny_encoder``), with a named prompt."""
    from transformers import dynamic_module_utils

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dynamic_module_utils, "HF_MODULES_CACHE", str(tmp_path_factory.mktemp("hf-modules")))
        yield str(build_remote_code_encoder(tmp_path_factory.mktemp("encoder") / "tiny-remote",
                                            prompts={"STS": "task: sentence similarity | query: "}))


@pytest.fixture
def descriptions(tmp_path):
    """A JSONL of descriptions of the quickstart protocol's six clips."""
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": f"Clip {k}. A car turns {'left' if k % 2 else 'right'}."})
                            + "\n" for k, i in enumerate(get_protocol("quickstart-direction").ids())))
    return str(path)


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sovabench_evaluate_loads_a_remote_code_encoder_only_with_the_option(capsys, tmp_path, remote_folder,
                                                                            descriptions):
    base = ["sovabench", "evaluate", "--protocol", "quickstart-direction", "--descriptions", descriptions,
            "--embedder", remote_folder, "--cache-dir", str(tmp_path / "c"), "--bootstrap", "0", "--json"]
    code, out, err = _run(capsys, *base)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("sova: error: sentence encoder")
    assert "--embedder-option trust_remote_code=true" in err
    code, out, err = _run(capsys, *base, "--embedder-option", "trust_remote_code=true")
    assert code == 0, err
    assert json.loads(out)["n_queries"] == 6
    code, out, err = _run(capsys, *base, "--embedder-option", "trust_remote_code=true",
                          "--embedder-option", "prompt_name=STS")
    assert code == 0, err
    # two settings, two vector folders (besides the digests memo)
    folders = sorted(p.name for p in (tmp_path / "c" / "embeddings").iterdir() if p.is_dir())
    assert len(folders) == 2 and all(f.startswith("tiny-remote__") for f in folders)


def test_compare_takes_the_option_too(capsys, tmp_path, remote_folder, descriptions):
    base = ["compare", "--protocol", "quickstart-direction", descriptions, descriptions, "--embedder", remote_folder,
            "--cache-dir", str(tmp_path / "c"), "--bootstrap", "0", "--json"]
    code, _, err = _run(capsys, *base)
    assert code == 2 and err.count("\n") == 1 and "--embedder-option trust_remote_code=true" in err
    code, out, err = _run(capsys, *base, "--embedder-option", "trust_remote_code=true")
    assert code == 0, err
    assert json.loads(out)["difference"] == 0  # one input against itself


@pytest.mark.parametrize("setting, error", [
    ("colour=red", "unknown key 'colour'; the keys: trust_remote_code, prompt_name, prompt"),
    ("prompt_name", "'prompt_name' is not KEY=VALUE; the keys: trust_remote_code, prompt_name, prompt"),
    ("trust_remote_code=yes", "trust_remote_code=yes is neither true nor false"),
    ("dtype=float16", "dtype=float16 is not one of float32, bfloat16"),
    ('prompt="unclosed', "prompt=\"unclosed starts with a quote but is not a JSON string"),
])
def test_a_setting_that_is_not_one_gets_one_line(capsys, setting, error):
    code, out, err = _run(capsys, "sovabench", "evaluate", "--protocol", "quickstart-direction", "--baseline",
                          "oracle", "--embedder-option", setting)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("sova: error: sova sovabench evaluate: argument --embedder-option: ") and error in err, err


def test_settings_reach_the_encoder_as_keywords():
    from sova_lib.cli import build_parser
    from sova_lib.cli.options import encoder_options

    args = build_parser("muvr").parse_args(
        ["muvr", "evaluate", "--data", ".", "--baseline", "random-ranking", "--embedder-option", "trust_remote_code=TRUE",
         "--embedder-option", 'prompt="Instruct: similar text\\nQuery: "', "--embedder-option", "prompt=a=b: c"])
    assert encoder_options(args) == {"trust_remote_code": True, "prompt": "a=b: c"}  # the last of a key wins
    args = build_parser("image-tasks").parse_args(
        ["image-tasks", "evaluate", "--task", "vsr-random", "--baseline", "random", "--embedder-option",
         'prompt="Instruct: similar text\\nQuery: "'])
    assert encoder_options(args) == {"prompt": "Instruct: similar text\nQuery: "}
    args = build_parser("sovabench").parse_args(
        ["sovabench", "evaluate", "--protocol", "quickstart-direction", "--baseline", "oracle", "--embedder-option",
         "dtype=bfloat16"])
    assert encoder_options(args) == {"dtype": "bfloat16"}


def test_dtype_bfloat16_makes_its_own_vector_folder(capsys, tmp_path, descriptions):
    base = ["sovabench", "evaluate", "--protocol", "quickstart-direction", "--descriptions", descriptions,
            "--cache-dir", str(tmp_path / "c"), "--bootstrap", "0", "--json"]
    runs = [_run(capsys, *base), _run(capsys, *base, "--embedder-option", "dtype=bfloat16")]
    assert [code for code, _, _ in runs] == [0, 0], runs
    folders = sorted((tmp_path / "c" / "embeddings").glob("all-MiniLM-L6-v2__*/encoder.json"))
    assert [json.loads(f.read_text()).get("dtype") for f in folders] in ([None, "bfloat16"], ["bfloat16", None])
