"""Tests of what ``sova sovabench clips fetch`` refuses from a server or a TSV it does not control: names that would
write outside --video-root, bodies longer than announced, bytes that fail their validators, a changed object on
resume, two fetches of one file, a key layout that answers 404 (tests.bucket_server on 127.0.0.1)."""
from __future__ import annotations

import pytest

from sova_lib.benchmarks.sovabench.clips import fetch
from sova_lib.benchmarks.sovabench.clips.sources import Source, meva_key
from sova_lib.cli import main
from tests.benchmarks.sovabench.clips.conftest import A, B, C
from tests.benchmarks.sovabench.clips.test_fetch import _fetch, _objects
from tests.benchmarks.sovabench.clips.test_sources import write_tsv
from tests.bucket_server import serve


def _files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_a_name_that_climbs_out_of_the_root_is_refused_in_one_line_naming_its_row(videos, tmp_path, capsys):
    evil = "2018-03-05.13-15-00.13-20-00/../../../../../outside/pwned"
    tsv = write_tsv(tmp_path / "t.tsv", [f"{A}.vehicle_turns_left.5.20", f"{evil}.person_closes_trunk.1.5"])
    root = tmp_path / "deep" / "videos"
    with serve({**_objects(videos), f"drops-123-r13/2018-03-05/13/{evil}.avi": videos[A]}) as bucket:
        code = main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(root), "--base-url",
                     bucket.url, "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err == (f"sova: error: --tsv {tsv}: row index 1 ({evil}.person_closes_trunk.1.5): MEVA video name "
                   f"{evil!r} is not 'YYYY-MM-DD.HH-MM-SS.HH-MM-SS.<site>.G<camera>.r13'; nothing fetched\n")
    assert bucket.requests == [] and not (tmp_path / "outside").exists() and not root.exists()


def test_a_target_that_resolves_outside_the_root_through_a_link_is_refused(tmp_path):
    root, outside = tmp_path / "videos", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "drops-123-r13").symlink_to(outside, target_is_directory=True)
    source = Source(A, "MEVA", meva_key(A), 1, 21, video_status="missing")
    with pytest.raises(ValueError) as caught:
        fetch.planned_fetches([source], root, "http://127.0.0.1:9")
    assert str(caught.value) == (f"source video {A!r}: its file {root / meva_key(A)} resolves to "
                                 f"{(outside / meva_key(A).split('/', 1)[1]).resolve()}, outside --video-root "
                                 f"{root}; nothing fetched")
    # a name that is not a MEVA name never becomes a path, whatever its location says
    bad = Source("x/../../y", "MEVA", "drops-123-r13/x.avi", 1, 21, video_status="missing")
    with pytest.raises(ValueError, match=r"^source video 'x/\.\./\.\./y' is not a MEVA video name; nothing fetched$"):
        fetch.planned_fetches([bad], root, "http://127.0.0.1:9")
    assert _files(outside) == []


@pytest.mark.parametrize("endless", ["chunked", "with-length"])
@pytest.mark.parametrize("resumed", [False, True])
def test_a_body_longer_than_announced_is_never_kept(videos, tsv, tmp_path, endless, resumed):
    root = tmp_path / "videos"
    part = root / (meva_key(A) + ".part")
    if resumed:  # a 206 with the right Content-Range, then an endless body
        part.parent.mkdir(parents=True)
        part.write_bytes(videos[A][:700])
    with serve(_objects(videos)) as bucket:
        bucket.endless[meva_key(A)] = endless
        s = _fetch(tsv, root, bucket.url, concurrency=1)
    size = len(videos[A])
    assert sorted(s.fetched) == sorted([B, C]) and [name for name, _ in s.failed] == [A]
    why = s.failed[0][1]
    if endless == "chunked":  # refused before a byte is read
        announced = f"{size - 700} bytes of range 700-{size - 1}" if resumed else f"where HEAD gave {size} bytes"
        assert why.startswith("the server announced Content-Length none ") and announced in why, why
        assert s.bytes == len(videos[B]) + len(videos[C])
    else:  # read up to the announced size, then refused
        assert why == f"the server sent more than the {size} bytes it announced; nothing kept"
        assert len(videos[B]) + len(videos[C]) <= s.bytes <= len(videos[B]) + len(videos[C]) + size - (700 * resumed)
    assert not part.exists() and not (root / meva_key(A)).exists()
    gets = [k for m, k, _ in bucket.requests if m == "GET"]
    assert gets.count(meva_key(A)) == 1  # no retry of a server that lies about its size
