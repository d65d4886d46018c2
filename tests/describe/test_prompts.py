"""The paper's prompt presets (Appendix B) and the resolver."""
import pytest

from sova_lib.describe.prompts import (
    DEFAULT_PROMPT,
    PROMPTS,
    SOVABENCH_SYSTEM_PROMPT,
    Prompt,
    custom_prompt,
    resolve_prompt,
)

SYSTEM = (
    "You are an expert video analysis model specialized in action recognition. Focus on how subjects and "
    "objects change and move over time rather than on static appearances or backgrounds. Infer the actions "
    "by reasoning about motion, temporal progression, and interactions across the video frames."
)
SPATIAL_PAIRS = "List all pairwise spatial relations between objects in the image."
COUNT = ("Describe the image in a short caption that accurately states the number of main objects (in words) "
         "and includes a brief descriptive phrase.")


def test_general_preset_texts():
    p = PROMPTS["general"]
    assert (p.video, p.image, p.system_prompt) == ("Describe this video.", "Describe the image.", None)
    assert p.text_for(True) == "Describe this video." and p.text_for(False) == "Describe the image."


def test_task_aware_sovabench_texts():
    p = PROMPTS["task-aware"]
    assert p.video == "Briefly classify the actions occurring in this video."
    assert p.system_prompt == SYSTEM == SOVABENCH_SYSTEM_PROMPT
    assert resolve_prompt("task-aware") == p


@pytest.mark.parametrize("name, text", [
    ("task-aware-spatialbench", "List all spatial relationships between objects (e.g., position, size, distance, "
                                "or orientation) in short sentences."),
    ("task-aware-vsr", SPATIAL_PAIRS),
    ("task-aware-whatsup", SPATIAL_PAIRS),
    ("task-aware-countbench", COUNT),
    ("task-aware-visual7w-count", COUNT),
])
def test_image_dataset_presets(name, text):
    p = resolve_prompt(name)
    assert (p.name, p.image, p.video, p.system_prompt) == (name, text, text, None)


def test_preset_names_are_exactly_these():
    assert sorted(PROMPTS) == sorted([
        "general", "task-aware", "task-aware-spatialbench", "task-aware-vsr", "task-aware-whatsup",
        "task-aware-countbench", "task-aware-visual7w-count"])


def test_free_text_keeps_the_system_prompt():
    assert resolve_prompt("What moves left?", "Be brief.") == Prompt("custom", "What moves left?",
                                                                      "What moves left?", "Be brief.")
    assert resolve_prompt("What moves left?").system_prompt is None


def test_system_prompt_replaces_a_presets_and_empty_means_none():
    assert resolve_prompt("general", "Be brief.") == Prompt("general", "Describe this video.",
                                                             "Describe the image.", "Be brief.")
    assert resolve_prompt("task-aware", "").system_prompt is None


def test_mistyped_preset_is_an_error_with_a_suggestion():
    with pytest.raises(ValueError, match=r"unknown prompt preset 'genral'\. Did you mean 'general'\?"):
        resolve_prompt("genral")
    with pytest.raises(ValueError, match="empty"):
        resolve_prompt("  ")


def test_a_single_word_of_any_case_is_a_preset_name():
    with pytest.raises(ValueError, match=r"unknown prompt preset 'General'\. Did you mean 'general'\? Presets: "
                                         r"general, task-aware, "):
        resolve_prompt("General")
    with pytest.raises(ValueError, match="unknown prompt preset 'describe'"):
        resolve_prompt("describe")


def test_custom_prompt_is_never_read_as_a_preset_name():
    assert custom_prompt("general") == Prompt("custom", "general", "general", None)
    assert custom_prompt("Describe the cars.", "Be brief.") == resolve_prompt("Describe the cars.", "Be brief.")
    assert resolve_prompt(custom_prompt("general")) == custom_prompt("general")  # a Prompt stays as it is
    assert resolve_prompt(PROMPTS["general"], "") == PROMPTS["general"]
    assert resolve_prompt() == PROMPTS[DEFAULT_PROMPT] == PROMPTS["general"]
    with pytest.raises(ValueError, match="empty"):
        custom_prompt(" ")


def _manifest_prompt(folder):
    import json

    manifest = json.loads((folder / "manifest.json").read_text())
    return manifest["prompt"], manifest["system_prompt"], manifest["config_hash"]


@pytest.mark.parametrize("cli, python", [
    ([], {}),  # no prompt: the general preset on both sides
    (["--prompt", "general"], {"prompt": "general"}),
    (["--prompt", "task-aware", "--system-prompt", ""], {"prompt": resolve_prompt("task-aware", "")}),
    (["--prompt", "What moves left?", "--system-prompt", "Be brief."],
     {"prompt": custom_prompt("What moves left?", "Be brief.")}),
])
def test_the_command_line_and_describe_items_resolve_a_prompt_alike(tmp_path, cli, python):
    """``sova describe`` and ``describe_items`` on the same clips write the same key: same prompt fields, one folder."""
    from sova_lib.benchmarks.excerpts import QUICKSTART_INPUT, example_clips
    from sova_lib.cli import main
    from sova_lib.describe.contract import make_describer
    from sova_lib.describe.run_cache import RunOptions
    from sova_lib.describe.runner import describe_items

    assert main(["describe", "--backend", "motion", "--protocol", "quickstart-direction", *cli,
                 "--cache-dir", str(tmp_path / "cli"), "--no-progress"]) == 0
    (by_cli,) = (tmp_path / "cli" / "descriptions").iterdir()
    by_python = describe_items(make_describer("motion"), [clip.item() for clip in example_clips()], tmp_path / "py",
                               input_name=QUICKSTART_INPUT, run=RunOptions(show_progress=False, verbose=False),
                               **python).folder
    assert by_cli.name == by_python.name
    assert _manifest_prompt(by_cli) == _manifest_prompt(by_python)
