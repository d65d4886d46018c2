"""Video decoding: two decoders behind one small interface, and the frame numbering they share.

``open_video(path, backend)`` returns a reader with ``.info`` (a
``VideoInfo``), ``.read(indices) -> {index: H x W x 3 uint8 RGB array}`` and
``.close()``; ``decode_planned(path, backend, plan)`` opens a file, lets
``plan(info)`` choose the frames and decodes them. The frame sampler and
readers of ``sova_lib.video.frames`` are built on these two.

Backends:

* ``"decord"``: the ``decord2`` build (imports as ``decord``), fast random access.
  Every batch it decodes is checked against the frame size the container
  declares (``height x width x 3``, uint8): ``decord2`` 3.4.0 on CPUs with
  AVX-512 fails, or returns 4-channel data, for some widths (32, 48, 96,
  144 px). On a mismatch or a decoder error the reader switches that file to
  PyAV for good and says so once (a ``DecoderFallbackWarning`` naming the file).
* ``"pyav"``: PyAV (FFmpeg), always installed with ``av``;
* ``"auto"``: decord, falling back to PyAV when decord is missing or cannot open
  the file (and, in ``decode_planned``, when it opens but cannot decode it).

Frame numbering. Frame ``i`` of a video is its ``i``-th frame in presentation
order, counted from 0. The frame count is the number of non-empty video
packets in the file, as decord indexes them; the count written in the
container header is not trusted (a truncated AVI keeps the header of the
complete file and may claim 60 frames where one can be decoded; msmpeg4/AVI
headers are often wrong in the same way). The PyAV backend therefore demuxes
the stream once (no decoding) to count and index the packets, exactly as
decord does when it opens a file. A requested frame that then fails to decode
raises ``VideoError`` naming the file and the frame.

Pixel agreement. Both backends convert YUV to RGB with FFmpeg's swscale; on
the vendored excerpts they return identical arrays (checked in
``tests/test_video_decode.py``).
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

__all__ = ["BACKENDS", "DecoderFallbackWarning", "VideoError", "VideoInfo", "DecordReader", "PyAVReader",
           "open_video", "decode_planned"]

BACKENDS = ("auto", "decord", "pyav")


class VideoError(RuntimeError):
    """A video that cannot be opened or decoded; the message names the file."""


class DecoderFallbackWarning(UserWarning):
    """decord returned frames of the wrong shape or type, or failed: the file is read with PyAV instead."""


@dataclass(frozen=True)
class VideoInfo:
    """What a video holds: frame count (see the module docstring), frame rate, size in pixels."""

    num_frames: int
    fps: float
    width: int
    height: int

    @property
    def duration(self) -> float:
        """Seconds: ``num_frames / fps``."""
        return self.num_frames / self.fps


class _HeldStderr:
    """While any decoder open is in progress, what native code writes to file descriptor 2 is held in one file;
    when the last open in progress ends, the held text goes to stderr, less the lines that name a file whose open
    failed.

    decord's C++ code logs a file it cannot open (``[time] .../video_reader.cc:86: ERROR opening: <path>,
    <reason>``) straight to the process's stderr, a line the caller's ``VideoError`` (naming the file) replaces.
    Opens running at the same time share one redirection: the lock is held only to count them and to switch the
    descriptor (a few system calls), never while a file is opened, so loader threads open files in parallel.
    What another thread writes meanwhile is written when the last open ends (milliseconds later).

    The filter is by line, and decord writes its line in a dozen pieces, one ``write`` each (``[``, the time, the
    source file, ..., the path, ``, ``, the reason, the newline). When two opens fail within the same few
    microseconds, or another thread writes between those pieces, the line is cut: a piece cut off the part that
    names the file (the reason, or a bare newline) reaches stderr, and a write that lands in that part is dropped
    with it. Keeping parallel opens and separating such pieces exactly would need to know which thread wrote each
    byte, which one file descriptor cannot tell.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._open = 0  # opens in progress
        self._saved: int | None = None  # the real fd 2 while held
        self._held = None  # the holding file, made once, emptied each time it is written out
        self._failed: list[bytes] = []  # paths of failed opens whose lines are still held

    @contextlib.contextmanager
    def opening(self, path: str):
        """Hold fd 2 while the body opens ``path``; if the body raises, the held lines naming ``path`` are dropped."""
        with self._lock:
            if self._open == 0:
                with contextlib.suppress(AttributeError, OSError, ValueError):
                    sys.stderr.flush()
                if self._held is None:
                    self._held = tempfile.TemporaryFile()
                self._saved = os.dup(2)  # native code writes to the descriptor, whatever sys.stderr is
                os.dup2(self._held.fileno(), 2)
            self._open += 1
        failed = True
        try:
            yield
            failed = False
        finally:
            self._leave(os.fsencode(path) if failed else None)

    def _leave(self, failed_path: bytes | None) -> None:
        with self._lock:
            if failed_path is not None:
                self._failed.append(failed_path)
            self._open -= 1
            if self._open:
                return
            with contextlib.suppress(AttributeError, OSError, ValueError):
                sys.stderr.flush()
            os.dup2(self._saved, 2)
            os.close(self._saved)
            self._saved = None
            self._held.seek(0)
            lines = self._held.read().splitlines(keepends=True)
            self._held.seek(0)
            self._held.truncate()
            failed, self._failed = self._failed, []
            kept = b"".join(line for line in lines if not any(path in line for path in failed))
            if kept:
                os.write(2, kept)


_native_stderr = _HeldStderr()


_DECORD_IMPORT = threading.Lock()


@functools.cache
def _import_decord():
    """The ``decord`` module, imported without the CUDA libraries it would load; raises ``ImportError`` when missing.

    On import, ``decord2`` 3.4.0 loads every shared library of the ``nvidia-*`` packages it finds through
    ``importlib.util.find_spec("nvidia")``, each with ``RTLD_GLOBAL`` (``decord/_ffi/base.py``,
    ``_preload_cuda_libs``), NVBLAS (``libnvblas.so.13``) among them. NVBLAS defines the BLAS routines
    (``sgemm_``), so a torch loaded afterwards binds its CPU matrix products to NVBLAS, which without a GPU and its
    configuration file crashes the process (a segmentation fault in any ``nn.Linear``). The locked ``decord2`` is
    the CPU build, whose ``libdecord.so`` needs none of those libraries (its FFmpeg is bundled in ``decord2.libs``),
    so ``nvidia`` is hidden from that lookup while decord is imported (``sys.modules["nvidia"] = None``, which
    ``find_spec`` answers with None; the previous entry is put back): torch, imported later or never, keeps its own
    BLAS, and a command that decodes frames without torch (``--backend openai``) imports no torch. Importing
    decord this way also skips the second it takes to map the CUDA libraries. FFmpeg's own log lines are turned
    off once, here. After the first call this returns the module at once.
    """
    with _DECORD_IMPORT:  # one thread hides and restores the entry; the others wait, then find decord imported
        missing = object()
        saved = sys.modules.get("nvidia", missing)
        sys.modules["nvidia"] = None
        try:
            import decord
        finally:
            if saved is missing:
                del sys.modules["nvidia"]
            else:
                sys.modules["nvidia"] = saved
        decord.logging.set_level(decord.logging.QUIET)  # its FFmpeg's own lines ("moov atom not found")
    return decord


class DecordReader:
    """Random access with decord (the ``decord2`` build): one ``VideoReader`` per file."""

    def __init__(self, path: str):
        decord = _import_decord()
        try:
            with _native_stderr.opening(path):  # its line about a file it cannot open: the VideoError says it
                self._vr = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=1)
        except Exception as err:  # decord raises its own DECORDError, RuntimeError, ...
            raise VideoError(f"cannot open video {path} with decord: {err}".strip()) from err
        self.path = path
        self.info = VideoInfo(len(self._vr), float(self._vr.get_avg_fps()), *self._size())
        self._fallback: PyAVReader | None = None

    def _size(self) -> tuple[int, int]:
        """Width and height of the frames decord will return, as the stream header declares them: the shape of an
        empty batch (no frame decoded, the file not opened again); by decoding frame 0 where that says nothing."""
        with contextlib.suppress(Exception):  # any failure: decode a frame instead
            _, height, width, _ = self._vr.get_batch([]).shape
            if width and height:
                return int(width), int(height)
        if not len(self._vr):
            return 0, 0
        height, width = self._vr[0].shape[:2]
        self._vr.seek(0)
        return int(width), int(height)

    def read(self, indices: Sequence[int]) -> dict[int, np.ndarray]:
        wanted = sorted(set(int(i) for i in indices))
        if self._fallback is None:
            try:
                batch = self._vr.get_batch(wanted).asnumpy()
                problem = self._check(batch, len(wanted))
            except Exception as err:  # decord raises its own DECORDError, RuntimeError, ...
                problem = f"an error ({str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__})"
            if problem is None:
                return {i: np.ascontiguousarray(batch[k]) for k, i in enumerate(wanted)}
            self._switch_to_pyav(problem)
        return self._fallback.read(wanted)

    def _check(self, batch, count: int) -> str | None:
        """None when ``batch`` holds ``count`` frames of the declared size as RGB uint8, else what is wrong."""
        height, width = self.info.height, self.info.width
        want = (count, height, width, 3) if height and width else None
        if batch.dtype != np.uint8 or batch.ndim != 4 or batch.shape[0] != count or batch.shape[3] != 3 or (
                want is not None and batch.shape != want):
            shape = want or (count, "H", "W", 3)
            return f"frames of shape {batch.shape} and type {batch.dtype} where the file declares {shape} uint8"
        return None

    def _switch_to_pyav(self, problem: str) -> None:
        import warnings

        try:
            self._fallback = PyAVReader(self.path)
        except VideoError as err:
            raise VideoError(f"decord returned {problem} for {self.path}; {err}") from err
        warnings.warn(f"{self.path}: decord returned {problem}; decoding this file with PyAV instead",
                      DecoderFallbackWarning, stacklevel=3)

    def close(self) -> None:
        self._vr = None
        self._fallback = None


class PyAVReader:
    """Random access with PyAV: one demux pass indexes the packets, then seek + decode."""

    def __init__(self, path: str):
        import av

        self.path = path
        try:
            with av.open(path) as container:
                if not container.streams.video:
                    raise VideoError(f"no video stream in {path}")
                stream = container.streams.video[0]
                pts, keys = [], []
                for packet in container.demux(stream):
                    if packet.size == 0:
                        continue
                    pts.append(packet.pts)
                    keys.append(bool(packet.is_keyframe))
                rate = stream.average_rate or stream.guessed_rate or stream.base_rate
                width, height = stream.codec_context.width, stream.codec_context.height
        except VideoError:
            raise
        except Exception as err:
            raise VideoError(f"cannot open video {path} with PyAV: {err}") from err
        if rate is None or float(rate) <= 0:
            raise VideoError(f"video {path} has no frame rate")
        self._seekable = bool(pts) and all(p is not None for p in pts)
        if self._seekable:
            order = np.argsort(np.asarray(pts, dtype=np.int64), kind="stable")
            self._pts = [pts[i] for i in order]
            self._key = [keys[i] for i in order]
            self._index_of = {p: i for i, p in enumerate(self._pts)}
        self.info = VideoInfo(len(pts), float(rate), int(width), int(height))

    def read(self, indices: Sequence[int]) -> dict[int, np.ndarray]:
        import av

        wanted = sorted(set(int(i) for i in indices))
        want = set(wanted)
        out: dict[int, np.ndarray] = {}
        try:
            with av.open(self.path) as container:
                stream = container.streams.video[0]
                stream.thread_type = "AUTO"
                if not self._seekable:  # no timestamps: number frames by decode order
                    for k, frame in enumerate(container.decode(stream)):
                        if k in want:
                            out[k] = frame.to_ndarray(format="rgb24")
                        if k >= wanted[-1]:
                            break
                else:
                    self._read_seeking(container, stream, wanted, want, out)
        except Exception as err:
            raise VideoError(f"cannot decode {self.path} with PyAV: {err}") from err
        missing = [i for i in wanted if i not in out]
        if missing:
            raise VideoError(f"frames {missing[:5]} of {self.path} could not be decoded "
                             f"(the file indexes {self.info.num_frames} frames; is it truncated?)")
        return out

    def _read_seeking(self, container, stream, wanted, want, out) -> None:
        last = -1  # index of the last frame decoded
        decoder = None
        for target in wanted:
            if target in out:
                continue
            key = target
            while key > 0 and not self._key[key]:
                key -= 1
            if decoder is None or last >= target or key > last + 1:
                container.seek(self._pts[key], stream=stream, backward=True, any_frame=False)
                decoder = container.decode(stream)
            for frame in decoder:
                i = self._index_of.get(frame.pts)
                if i is None:
                    continue
                last = i
                if i in want and i not in out:
                    out[i] = frame.to_ndarray(format="rgb24")
                if i >= target:
                    break

    def close(self) -> None:
        pass


def open_video(path, backend: str):
    """A reader of ``path``: ``.info`` (``VideoInfo``), ``.read(indices)`` -> ``{index: RGB array}``, ``.close()``.

    ``backend`` is one of ``BACKENDS``; ``"auto"`` takes decord, or PyAV when
    decord is missing or cannot open the file. Raises ``ValueError`` for an
    unknown backend, ``FileNotFoundError`` for a missing file and
    ``VideoError`` (naming the file) for one that cannot be opened.
    """
    path = os.fspath(path)
    if backend not in BACKENDS:
        raise ValueError(f"unknown video backend {backend!r}; choose one of {BACKENDS}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"video not found: {path}")
    if backend != "auto":
        return {"decord": DecordReader, "pyav": PyAVReader}[backend](path)
    try:
        return DecordReader(path)
    except ImportError:  # decord is not installed
        return PyAVReader(path)
    except VideoError as first:
        try:
            return PyAVReader(path)
        except VideoError as second:
            raise VideoError(f"{first}; {second}") from second


def decode_planned(path, backend: str, plan: Callable[[VideoInfo], list[int]]
                   ) -> tuple[VideoInfo, list[int], dict[int, np.ndarray]]:
    """Open ``path``, let ``plan(info)`` choose source frames, decode them (none for an empty plan).

    A file that decord opens but cannot decode is read with PyAV (``DecordReader.read``; both number frames
    alike, so the plan stands).
    """
    reader = open_video(path, backend)
    try:
        if reader.info.num_frames < 1:
            raise VideoError(f"video {os.fspath(path)} holds no frames")
        wanted = plan(reader.info)
        return reader.info, wanted, reader.read(wanted) if wanted else {}
    finally:
        reader.close()
