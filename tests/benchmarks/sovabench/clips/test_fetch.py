"""Tests of downloading MEVA source videos (sova_lib.benchmarks.sovabench.clips.fetch, sova sovabench clips fetch)
against a local object store (tests.bucket_server) that serves tiny videos made here under the bucket's keys."""
from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time

from sova_lib.benchmarks.sovabench.clips import fetch
from sova_lib.benchmarks.sovabench.clips.sources import list_sources, meva_key
from sova_lib.benchmarks.sovabench.splits import read_tsv
from sova_lib.cli import main
from tests.benchmarks.sovabench.clips.conftest import A, B, C, leave_part
from tests.bucket_server import serve
from tests.paths import ROOT


def _objects(videos, **swap):
    return {meva_key(n): swap.get(n, videos[n]) for n in (A, B, C)}


def _fetch(tsv, root, url, **options):
    return fetch.fetch_sources(list_sources(read_tsv(tsv), None, root, check=False), root, base_url=url,
                               backoff=0.01, **options)


def test_a_cut_transfer_is_resumed_and_each_file_checked(videos, tsv, tmp_path):
    root = tmp_path / "videos"
    with serve(_objects(videos)) as bucket:
        bucket.cut[meva_key(A)] = 1000  # the first GET of A is cut after 1000 bytes
        leave_part(root, B, videos[B], 700)  # B: an earlier run left its first 700 bytes
        s = _fetch(tsv, root, bucket.url, concurrency=2)
    assert (sorted(s.fetched), s.failed, s.present, s.virat) == (sorted([A, B, C]), [], 0, 1)
    for name in (A, B, C):
        assert (root / meva_key(name)).read_bytes() == videos[name]
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == \
        sorted(["SHA256SUMS", *(meva_key(n) for n in (A, B, C))])  # no .part left, nor its record
    assert sorted((root / "SHA256SUMS").read_text().splitlines()) == \
        sorted(f"{hashlib.sha256(videos[n]).hexdigest()}  {meva_key(n)}" for n in (A, B, C))
    gets = [(k, r) for m, k, r in bucket.requests if m == "GET"]
    assert gets.count((meva_key(A), None)) == 1 and (meva_key(A), "bytes=1000-") in gets
    assert (meva_key(B), "bytes=700-") in gets and (meva_key(B), None) not in gets
    assert s.bytes == sum(len(videos[n]) for n in (A, B, C)) - 700
    # a second run finds them all and asks nothing
    with serve(_objects(videos)) as again:
        s = _fetch(tsv, root, again.url)
    assert (s.fetched, s.present, again.requests) == ([], 3, [])


def test_a_corrupt_or_short_file_is_caught_removed_and_reported(videos, tsv, tmp_path, capsys):
    broken = bytes(len(videos[A]))  # as long as the video, all zeros
    root = tmp_path / "videos"
    with serve(_objects(videos, **{A: broken, B: videos["short"]})) as bucket:
        code = main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(root), "--base-url",
                     bucket.url, "--no-progress"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[0].startswith("MEVA videos fetched: 1 (") and out[0].endswith("already present: 0, failed: 2")
    failed = dict(line.split(": ", 1) for line in out[1:3])
    assert failed[f"  failed {B}"] == "downloaded, but it has 10 frames, the rows need 21; removed"
    assert failed[f"  failed {A}"].startswith("downloaded, but it does not open: ") and \
        failed[f"  failed {A}"].endswith("; removed")
    assert out[3].startswith("VIRAT videos needed but not fetched here: 1; from VIRAT Video Dataset")
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == \
        ["SHA256SUMS", meva_key(C)]


def test_403_on_the_first_requests_stops_at_once_as_an_environment_error(videos, tsv, tmp_path, capsys):
    with serve(_objects(videos)) as bucket:
        bucket.forbid = True
        code = main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(tmp_path / "v"),
                     "--base-url", bucket.url, "--concurrency", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith("sova: error: ") and "HTTP 403" in err
    assert len(bucket.requests) == 1 and not any(p.is_file() for p in (tmp_path / "v").rglob("*"))


def test_a_refused_connection_is_an_environment_error(videos, tsv, tmp_path, capsys):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    code = main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(tmp_path / "v"), "--base-url",
                 f"http://127.0.0.1:{port}", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "cannot reach" in err and time.monotonic() - started < 30
    assert main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(tmp_path / "v"), "--base-url",
                 "mevadata-public-01.s3.amazonaws.com"]) == 2
    assert "is not an http:// or https:// address" in capsys.readouterr().err


def test_a_slow_server_within_the_timeouts_and_a_stalled_one_past_them(videos, tsv, tmp_path):
    with serve(_objects(videos)) as bucket:
        bucket.slow = (4096, 0.02)  # every body in 4 KB pieces, 20 ms apart
        s = _fetch(tsv, tmp_path / "slow", bucket.url, read_timeout=2.0)
    assert sorted(s.fetched) == sorted([A, B, C]) and s.failed == []
    with serve(_objects(videos)) as bucket:
        bucket.stall[meva_key(C)] = 10.0  # C stops after its first byte
        s = _fetch(tsv, tmp_path / "stalled", bucket.url, read_timeout=1.0, attempts=2)
    assert sorted(s.fetched) == sorted([A, B])
    assert s.failed[0][0] == C and "after 2 attempts" in s.failed[0][1]
    # one byte per attempt, the second resumed from the first, kept for the next run
    assert (tmp_path / "stalled" / (meva_key(C) + ".part")).read_bytes() == videos[C][:2]


def test_dry_run_asks_nothing_and_limit_takes_the_first_sources(videos, tsv, tmp_path, capsys):
    root = tmp_path / "v"
    with serve(_objects(videos)) as bucket:
        assert main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(root), "--base-url",
                     bucket.url + "/", "--dry-run"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert bucket.requests == [] and not root.exists()
        assert out[:4] == ["would fetch 3 MEVA video(s); 0 already present",
                           *(f"  {bucket.url}/{meva_key(n)} -> {root / meva_key(n)}" for n in (A, B, C))]
        assert main(["sovabench", "clips", "fetch", "--tsv", str(tsv), "--video-root", str(root), "--base-url",
                     bucket.url, "--limit", "1", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("MEVA videos fetched: 1 (")
    assert {k for _, k, _ in bucket.requests} == {meva_key(A)}
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == \
        ["SHA256SUMS", meva_key(A)]


def test_ctrl_c_exits_130_and_keeps_finished_files(videos, tsv, tmp_path):
    root = tmp_path / "v"
    with serve(_objects(videos)) as bucket:
        bucket.stall[meva_key(B)] = 60.0  # A finishes, then B hangs after its first byte
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-m", "sova_lib", "sovabench", "clips", "fetch", "--tsv", str(tsv),
                                 "--video-root", str(root), "--base-url", bucket.url, "--concurrency", "1",
                                 "--no-progress"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not (root / (meva_key(B) + ".part")).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
    assert proc.returncode == 130, err
    assert (root / meva_key(A)).read_bytes() == videos[A]
    assert not (root / meva_key(B)).exists() and (root / (meva_key(B) + ".part")).stat().st_size == 1
    assert "interrupted: finished files are kept" in out and err.strip().splitlines()[-1] == "sova: interrupted"
    assert "Traceback" not in err


def test_the_summary_lists_the_first_failures_and_counts_the_rest():
    s = fetch.FetchSummary(failed=[(f"v{k}", "not in the bucket (HTTP 404)") for k in range(fetch.MAX_LISTED + 5)])
    lines = s.lines()
    assert lines[0] == "MEVA videos fetched: 0 (0.0 MB), already present: 0, failed: 25"
    assert lines[1] == "  failed v0: not in the bucket (HTTP 404)" and len(lines) == 1 + 20 + 1
    assert lines[-1] == "  ... and 5 more"
