"""The two decoders behind ``sova_lib.video.frames`` (``sova_lib.video.decode``): frame numbering, pixels, failures."""
from __future__ import annotations

import numpy as np
import pytest

from sova_lib.video import decode as video_decode
from sova_lib.video.decode import VideoError, VideoInfo, decode_planned, open_video
from sova_lib.video.frames import example_videos, probe, sample_frames
from tests.helpers_video import frame_arrays, numbered_frames, read_number, write_video

BACKENDS = ["decord", "pyav"]


@pytest.fixture(scope="module")
def numbered(tmp_path_factory):
    """A 40-frame H.264 video (GOP 6 with B-frames, so reads must seek) at 10 fps whose frames show their number."""
    path = tmp_path_factory.mktemp("video") / "numbered.mp4"
    write_video(path, numbered_frames(40), fps=10, crf=18, options={"g": "6", "bf": "2"})
    return path


@pytest.mark.parametrize("backend", ["auto", *BACKENDS])
def test_reader_interface(numbered, backend):
    reader = open_video(numbered, backend)
    try:
        assert reader.info == VideoInfo(num_frames=40, fps=10.0, width=96, height=64)
        assert reader.info.duration == 4.0
        got = reader.read([33, 2, 17, 2])
        assert sorted(got) == [2, 17, 33]
        assert {i: read_number(a) for i, a in got.items()} == {2: 2, 17: 17, 33: 33}
        assert all(a.shape == (64, 96, 3) and a.dtype == np.uint8 for a in got.values())
    finally:
        reader.close()


def test_decode_planned_lets_the_plan_see_the_info(numbered):
    seen = []

    def plan(info):
        seen.append(info)
        return [info.num_frames - 1, 0]

    info, wanted, frames = decode_planned(numbered, "pyav", plan)
    assert seen == [info] and wanted == [39, 0]
    assert {i: read_number(a) for i, a in frames.items()} == {0: 0, 39: 39}


@pytest.mark.parametrize("backend", ["auto", *BACKENDS])
def test_missing_file_names_path(tmp_path, backend):
    path = tmp_path / "nope" / "missing.mp4"
    with pytest.raises(FileNotFoundError, match="missing.mp4"):
        sample_frames(path, backend=backend)
    with pytest.raises(FileNotFoundError, match="missing.mp4"):
        probe(path, backend=backend)


@pytest.mark.parametrize("backend", ["auto", *BACKENDS])
def test_corrupt_file_names_path(tmp_path, backend):
    path = tmp_path / "corrupt.mp4"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    with pytest.raises(VideoError, match="corrupt.mp4"):
        sample_frames(path, backend=backend)


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown video backend"):
        probe(example_videos()[0], backend="opencv")


def test_truncated_avi_count_comes_from_packets_not_header(tmp_path):
    """A truncated AVI keeps its header's frame count; both backends count the packets that are there."""
    import av

    whole = write_video(tmp_path / "whole.avi", numbered_frames(30), fps=10, codec="mpeg4",
                        options={"g": "5", "qscale": "2"})
    data = whole.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(data[: len(data) * 2 // 3])
    with av.open(str(cut)) as container:
        header_count = container.streams.video[0].frames
    assert header_count == 30
    counts = {b: probe(cut, b).num_frames for b in BACKENDS}
    assert counts["decord"] == counts["pyav"]
    assert 1 <= counts["pyav"] < 30
    got = sample_frames(cut, backend="pyav")
    assert got.source_indices[-1] == counts["pyav"] - 1


@pytest.mark.parametrize("kwargs", [{}, {"rate": 7, "window": (13, 41), "reverse": True},
                                    {"rate": 3, "crop": (5, 7, 200, 151)}])
def test_decord_and_pyav_agree_on_real_excerpt(kwargs):
    path = example_videos()[2]
    a = sample_frames(path, backend="decord", **kwargs)
    b = sample_frames(path, backend="pyav", **kwargs)
    assert a.source_indices.tolist() == b.source_indices.tolist()
    for x, y in zip(frame_arrays(a), frame_arrays(b)):
        assert np.array_equal(x, y)  # identical (see the module docstring)


@pytest.mark.parametrize("backend", ["auto", "decord"])
def test_a_file_decord_cannot_decode_is_read_with_pyav(numbered, monkeypatch, backend):
    decord = video_decode._import_decord()

    def broken(self, indices):
        raise RuntimeError("simulated")

    monkeypatch.setattr(decord.VideoReader, "get_batch", broken)
    with pytest.warns(video_decode.DecoderFallbackWarning, match=r"decord returned an error \(simulated\)"):
        got = sample_frames(numbered, window=(5, 29), backend=backend)
    assert [read_number(a) for a in frame_arrays(got)] == [5, 17, 29]


def test_torch_computes_on_the_cpu_after_a_video_was_read_with_decord(tmp_path):
    """A fresh process reads a video with decord, then imports torch and multiplies matrices on the CPU.

    decord2 loads NVBLAS globally on import where torch's CUDA libraries are installed; a torch loaded after it
    crashed in its first matrix product. decord is imported with those libraries hidden from it
    (``sova_lib.video.decode._import_decord``), and without torch.
    """
    import subprocess
    import sys

    video = write_video(tmp_path / "v.mp4", numbered_frames(3), fps=10)
    script = (
        "import sys\n"
        "from sova_lib.video.decode import open_video\n"
        "reader = open_video(sys.argv[1], 'decord'); frames = reader.read([0, 2]); reader.close()\n"
        "print(sorted({'decord', 'torch', 'nvidia'} & set(sys.modules)))\n"
        "import torch\n"
        "x = torch.ones(64, 384); w = torch.full((384, 384), 0.5)\n"
        "print(sorted(frames), float(torch.nn.functional.linear(x, w).sum()))\n")
    done = subprocess.run([sys.executable, "-c", script, str(video)], capture_output=True, text=True, timeout=300)
    # decord read the frames, imported neither torch nor the nvidia package, and torch multiplies afterwards
    assert (done.returncode, done.stdout) == (0, "['decord']\n[0, 2] 4718592.0\n"), done.stderr[-2000:]
