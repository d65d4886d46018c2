"""The items of a run from what names them: a folder lists its video and image files (not its sub-folders, nothing
else), a glob takes what it matches, ids are file stems and must be unique."""
import pytest

from sova_lib.benchmarks.inputs import media_items, run_items


def test_a_folder_gives_its_video_and_image_files_and_a_glob_what_it_matches(tmp_path):
    for name in ("b.mp4", "a.PNG", "notes.txt", "sub/c.mp4"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    assert [(item.id, item.path.name, item.video) for item in media_items(str(tmp_path))] == [
        ("a", "a.PNG", False), ("b", "b.mp4", True)]
    assert [item.id for item in media_items(str(tmp_path / "**" / "*.mp4"))] == ["b", "c"]
    assert [item.id for item in media_items(str(tmp_path / "*.txt"))] == ["notes"]  # a glob takes any file
    items, source = run_items(videos=str(tmp_path))
    assert len(items) == 2 and source == {"crop_source": "none"}


def test_no_file_or_two_files_of_one_id_is_one_line(tmp_path):
    with pytest.raises(ValueError, match=r"^--videos '.*' matches no video or image file$"):
        media_items(str(tmp_path))
    (tmp_path / "a.mp4").write_bytes(b"x")
    (tmp_path / "a.png").write_bytes(b"x")
    with pytest.raises(ValueError, match=r"have the same id 'a'; ids are file stems$"):
        media_items(str(tmp_path))


def test_the_bundled_excerpts_and_their_reversed_copies():
    items, source = run_items(protocol="quickstart-direction")
    assert len(items) == 6 and source["crop_source"] == "none"
    assert sum(str(item.id).endswith("-reversed") for item in items) == 3
