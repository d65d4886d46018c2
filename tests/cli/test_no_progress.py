"""``--no-progress`` means no bar at all: transformers' "Loading weights" bar of a describe run included."""
from sova_lib.cli import main
from sova_lib.video.frames import example_videos


def test_no_progress_silences_the_loading_weights_bar_of_a_transformers_run(tmp_path, capsys):
    from tests.tiny_vlm import build_tiny_qwen2_5_vl

    model = build_tiny_qwen2_5_vl(tmp_path / "tiny-qwen")
    argv = ["describe", "--backend", "transformers", "--model", str(model), "--videos", str(example_videos()[0]),
            "--frames", "2", "--max-new-tokens", "2", "--backend-option", "device=cpu"]
    assert main([*argv, "--cache-dir", str(tmp_path / "shown")]) == 0
    assert "Loading weights" in capsys.readouterr().err  # the bar this option silences is drawn without it
    assert main([*argv, "--cache-dir", str(tmp_path / "quiet"), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "Loading weights" not in err and "%|" not in err and "described 1," in out
