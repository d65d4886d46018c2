"""Still images have no frame rate: ``sova image-tasks describe`` and ``embed`` take no ``--fps``, and their cache
folders keep the key they had when ``--fps`` was shown (its default, 1 frame per second, is recorded)."""
import json

import pytest
from PIL import Image

from sova_lib.cli import main
from sova_lib.describe import contract
from sova_lib.describe.cache import cache_folder, cache_key
from sova_lib.describe.prompts import resolve_prompt


class StillBackend:
    """Names the image it was given (one frame): enough to see which folder a run writes."""

    name = "still"
    max_batch_size, max_concurrency = 2, 1

    def __init__(self, model):
        self.model = model

    def config(self):
        return {"model": self.model}

    def describe(self, requests):
        return [f"{len(r.frames)} frame" for r in requests]


#: The folder of the run below as the image commands named it while they still showed --fps (default 1): written
#: by a run of that parser and pinned here, so that any change of the key (fps None or 2, ...) fails. It changes,
#: rightly, only with the task-aware-vsr prompt's text, sova_lib.video.SAMPLER_VERSION or the input's name
#: (``image-tasks``, part of the key and the folder's first word since folders name what they hold).
PINNED = "image-tasks-still-tiny-vlm-task-aware-vsr-1fps__cd9e7788b7ed"


@pytest.fixture
def images(tmp_path, monkeypatch):
    monkeypatch.setitem(contract.DESCRIBERS, "still", f"{__name__}:StillBackend")
    folder = tmp_path / "images"
    folder.mkdir()
    for stem in ("000000000007", "000000000042"):
        Image.new("RGB", (16, 12), (30, 60, 90)).save(folder / f"{stem}.jpg")
    return folder


def _describe(command, *argv):
    """``sova <command...> --backend still ...`` with ``argv`` after the describer options."""
    return main([*command.split(), "--backend", "still", "--model", "org/tiny-vlm", "--prompt", "task-aware-vsr",
                 "--no-progress", *map(str, argv)])


def test_the_image_describe_folder_keeps_its_key(images, tmp_path):
    cache = tmp_path / "cache"
    assert _describe("image-tasks describe", "--images", images, "--cache-dir", cache) == 0
    (folder,) = (cache / "descriptions").iterdir()
    assert folder.name == PINNED
    # cross-check: the key of the same run built by hand, fps 1.0 (the former default of --fps)
    key = cache_key("still", {"model": "org/tiny-vlm"}, resolve_prompt("task-aware-vsr"), 1.0, crop_source="none",
                    input_name="image-tasks")
    assert folder == cache_folder(cache, key)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["fps"] == 1.0
    texts = {json.loads(x)["id"]: json.loads(x)["text"] for x in (folder / "descriptions.jsonl").read_text().splitlines()}
    assert texts == {7: "1 frame", 42: "1 frame"}


@pytest.mark.parametrize("verb", ["describe", "embed"])
def test_the_image_commands_show_no_frame_rate(verb, capsys):
    assert main(["image-tasks", verb, "--help"]) == 0
    text = capsys.readouterr().out
    assert "--images" in text and "--fps" not in text and "frames sampled per second" not in text
    # the same words in the commands that read videos: the check above is not vacuous
    assert main([verb, "--help"]) == 0
    assert "--fps F" in capsys.readouterr().out


def test_the_image_command_refuses_fps(images, tmp_path, capsys):
    assert _describe("image-tasks describe", "--images", images, "--cache-dir", tmp_path / "c", "--fps", 2) == 2
    err = capsys.readouterr().err
    assert err == ("sova: error: sova image-tasks describe: unrecognized arguments: --fps 2; "
                   "see 'sova image-tasks describe --help'\n")
    assert not (tmp_path / "c").exists()
