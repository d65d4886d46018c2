"""Loading an item costs what decord costs: one decord open per file (no second open by PyAV for the frame size),
frames byte for byte those of a plain decord open and read, and opens in parallel threads that do not wait for
each other while decord's line about a file it cannot open stays off stderr."""
from __future__ import annotations

import os
import threading
import time

import av
import numpy as np
import pytest

from sova_lib.describe.item import Item, load_item
from sova_lib.video import decode
from sova_lib.video.frames import example_videos, sample_frames

decord = decode._import_decord()


@pytest.fixture
def opens(monkeypatch):
    """Counts of decord ``VideoReader`` and PyAV ``av.open`` calls, by backend name."""
    counts = {"decord": 0, "pyav": 0}
    real_reader, real_open = decord.VideoReader, av.open

    def reader(*args, **kwargs):
        counts["decord"] += 1
        return real_reader(*args, **kwargs)

    def open_(*args, **kwargs):
        counts["pyav"] += 1
        return real_open(*args, **kwargs)

    monkeypatch.setattr(decord, "VideoReader", reader)
    monkeypatch.setattr(av, "open", open_)
    return counts


@pytest.mark.parametrize("backend", ["auto", "decord"])
def test_an_item_is_one_decord_open(opens, backend):
    path = example_videos()[0]
    frames = sample_frames(path, 2.0, backend=backend)
    assert len(frames) == 13 and opens == {"decord": 1, "pyav": 0}  # 60 frames at 10 fps, sampled at 2 fps
    images, times, is_video = load_item(Item("lawn", path), 2.0)
    assert (len(images), is_video, opens) == (13, True, {"decord": 2, "pyav": 0})
    assert times == pytest.approx(frames.timestamps.tolist())


def test_the_pyav_reader_opens_with_pyav_alone(opens):
    """The cross-check of the counter: the PyAV reader opens a file twice with PyAV (index, then decode)."""
    sample_frames(example_videos()[0], 2.0, backend="pyav")
    assert opens == {"decord": 0, "pyav": 2}


@pytest.mark.parametrize("path", example_videos(), ids=lambda p: p.stem)
def test_the_size_is_the_headers_and_the_frames_a_plain_decord_read(path):
    """The size without a second open is the one the container declares (PyAV reads it), and the frames are
    the bytes of a bare ``VideoReader`` and ``get_batch`` of the same indices."""
    with av.open(str(path)) as container:
        ctx = container.streams.video[0].codec_context
        declared = (ctx.width, ctx.height)
    reader = decode.open_video(path, "decord")
    try:
        assert (reader.info.width, reader.info.height) == declared
        frames = sample_frames(path, 3.0, backend="decord")
    finally:
        reader.close()
    plain = decord.VideoReader(str(path), ctx=decord.cpu(0), num_threads=1)
    expected = plain.get_batch(frames.source_indices.tolist()).asnumpy()
    got = np.stack([np.asarray(img) for img in frames.images])
    assert got.shape == expected.shape and got.tobytes() == expected.tobytes()


def test_opens_in_threads_run_together(monkeypatch):
    """Two threads are inside decord's open at the same moment: no lock makes one wait for the other."""
    both = threading.Barrier(2, timeout=20)
    real_reader = decord.VideoReader

    def reader(*args, **kwargs):
        both.wait()  # times out (BrokenBarrierError) if the opens were serialised
        return real_reader(*args, **kwargs)

    monkeypatch.setattr(decord, "VideoReader", reader)
    paths, infos, errors = example_videos()[:2], {}, []

    def open_one(path):
        try:
            infos[path] = decode.open_video(path, "decord").info.num_frames
        except Exception as err:  # noqa: BLE001 - reported by the assertion below
            errors.append(err)

    threads = [threading.Thread(target=open_one, args=(p,)) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and sorted(infos.values()) == [50, 60]


def test_no_line_naming_a_bad_file_reaches_stderr_while_threads_open_good_and_bad_files(tmp_path, capfd):
    """Threads open good and bad files at once: no line on stderr names a bad file, each bad file is a
    ``VideoError`` naming it, and every good file opens. (Two opens failing at the same moment can leave a piece of
    decord's line that names no file, as ``_HeldStderr`` says, so the rest of stderr is not asserted here.)"""
    bad = [tmp_path / f"bad{k}.mp4" for k in range(4)]
    for path in bad:
        path.write_text("not a video\n")
    good = example_videos()
    failures, opened = [], []

    def open_one(path):
        try:
            decode.open_video(path, "decord").close()
            opened.append(path)
        except decode.VideoError as err:
            failures.append(str(err))

    threads = [threading.Thread(target=open_one, args=(p,)) for p in [*bad, *good] * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    err = capfd.readouterr().err
    assert [line for line in err.splitlines() if any(p.name in line for p in bad)] == []
    assert len(opened) == 3 * len(good) and len(failures) == 3 * len(bad)
    assert sorted(failures) == sorted(f"cannot open video {p} with decord: Error reading {p}..." for p in bad * 3)


def test_a_lone_failed_open_leaves_stderr_as_it_was(tmp_path, capfd):
    """One failed open, alone: decord's line is gone and nothing else is written."""
    bad = tmp_path / "bad.mp4"
    bad.write_text("not a video\n")
    os.write(2, b"before\n")
    with pytest.raises(decode.VideoError, match="bad.mp4"):
        decode.open_video(bad, "decord")
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "before\nafter\n"


def test_what_another_thread_writes_during_a_failing_open_arrives_once(tmp_path, capfd):
    """decord opens a FIFO and waits for its bytes, so the open is in progress, fd 2 held, for as long as the test
    likes: another thread's lines written then arrive once, in order, when the open fails; decord's line does not.
    """
    fifo = tmp_path / "slow.mp4"
    os.mkfifo(fifo)
    failures = []

    def open_fifo():
        try:
            decode.DecordReader(str(fifo))  # open_video refuses a FIFO (not a regular file); the reader does not
        except decode.VideoError as err:
            failures.append(str(err))

    opener = threading.Thread(target=open_fifo, daemon=True)  # if a check below fails, it cannot hold the process open
    opener.start()
    for _ in range(2000):  # until decord is inside the open, fd 2 held
        if decode._native_stderr._open:
            break
        time.sleep(0.01)
    assert decode._native_stderr._open == 1
    chatter = threading.Thread(target=lambda: [os.write(2, f"line {k}\n".encode()) for k in range(20)])
    chatter.start()
    chatter.join()
    assert capfd.readouterr().err == ""  # held while the open is in progress
    with open(fifo, "wb") as feed:
        feed.write(b"not a video\n" * 100)
    opener.join(timeout=30)
    assert failures == [f"cannot open video {fifo} with decord: Error reading {fifo}..."]
    assert capfd.readouterr().err == "".join(f"line {k}\n" for k in range(20))


def test_a_failed_open_drops_only_its_own_lines(tmp_path, capfd):
    """The filter is by file: a held line naming another file, written while the open failed, is kept."""
    bad = tmp_path / "bad.mp4"
    bad.write_text("not a video\n")
    with pytest.raises(decode.VideoError):
        with decode._native_stderr.opening(str(bad)):
            os.write(2, f"about {bad}\nabout {tmp_path / 'other.mp4'}\n".encode())
            raise decode.VideoError("simulated")
    assert capfd.readouterr().err == f"about {tmp_path / 'other.mp4'}\n"
