"""``sova describe`` under faults, against a loopback chat-completions server: every fault one line with the
README's exit status, no key repeated anywhere, Ctrl-C ending the process with what finished saved."""
import errno
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sova_lib.cli import main
from sova_lib.describe import cache as cache_module
from sova_lib.describe.contract import make_describer

KEY = "sk-live-7Hq2Zx9Wv4Rt-SECRET"


def describe_argv(server, cache, *extra):
    return ["describe", "--backend", "openai", "--model", "m", "--prompt", "general", "--base-url", server.url,
            "--protocol", "quickstart-direction", "--cache-dir", str(cache), "--no-progress", *extra]


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("sova: error:")]


def files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_a_server_that_echoes_its_headers_never_puts_the_key_on_disk_or_stderr(server_factory, tmp_path, capsys,
                                                                               monkeypatch):
    monkeypatch.setenv("SOVA_TEST_KEY", KEY)
    server = server_factory([("status", 400, "too long", {}), ("content", f"Authorization: Bearer {KEY}. A car.")],
                            echo=True)
    argv = describe_argv(server, tmp_path / "cache", "--api-key-env", "SOVA_TEST_KEY", "--concurrency", "1")
    assert main(argv) == 0  # an item failed (400), five are described, one of them quoting the key
    err = capsys.readouterr().err
    assert all(r["headers"]["Authorization"] == f"Bearer {KEY}" for r in server.requests)
    (errors,) = tmp_path.rglob("errors.jsonl")
    assert "'Authorization': '[redacted]'" in errors.read_text()  # the 400's message, headers and all
    (descriptions,) = tmp_path.rglob("descriptions.jsonl")
    assert "Authorization: Bearer [redacted]. A car." in descriptions.read_text()
    server.script = [("status", 401, "bad key", {})]
    assert main([*argv, "--retry-errors"]) == 1  # the server refuses the key: the run stops
    err += capsys.readouterr().err
    (line,) = error_lines(err)
    assert line.startswith(f"sova: error: HTTP 401 from {server.url}/chat/completions for model 'm': bad key; the "
                           "request's headers were {") and "'Authorization': '[redacted]'" in line
    (manifest,) = tmp_path.rglob("manifest.json")
    assert "'Authorization': '[redacted]'" in json.loads(manifest.read_text())["stopped"]["reason"]
    assert KEY not in err and files_holding(tmp_path, KEY) == []
    assert json.loads(manifest.read_text())["run"]["api_key_env"] == "SOVA_TEST_KEY"


def test_a_key_given_as_api_key_env_is_refused_without_repeating_it(server_factory, tmp_path, capsys):
    server = server_factory()
    assert main(describe_argv(server, tmp_path / "cache", "--api-key-env", KEY)) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["sova: error: cannot build the openai backend: --api-key-env takes the name of an "
                                "environment variable (letters, digits and '_'), not the key itself: put the key in a "
                                "variable (export MY_KEY=...) and pass --api-key-env MY_KEY"]
    assert not (tmp_path / "cache").exists() and server.requests == []


def test_api_key_env_naming_an_unset_variable_is_refused(server_factory, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SOVA_NO_SUCH_KEY", raising=False)
    server = server_factory()
    assert main(describe_argv(server, tmp_path / "cache", "--api-key-env", "SOVA_NO_SUCH_KEY")) == 2
    assert capsys.readouterr().err.splitlines() == [
        "sova: error: --api-key-env names an environment variable that is not set: set it to the key (export "
        "NAME=...), or leave --api-key-env out for a server that needs no key"]


@pytest.mark.parametrize("entry, stop", [
    (("content", None), "the first 5 items all failed with the same error"),
    (("content", ["a car", "turns"]), "the first 5 items all failed with the same error"),
    (("raw", 200, b"{not json"), "the first 5 items all failed with the same error"),
    (("status", 500, "internal", {}), "all failed, and none was answered")])
def test_a_server_that_fails_every_request_stops_the_run_within_seconds(server_factory, tmp_path, capsys, entry,
                                                                        stop):
    """An error answer stops the run by the backend's rule (no request answered); an answer that is no description
    fails only its item, but five items in a row that fail alike stop the run by the runner's rule."""
    server = server_factory(repeat=entry)
    start = time.monotonic()
    assert main(describe_argv(server, tmp_path / "cache")) == 1
    seconds = time.monotonic() - start
    (line,) = error_lines(capsys.readouterr().err)
    assert line.startswith("sova: error: ") and stop in line, line
    assert seconds < 60  # a generous bound: about 2 s on a laptop, against 105 s and more before
    (errors,) = tmp_path.rglob("errors.jsonl")
    assert errors.read_text() == ""  # nothing is marked as failed: --retry-errors is not needed later
    server.repeat = None  # the server is healthy again: the same command describes every item
    assert main(describe_argv(server, tmp_path / "cache")) == 0
    (descriptions,) = tmp_path.rglob("descriptions.jsonl")
    assert len(descriptions.read_text().splitlines()) == 6
    print(f"{entry[0]}: stopped after {seconds:.2f} s with {len(server.requests) - 6} requests")


def test_a_read_only_cache_and_a_full_disk_are_one_line_and_exit_1(server_factory, tmp_path, capsys,
                                                                           monkeypatch):
    server = server_factory()
    cache = tmp_path / "cache"
    from filelock import FileLock

    acquire = FileLock.acquire

    def refused(self, *args, **kwargs):  # the cache's own lock; the run's lock in the temporary folder is taken
        if Path(self.lock_file).name != ".lock":
            return acquire(self, *args, **kwargs)
        raise PermissionError(errno.EACCES, "Permission denied", str(self.lock_file))

    with monkeypatch.context() as patch:  # a read-only cache folder, as a user without write access sees it
        patch.setattr(FileLock, "acquire", refused)
        assert main(describe_argv(server, cache)) == 1
    (line,) = capsys.readouterr().err.splitlines()
    folder = next((cache / "descriptions").iterdir())
    assert line == (f"sova: error: cannot create the lock file {folder}/.lock: Permission denied; no permission: use "
                    "a folder you can write to, or change its permissions")

    real_open = cache_module.DescriptionCache.open

    def open_on_a_full_disk(self):
        real_open(self)
        self._desc = _Full(self._desc)
        self._files[0] = self._desc
        return self

    with monkeypatch.context() as patch:
        patch.setattr(cache_module.DescriptionCache, "open", open_on_a_full_disk)
        assert main(describe_argv(server, cache)) == 1
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("sova:")]
    assert line == (f"sova: error: cannot write {folder}/descriptions.jsonl: No space left on device; the disk is "
                    "full: free some space, or use a folder on another disk")


class _Full:
    """A file on a full disk: every write fails with ENOSPC (as writing to /dev/full does)."""

    def __init__(self, file):
        self.file, self.name = file, file.name

    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.file, name)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_really_read_only_cache_is_one_line_and_exit_1(server_factory, tmp_path, capsys):
    server = server_factory()
    cache = tmp_path / "cache"
    assert main(describe_argv(server, cache)) == 0
    capsys.readouterr()
    for path in sorted(cache.rglob("*"), reverse=True) + [cache]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        assert main(describe_argv(server, cache)) == 1  # even with nothing left to do
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("sova: error: cannot ") and ": Permission denied; no permission: " in line
    finally:
        for path in [cache, *cache.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.mark.parametrize("content, found", [("[1, 2, 3]", "found list"), ("null", "found NoneType"),
                                            ("{", "not valid JSON (Expecting property name"),
                                            ("[" * 100_000 + "]" * 100_000, "nested more deeply than can be read")])
def test_a_broken_manifest_is_one_line_naming_it(server_factory, tmp_path, capsys, content, found):
    server = server_factory()
    assert main(describe_argv(server, tmp_path / "cache")) == 0
    (manifest,) = tmp_path.rglob("manifest.json")
    manifest.write_text(content)
    capsys.readouterr()
    assert main(describe_argv(server, tmp_path / "cache")) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"sova: error: {manifest}") and found in line
    assert line.endswith("; delete it to have it rewritten")


def test_a_manifest_that_is_a_folder_and_a_deeply_nested_record(server_factory, tmp_path, capsys):
    server = server_factory()
    assert main(describe_argv(server, tmp_path / "cache")) == 0
    (manifest,) = tmp_path.rglob("manifest.json")
    folder = manifest.parent
    manifest.unlink()
    manifest.mkdir()
    capsys.readouterr()
    assert main(describe_argv(server, tmp_path / "cache")) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"sova: error: {manifest} is not a file; delete it to have it rewritten"]
    manifest.rmdir()
    with open(folder / "descriptions.jsonl", "a") as f:
        f.write("[" * 100_000 + "]" * 100_000 + "\n" + json.dumps({"id": "late", "text": "a car"}) + "\n")
    assert main(describe_argv(server, tmp_path / "cache")) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"sova: error: {folder}/descriptions.jsonl, line 7: broken record (nested more deeply than can be read "
        "(thousands of levels)); remove or fix that line, then run again"]


_INTERRUPTED = "sova: interrupted; every finished item is saved: run the same command again to resume"


def test_ctrl_c_ends_the_process_at_once_and_keeps_what_finished(server_factory, tmp_path):
    """Two answers, then a server that never answers: SIGINT ends the process; the two are saved, then resumed."""
    server = server_factory([("slow", 0), ("slow", 0)], repeat=("hang",))
    cache = tmp_path / "cache"
    argv = describe_argv(server, cache, "--concurrency", "1")
    process = subprocess.Popen([sys.executable, "-m", "sova_lib", *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while len(server.requests) < 3 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.requests) == 3  # two answered, the third waiting for an answer that never comes
        process.send_signal(signal.SIGINT)
        start = time.monotonic()
        out, err = process.communicate(timeout=60)
        seconds = time.monotonic() - start
    finally:
        process.kill()
    assert process.returncode == 130 and err.splitlines()[-1] == _INTERRUPTED
    assert seconds < 20  # a generous bound (about half a second): no thread keeps the process alive
    (descriptions,) = cache.rglob("descriptions.jsonl")
    saved = [json.loads(x) for x in descriptions.read_text().splitlines()]
    assert len(saved) == 2 and all(r["text"].startswith("images: ") for r in saved)  # the two answers, whole
    server.repeat = None
    assert main(argv) == 0  # the same command resumes with the four left
    assert len(descriptions.read_text().splitlines()) == 6
    print(f"Ctrl-C: the process ended {seconds:.2f} s after SIGINT")


_PEAK = ("import resource, sys\nfrom sova_lib.cli import main\ncode = main(sys.argv[1:])\n"
         "print('peak-kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\nsys.exit(code)\n")


def _describe_peak_kb(server, cache) -> tuple[int, int, str]:
    """Exit status, peak memory (KB, ``getrusage``) and stderr of ``sova describe`` in a process of its own."""
    done = subprocess.run([sys.executable, "-c", _PEAK, *describe_argv(server, cache)], capture_output=True,
                          text=True, timeout=600)
    peak = int(done.stderr.split("peak-kb ")[1].split()[0])
    return done.returncode, peak, done.stderr


def test_a_100_mb_answer_costs_less_memory_than_its_size(server_factory, tmp_path):
    """A server that never stops talking: every answer is 100 MB; at most 4 MiB of each is read."""
    short = server_factory()
    code, baseline, _ = _describe_peak_kb(short, tmp_path / "short")
    assert code == 0
    endless = server_factory(repeat=("big", 100_000_000))
    code, peak, err = _describe_peak_kb(endless, tmp_path / "endless")
    assert code == 1 and "the server's answer is longer than 4194304 bytes; it was not read" in err
    assert peak - baseline < 100_000  # KB: less than the size of one answer above the same run with short ones
    print(f"peak memory {peak / 1e3:.0f} MB against {baseline / 1e3:.0f} MB with short answers")


def test_a_second_run_on_a_held_cache_stops_in_one_line_before_anything_slow(server_factory, tmp_path):
    """The configuration's lock is taken before the decoder, torch, the server's model list (the weights'
    fingerprint): the second run stops about as soon as a run
    that does nothing (``--help``; a generous bound: twice its time and a second), and has imported none of them."""

    server = server_factory(models=["m"])
    argv = describe_argv(server, tmp_path / "cache")
    assert main(argv) == 0
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    script = ("import sys; from sova_lib.cli import main; code = main(sys.argv[1:]); "
              "print(code, sorted(m for m in ('torch', 'decord', 'transformers', 'ray') if m in sys.modules))")

    def run(args):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env,
                              timeout=120)
        return done, time.monotonic() - started

    requests = len(server.requests)
    from sova_lib.benchmarks.excerpts import QUICKSTART_INPUT
    from sova_lib.describe.runner import configuration_lock, plan_run

    plan = plan_run(make_describer("openai", model="m", base_url=server.url), [], input_name=QUICKSTART_INPUT)
    with configuration_lock(tmp_path / "cache", plan.key):
        (second, took), (idle, baseline) = run(argv), run(["describe", "--help"])
    assert second.stdout == "1 []\n" and idle.stdout.endswith("0 []\n")
    assert second.stderr == (f"sova: error: another run of this configuration is writing to {folder.parent}; "
                             "wait for it to finish or stop it\n")
    assert took < 2 * baseline + 1.0, (took, baseline)  # measured: 0.39 s against 0.20 s
    assert len(server.requests) == requests  # not even the model list was asked for


def test_a_server_that_accepts_requests_and_never_answers_stops_the_run_in_one_line(server_factory, tmp_path, capsys):
    """Scaled down: with --first-token-timeout 0.5 the run stops after two waits of 0.5 s (20 s each by default)."""
    server = server_factory(models=["m"], repeat=("hang",))
    started = time.monotonic()
    assert main(describe_argv(server, tmp_path / "cache", "--first-token-timeout", "0.5")) == 1
    took = time.monotonic() - started
    (line,) = capsys.readouterr().err.splitlines()
    assert re.fullmatch(rf"sova: error: {re.escape(server.url)} gave no answer to any request for model 'm' for \d+ s "
                        r"\(the last: ReadTimeout: no answer within 0\.5 s\): the server is not answering\. Fix: .*",
                        line), line
    assert took < 30, took  # two waits of 0.5 s and a back-off under 1 s, on a busy machine
    (folder,) = (tmp_path / "cache" / "descriptions").iterdir()
    assert (folder / "errors.jsonl").read_text() == ""
    assert "gave no answer" in json.loads((folder / "manifest.json").read_text())["stopped"]["reason"]


def test_a_server_that_streams_slowly_is_not_cut(server_factory, tmp_path, capsys):
    """Scaled down: each answer streams for 1.2 s, four times every limit given, and every clip is described."""
    pieces = [f"{n} " for n in range(12)]
    server = server_factory([("drip", pieces, 0.1)] * 6, models=["m"])
    argv = describe_argv(server, tmp_path / "cache", "--first-token-timeout", "0.3", "--read-timeout", "0.3",
                         "--concurrency", "6")
    assert main(argv) == 0
    # nothing on stderr: that a server naming only its model cannot tell two checkpoints apart is a note of the summary
    out, err = capsys.readouterr()
    assert err == ""
    assert out.count("note: the cache cannot follow the weights: ") == 1
    (path,) = (tmp_path / "cache").rglob("descriptions.jsonl")
    assert [json.loads(line)["text"] for line in path.read_text().splitlines()] == ["".join(pieces)] * 6
    assert len(server.requests) == 6


def test_the_first_reasons_of_each_kind_are_shown_not_only_the_first_five(server_factory, tmp_path, capfd):
    """Six files that do not decode come back first; the server's one refusal is still among the reasons shown."""
    from sova_lib.video.frames import example_videos

    folder = tmp_path / "videos"
    folder.mkdir()
    for k in range(6):
        (folder / f"broken{k}.mp4").write_text("not a video\n")
    (folder / "real.mp4").write_bytes(example_videos()[0].read_bytes())
    server = server_factory([("status", 400, "this clip is refused", {})])
    assert main(["describe", "--backend", "openai", "--model", "m", "--base-url", server.url, "--videos", str(folder),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 1
    out, err = capfd.readouterr()
    assert "  failed by kind: 6 decode (broken" in out and "; 1 refused (real)" in out, out
    shown = [line for line in err.splitlines() if line.startswith("  failed ")]
    assert len(shown) == 3 and sum("VideoError" in line for line in shown) == 2
    assert f"  failed 'real': OpenAIError: HTTP 400 from {server.url}/chat/completions: this clip is refused" in shown
    assert "  ... and 4 more in errors.jsonl" in err
