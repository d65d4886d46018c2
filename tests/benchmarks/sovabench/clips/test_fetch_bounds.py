"""Tests of what ``sova sovabench clips fetch`` refuses from a server or a TSV it does not control: names that would
write outside --video-root, bodies longer than announced, bytes that fail their validators, a changed object on
resume, two fetches of one file, a key layout that answers 404 (tests.bucket_server on 127.0.0.1)."""
from __future__ import annotations

import hashlib
import json

import httpx
import pytest

from sova_lib.benchmarks.sovabench.clips import fetch
from sova_lib.benchmarks.sovabench.clips.sources import Source, meva_key
from sova_lib.benchmarks.sovabench.clips.transfer import ItemFailed, Transfers
from sova_lib.cli import main
from tests.benchmarks.sovabench.clips.conftest import A, B, C, leave_part
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
        leave_part(root, A, videos[A], 700)
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
    assert not part.exists() and not (root / meva_key(A)).exists() and not (root / (meva_key(A) + '.part.json')).exists()
    gets = [k for m, k, _ in bucket.requests if m == "GET"]
    assert gets.count(meva_key(A)) == 1  # no retry of a server that lies about its size


def _flipped(data: bytes, start: int, n: int) -> bytes:
    return data[:start] + bytes(b ^ 0xFF for b in data[start:start + n]) + data[start + n:]


def test_wrong_bytes_of_the_right_size_are_caught_by_the_md5_etag_or_by_decoding(videos, tsv, tmp_path):
    size = len(videos[A])
    flipped = _flipped(videos[A], size // 2 - 1000, 2000)  # 2,000 bytes flipped in the middle
    root = tmp_path / "videos"
    with serve(_objects(videos, **{A: flipped})) as bucket:
        bucket.etag[meva_key(A)] = f'"{hashlib.md5(videos[A]).hexdigest()}"'  # the ETag of the true object
        s = _fetch(tsv, root, bucket.url)
    assert sorted(s.fetched) == sorted([B, C])
    assert s.failed == [(A, f"downloaded, but its MD5 {hashlib.md5(flipped).hexdigest()} is not the ETag "
                            f"\"{hashlib.md5(videos[A]).hexdigest()}\" the server gave; removed")]
    assert _files(root) == sorted(["SHA256SUMS", meva_key(B), meva_key(C)])
    assert meva_key(A) not in (root / "SHA256SUMS").read_text()
    # a multipart ETag is no MD5: the first, middle and last frames must decode
    with serve(_objects(videos, **{A: flipped})) as bucket:
        bucket.etag[meva_key(A)] = '"0123456789abcdef0123456789abcdef-2"'
        s = _fetch(tsv, tmp_path / "again", bucket.url)
    assert [name for name, _ in s.failed] == [A]
    assert s.failed[0][1].startswith("downloaded, but it has frames that do not decode: frames [0, 15, 29] of ")
    assert not (tmp_path / "again" / meva_key(A)).exists()


def test_a_resume_of_an_object_that_changed_starts_again_from_zero(videos, tsv, tmp_path):
    size = len(videos[A])
    changed = _flipped(videos[A], size - 2000, 100)  # the same size, other bytes after the cut
    root = tmp_path / "videos"
    with serve(_objects(videos)) as bucket:
        bucket.cut[meva_key(A)] = 1000
        s = _fetch(tsv, root, bucket.url, attempts=1)  # killed mid-transfer: 1000 bytes kept
    assert [name for name, _ in s.failed] == [A] and (root / (meva_key(A) + ".part")).stat().st_size == 1000
    with serve(_objects(videos, **{A: changed})) as bucket:
        s = _fetch(tsv, root, bucket.url, check=False)
    assert s.fetched == [A] and s.failed == [] and (root / meva_key(A)).read_bytes() == changed
    assert s.bytes == size  # all of it, again
    # the .part's record no longer matches what HEAD says now: it is not resumed at all
    assert [(m, r) for m, k, r in bucket.requests if k == meva_key(A)] == [("HEAD", None), ("GET", None)]
    # changed between HEAD and GET: If-Range makes the server send all of it
    part = leave_part(tmp_path / "v2", A, videos[A], 1000)
    with serve(_objects(videos)) as bucket, httpx.Client() as client:
        transfers = Transfers(client, _Bar(), 1, 0.0, None, tmp_path / "v2")
        head = transfers.head(f"{bucket.url}/{meva_key(A)}")
        bucket.objects[meva_key(A)] = changed
        assert transfers.fetch(None, f"{bucket.url}/{meva_key(A)}", tmp_path / "v2" / meva_key(A), head) == ""
    assert bucket.if_range == [f'"{hashlib.md5(videos[A]).hexdigest()}"']
    assert (tmp_path / "v2" / meva_key(A)).read_bytes() == changed and not part.exists()
    assert transfers.bytes == size


class _Bar:
    def update(self, n):
        pass


def test_the_sha256sums_are_checked_on_a_later_fetch_and_by_clips_sources(videos, tsv, tmp_path, capsys):
    root = tmp_path / "videos"
    with serve(_objects(videos)) as bucket:
        assert _fetch(tsv, root, bucket.url).failed == []
        with open(root / meva_key(C), "ab") as f:  # a file changed after its fetch (it still opens)
            f.write(bytes(10))
        s = _fetch(tsv, root, bucket.url)
    assert (s.fetched, s.present) == ([], 2)
    assert s.failed == [(C, f"{root / meva_key(C)} has a SHA-256 other than the one SHA256SUMS records for "
                            f"{meva_key(C)}; remove it to fetch it again")]
    assert main(["sovabench", "clips", "sources", "--tsv", str(tsv), "--video-root", str(root), "--out",
                 str(tmp_path / "s.json")]) == 0
    status = {row["source_video"]: row["video_status"] for row in json.loads((tmp_path / "s.json").read_text())}
    assert status == {A: "ok", B: "ok", C: f"a SHA-256 other than the one SHA256SUMS records for {meva_key(C)}",
                      "VIRAT_S_000007": "missing"}
    assert "unusable: 1" in capsys.readouterr().out


def test_a_file_another_fetch_is_writing_is_skipped_and_said_so(videos, tsv, tmp_path, capsys):
    from filelock import FileLock

    root = tmp_path / "videos"
    (root / meva_key(B)).parent.mkdir(parents=True)
    held = FileLock(root / (meva_key(B) + ".lock"))
    with serve(_objects(videos)) as bucket:
        with held:  # another fetch writes B
            code = main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(root), "--base-url",
                         bucket.url, "--no-progress"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[1:3] == ["being fetched by another run: 1",
                        f"  skipped {B}: another fetch is writing it (it holds {root / (meta := meva_key(B))}.lock); "
                        "skipped, run again when that one ends"]
    assert [(m, k) for m, k, _ in bucket.requests if m == "GET"].count(("GET", meta)) == 0
    # no .part of B; the other run's lock is its own to remove, A's and C's are gone
    assert _files(root) == sorted(["SHA256SUMS", meva_key(A), meva_key(B) + ".lock", meva_key(C)])


def test_two_fetches_into_one_folder_write_each_file_once(videos, tsv, tmp_path):
    import threading

    root = tmp_path / "videos"
    results = []
    with serve(_objects(videos)) as bucket:
        bucket.slow = (1024, 0.01)  # each transfer takes a while, so that the two runs meet
        runs = [threading.Thread(target=lambda: results.append(_fetch(tsv, root, bucket.url, concurrency=3)))
                for _ in range(2)]
        for run in runs:
            run.start()
        for run in runs:
            run.join(timeout=60)
    assert len(results) == 2 and all(s.failed == [] for s in results)
    fetched = sorted(n for s in results for n in s.fetched)
    assert fetched == sorted([A, B, C])  # each file written by one run alone
    for s in results:  # what one run did not write, the other was writing (busy) or had written (present)
        assert len(s.fetched) + len(s.busy) + s.present == 3
        assert all(why.startswith("another fetch is writing it (it holds ") for _, why in s.busy)
    for name in (A, B, C):
        assert (root / meva_key(name)).read_bytes() == videos[name]
    gets = [k for m, k, _ in bucket.requests if m == "GET"]
    assert sorted(gets) == sorted(meva_key(n) for n in (A, B, C))  # 3 GETs in all, one per file
    assert _files(root) == sorted(["SHA256SUMS", *(meva_key(n) for n in (A, B, C))])
    assert len((root / "SHA256SUMS").read_text().splitlines()) == 3


def test_the_key_template_places_keys_and_files_and_a_bad_one_is_refused(videos, tsv, tmp_path, capsys):
    root = tmp_path / "videos"
    flat = {f"meva/{n}.avi": videos[n] for n in (A, B, C)}
    with serve(flat) as bucket:
        assert main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(root), "--base-url",
                     bucket.url, "--key-template", "meva/{name}.avi", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("MEVA videos fetched: 3 (")
    assert _files(root) == sorted(["SHA256SUMS", *flat])
    for template, why in (("../{name}.avi", "is not a relative path of named folders"),
                          ("x/{date}.avi", "must hold {name} and no field but {date}, {hour}, {name}"),
                          ("{name}/{user}.avi", "must hold {name} and no field but {date}, {hour}, {name}")):
        assert main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(root), "--key-template",
                     template]) == 2
        err = capsys.readouterr().err
        assert err == (f"sova: error: sova sovabench clips fetch: argument --key-template: key template "
                       f"{template!r} {why}; see 'sova sovabench clips fetch --help'\n"), err


def test_when_the_first_keys_all_answer_404_one_line_says_the_layout_is_likely_wrong(videos, tmp_path, capsys):
    names = [f"2018-03-0{d}.1{h}-00-00.1{h}-05-00.bus.G50{h}.r13" for d in range(1, 8) for h in range(2)]
    tsv = write_tsv(tmp_path / "t.tsv", [f"{n}.vehicle_turns_left.5.20" for n in names])
    with serve({f"drops-123-r13/{n}.avi": videos[A] for n in names}) as bucket:  # no date and hour folders
        code = main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(tmp_path / "v"),
                     "--base-url", bucket.url, "--concurrency", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    assert err == (f"sova: error: the first {fetch.LAYOUT_PROBE} key(s) all answer HTTP 404 ({bucket.url}/"
                   f"{meva_key(sorted(names)[4])} among them): --key-template drops-123-r13/{{date}}/{{hour}}/"
                   f"{{name}}.avi or --base-url {bucket.url} is likely wrong; nothing fetched\n")
    assert [m for m, _, _ in bucket.requests] == ["HEAD"] * fetch.LAYOUT_PROBE
    # once a key has answered, a 404 is that video's alone
    with serve({meva_key(names[0]): videos[A]}) as bucket:
        s = _fetch(tsv, tmp_path / "w", bucket.url, concurrency=1, check=False)
    assert s.fetched == [sorted(names)[0]] and len(s.failed) == len(names) - 1
    assert {why for _, why in s.failed} == {"not in the bucket (HTTP 404)"}


def test_a_get_that_disagrees_with_head_is_refused_before_a_byte_is_written(videos, tmp_path):
    dest = tmp_path / "v" / meva_key(A)
    with serve(_objects(videos)) as bucket, httpx.Client() as client:
        transfers = Transfers(client, _Bar(), 1, 0.0, None, tmp_path / "v")
        head = transfers.head(f"{bucket.url}/{meva_key(A)}")
        bucket.objects[meva_key(A)] = videos[A] + bytes(100)  # longer by the time of the GET
        with pytest.raises(ItemFailed) as err:
            transfers.fetch(None, f"{bucket.url}/{meva_key(A)}", dest, head)
    assert str(err.value) == (f"the server announced Content-Length {len(videos[A]) + 100} where HEAD gave "
                              f"{len(videos[A])} bytes; nothing kept")
    assert _files(tmp_path / "v") == [] and transfers.bytes == 0


def test_an_empty_object_is_no_video(videos, tsv, tmp_path):
    with serve(_objects(videos, **{A: b""})) as bucket:
        s = _fetch(tsv, tmp_path / "v", bucket.url)
    assert s.failed == [(A, "the server gives it as 0 bytes: no video")] and sorted(s.fetched) == sorted([B, C])
