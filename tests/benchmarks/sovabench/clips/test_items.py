"""Describing clips straight from their source videos through a clip manifest (``sova describe --manifest``)."""
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from sova_lib.benchmarks.sovabench.clips import plan as clips
from sova_lib.benchmarks.sovabench.clips.items import manifest_items
from sova_lib.benchmarks.sovabench.splits import read_tsv
from sova_lib.cli import main
from sova_lib.describe.backends.motion import MotionDescriber
from sova_lib.describe.contract import DescribeRequest
from sova_lib.video.frames import sample_frames
from tests.helpers_video import frame_arrays
from tests.paths import DATA

VTEST = DATA / "vtest"
SOURCE = VTEST / "vtest_excerpt.avi"  # 20 frames, 768 x 576, 10 fps

#: Rows added by hand to the planned ones: the planned window reversed; a window that runs past the
#: video's end (as a ``vehicle_stops`` buffer does near the end of a video) with a region past the
#: right and bottom edges, reversed; one starting at frame 0 with a region past the top-left corner.
EXTRA_ROWS = [
    clips.ManifestRow(9, "rev", "vtest_excerpt", "vehicle_reverses", 2, 17, 426, 159, 665, 320, True, "ok"),
    clips.ManifestRow(10, "edge_rev", "vtest_excerpt", "vehicle_stops", 12, 40, 701, 500, 900, 651, True, "ok"),
    clips.ManifestRow(11, "corner", "vtest_excerpt", "vehicle_starts", 0, 35, -20, -7, 150, 131, False, "ok"),
]
#: Each ok row's source frames (clip order) and crop, worked out by hand from the rules above.
EXPECTED = {
    1: (list(range(2, 18)), (426, 159, 665, 320)),
    9: (list(range(17, 1, -1)), (426, 159, 665, 320)),
    10: (list(range(19, 11, -1)), (701, 500, 768, 576)),
    11: (list(range(0, 20)), (0, 0, 150, 131)),
}


def _decode_all(path):
    """Every frame of ``path`` as RGB arrays, decoded in order with PyAV (no seeking, no sampler)."""
    import av

    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(container.streams.video[0])]


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """The planned vtest manifest plus ``EXTRA_ROWS``, and their clips cut losslessly by ``sova sovabench clips extract``."""
    root = tmp_path_factory.mktemp("manifest")
    rows = list(clips.plan_clips(read_tsv(VTEST / "vtest_excerpt.tsv"), VTEST, cache_dir=False)) + EXTRA_ROWS
    assert [r.status for r in rows[:4]] == ["ok", "region_too_small", "activity_not_found", "annotation_missing"]
    manifest = clips.write_manifest(rows, root / "manifest.tsv")
    code = main(["sovabench", "clips", "extract", "--manifest", str(manifest), "--video-root", str(VTEST),
                 "--out", str(root / "clips"), "--codec", "libx264rgb", "--crf", "0", "--no-progress"])
    assert code == 0
    return root, manifest, rows


def test_rows_become_items_with_window_crop_reversal_and_errors(planned, tmp_path):
    _, manifest, rows = planned
    items, crop_source = manifest_items(manifest, VTEST)
    assert [i.id for i in items] == [r.index for r in rows] == [1, 2, 3, 4, 9, 10, 11]
    by_id = {i.id: i for i in items}
    assert by_id[1].path == SOURCE and by_id[1].video
    assert (by_id[1].window, by_id[1].crop, by_id[1].reverse, by_id[1].error) == ((2, 17), (426, 159, 665, 320),
                                                                                  False, None)
    assert (by_id[10].window, by_id[10].crop, by_id[10].reverse) == ((12, 40), (701, 500, 900, 651), True)
    assert by_id[2].error.startswith("manifest status region_too_small:")
    assert by_id[3].error.startswith("manifest status activity_not_found:")
    assert by_id[4].error.startswith("manifest status annotation_missing:")
    assert re.fullmatch(r"manifest:[0-9a-f]{64}", crop_source)

    # the key covers the ok rows, not their order or the rows without a clip
    assert manifest_items(rows[::-1], VTEST)[1] == crop_source
    assert manifest_items(rows[:4] + rows[5:], VTEST)[1] != crop_source  # row 9 left out
    assert manifest_items([rows[0]] + rows[4:], VTEST)[1] == crop_source  # not-ok rows left out
    assert manifest_items(rows[:-1] + [dataclasses.replace(rows[-1], y2=130)], VTEST)[1] != crop_source

    with pytest.raises(ValueError, match=r"manifest row 2: index 1 appears again \(first at manifest row 0\)"):
        manifest_items(rows[:2] + rows[:1], VTEST)
    gone = clips.ManifestRow(12, "gone", "vtest_gone", "person_walks", 1, 5, 0, 0, 200, 200, False, "ok")
    (item,) = manifest_items([gone], VTEST)[0]
    assert item.error == f"source video vtest_gone (.avi/.mp4/.mkv/.mov) not found under {VTEST}"


@pytest.mark.parametrize("backend", ["pyav", "decord"])
def test_frames_through_the_manifest_equal_the_extracted_clips_frames(planned, backend):
    root, _, rows = planned
    source = _decode_all(SOURCE)
    assert len(source) == 20 and source[0].shape == (576, 768, 3)
    for row in rows:
        if not row.ok:
            continue
        order, (x1, y1, x2, y2) = EXPECTED[row.index]
        clip = root / "clips" / f"{row.video}.mp4"
        for rate in (1.0, 10.0):  # 10 fps: every clip frame (some twice)
            ours = sample_frames(SOURCE, rate, backend=backend, **clips.manifest_frames_args(row))
            cut = sample_frames(clip, rate, backend=backend)
            assert len(ours) == len(cut) > 1
            np.testing.assert_array_equal(ours.indices, cut.indices)
            np.testing.assert_allclose(ours.timestamps, cut.timestamps)
            np.testing.assert_array_equal(ours.source_indices, [order[k] for k in ours.indices])
            for k, (a, b) in enumerate(zip(frame_arrays(ours), frame_arrays(cut))):
                assert a.shape == (y2 - y1, x2 - x1, 3)
                np.testing.assert_array_equal(a, b, err_msg=f"row {row.index}, rate {rate}, frame {k}")
                np.testing.assert_array_equal(a, source[order[ours.indices[k]]][y1:y2, x1:x2])
    # the reversed row's clip is the forward row's clip played backwards: its frame i is forward frame 15 - i
    forward = sample_frames(SOURCE, 10.0, backend=backend, **clips.manifest_frames_args(rows[0]))
    backward = sample_frames(SOURCE, 10.0, backend=backend, **clips.manifest_frames_args(rows[4]))
    forward_of = dict(zip(forward.indices.tolist(), frame_arrays(forward)))
    assert sorted(forward_of) == list(range(16))
    for i, a in zip(backward.indices.tolist(), frame_arrays(backward)):
        np.testing.assert_array_equal(a, forward_of[15 - i])


def _lines(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def test_cli_describes_ok_rows_and_records_the_rest(planned, tmp_path, capsys):
    root, manifest, rows = planned
    gone = clips.ManifestRow(12, "gone", "vtest_gone", "person_walks", 1, 5, 0, 0, 200, 200, False, "ok")
    with_gone = clips.write_manifest([*rows[:5], gone], tmp_path / "with_gone.tsv")  # ok rows 1 and 9
    args = ["sovabench", "describe", "--backend", "motion", "--prompt", "general", "--fps", "2", "--cache-dir",
            str(tmp_path / "cache"), "--manifest", str(with_gone), "--video-root", str(VTEST), "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "described 2, skipped 0 (already cached), failed 4" in out
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    texts = {r["id"]: r["text"] for r in _lines(folder / "descriptions.jsonl")}
    errors = {r["id"]: r["error"] for r in _lines(folder / "errors.jsonl")}
    assert sorted(texts) == [1, 9] and sorted(errors) == [2, 3, 4, 12]
    assert [errors[i].split(":")[0] for i in (2, 3, 4)] == [
        "manifest status region_too_small", "manifest status activity_not_found", "manifest status annotation_missing"]
    assert "vtest_gone" in errors[12] and "not found" in errors[12]

    # the same text as the motion describer gives on the frames of the extracted clip file
    for row in rows[0], rows[4]:
        frames = sample_frames(root / "clips" / f"{row.video}.mp4", 2.0)
        request = DescribeRequest(row.index, frames.images, "unused", None, True, tuple(frames.timestamps))
        assert texts[row.index] == MotionDescriber().describe([request])[0]

    m = json.loads((folder / "manifest.json").read_text())
    assert m["crop_source"] == manifest_items(with_gone, VTEST)[1] != "clip-files"
    assert m["source_details"]["clip_manifest"]["file"] == "with_gone.tsv"
    assert m["source_details"]["clip_manifest"]["rows"] == 6
    assert m["counts"] == {"done": 2, "failed": 4}

    assert main(args) == 0  # resumes: nothing is described twice, the failures are not retried
    assert "described 0, skipped 2 (already cached), failed 0" in capsys.readouterr().out
    assert len(_lines(folder / "descriptions.jsonl")) == 2 and len(_lines(folder / "errors.jsonl")) == 4

    # the full manifest (more ok rows) is another configuration: a new folder
    assert main([*args[:-5], "--manifest", str(manifest), "--video-root", str(VTEST), "--no-progress"]) == 0
    assert len(list((tmp_path / "cache" / "descriptions").iterdir())) == 2


def test_a_stand_in_is_not_cropped_and_the_summary_counts_each_kind_of_failure(planned, tmp_path, capsys):
    """Two rows planned on the 768x576 footage but read from a 320x176 stand-in fail as a size mismatch, with both
    sizes, before any frame is cropped; beside the rows without a clip, the summary counts each kind."""
    from tests.helpers_video import numbered_frames, write_video

    _, _, rows = planned
    videos = tmp_path / "videos"
    videos.mkdir()
    (videos / SOURCE.name).symlink_to(SOURCE)
    standin = write_video(videos / "vtest_standin.avi", numbered_frames(20, 320, 176), 10.0, codec="mpeg4")
    extra = [dataclasses.replace(rows[0], index=20 + k, video=f"standin_{k}", source_video="vtest_standin",
                                 x1=x1, x2=x1 + 200) for k, x1 in enumerate((0, 300))]
    manifest = clips.write_manifest([*rows[:4], *extra], tmp_path / "standin.tsv")
    refusal = (f"{standin}: the video is 320x176, but its annotated boxes reach 500x320: it is not the annotated "
               "video (a stand-in or a resized copy?); put the original under --video-root")
    assert [i.error for i in manifest_items(manifest, videos)[0][4:]] == [refusal, refusal]
    assert main(["sovabench", "describe", "--backend", "motion", "--prompt", "general", "--fps", "2", "--cache-dir",
                 str(tmp_path / "cache"), "--manifest", str(manifest), "--video-root", str(videos),
                 "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "described 1, skipped 0 (already cached), failed 5" in out
    (line,) = [x for x in out.splitlines() if x.startswith("  failed by kind: ")]
    assert sorted(line.removeprefix("  failed by kind: ").split("; ")) == [
        "1 activity not found (3)", "1 annotation missing (4)", "1 region too small (2)", "2 size mismatch (20, 21)"]
    assert any(x.startswith(f"  failed 20: {refusal[:100]}") for x in err.splitlines())  # cut at 300 characters


def test_cli_usage_errors(planned, tmp_path, capsys):
    _, manifest, _ = planned
    base = ["sovabench", "describe", "--backend", "motion", "--prompt", "general", "--cache-dir", str(tmp_path)]
    assert main([*base, "--manifest", str(manifest)]) == 2
    assert "the following arguments are required: --video-root" in capsys.readouterr().err
    assert main([*base, "--manifest", str(manifest), "--video-root", str(VTEST), "--protocol", "intra-pair"]) == 2
    assert "argument --protocol: not allowed with argument --manifest" in capsys.readouterr().err
    assert main([*base, "--manifest", str(tmp_path / "none.tsv"), "--video-root", str(VTEST)]) == 2
    assert "argument --manifest: " + str(tmp_path / "none.tsv") + ": no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.tsv"
    bad.write_text(manifest.read_text().replace("\tok\n", "\tfine\n", 1))
    assert main([*base, "--manifest", str(bad), "--video-root", str(VTEST)]) == 2
    assert "bad.tsv, line 2: unknown status 'fine'" in capsys.readouterr().err
    twice = tmp_path / "twice.tsv"
    lines = manifest.read_text().splitlines(keepends=True)
    twice.write_text("".join(lines + lines[1:2]))
    assert main([*base, "--manifest", str(twice), "--video-root", str(VTEST)]) == 2
    assert f"twice.tsv, line {len(lines) + 1}: index 1 appears again (first at {twice}, line 2)" in \
        capsys.readouterr().err
    assert not (tmp_path / "descriptions").exists()
