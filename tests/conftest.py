"""Shared fixtures, and how the suite runs on every core (``pytest -n auto``, as ``make test`` runs it).

Under pytest-xdist each test module is one unit of work, run whole by one
worker, so module-scoped fixtures (a notebook run, a tiny model, a local Ray
instance) are built once; the modules that start a local Ray instance (file
names with ``ray``) form one unit, so two Ray instances never compete for the
cores. The modules that took longest in the previous run start first (their
seconds are kept in pytest's cache, ``sova/module_seconds``), and the
controller records the suite's wall time there (``sova/last_run``), which
``bench/bench_feedback.py`` prints. ``$SOVA_CACHE`` points into each
process's own temporary folder, so no test writes into the repository.

A suite started with SIGINT ignored (a script's background job, ``nohup``)
hears Ctrl-C again, and so do the commands its tests start: those that
interrupt a run with SIGINT send what a terminal sends.
"""
import os
import re
import signal
import time
from importlib.util import find_spec

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # inherited as ignored; a started command would keep it so
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def encoder(tmp_path_factory):
    """The real offline all-MiniLM-L6-v2, loaded once, with a throw-away cache."""
    from sova_lib.encoder import SentenceEncoder

    return SentenceEncoder(cache_dir=tmp_path_factory.mktemp("cache"), show_progress=False)


@pytest.fixture
def server_factory():
    """Makes loopback chat-completions servers (``tests.chat_server.ChatServer``), all closed after the test."""
    from tests.chat_server import ChatServer

    servers = []

    def make(*args, **kwargs):
        servers.append(ChatServer(*args, **kwargs))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


@pytest.fixture(scope="session", autouse=True)
def _private_default_cache(tmp_path_factory):
    """``$SOVA_CACHE``, the default ``--cache-dir``, and ``$SOVA_DIGEST_MEMO`` point into this process's temporary
    folder during the tests: a test that leaves the defaults writes neither into the repository's ``cache/``, nor
    into the user's cache folder, nor into another worker's."""
    private = {"SOVA_CACHE": tmp_path_factory.mktemp("default-cache"),  # and the memo of model files' digests
               "SOVA_DIGEST_MEMO": tmp_path_factory.mktemp("digests") / "file-digests.json"}
    saved = {name: os.environ.get(name) for name in private}
    os.environ.update({name: str(path) for name, path in private.items()})
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _unit(nodeid: str) -> str:
    """The unit of work of a test: its module, or ``ray`` for every module that starts a local Ray instance."""
    module = _module(nodeid)
    return "ray" if re.search(r"(^|_)ray(_|\.py$)", os.path.basename(module)) else module


def _parallel(config) -> bool:
    return bool(getattr(config.option, "numprocesses", None))


if find_spec("xdist") is not None:
    def pytest_xdist_make_scheduler(config, log):
        from xdist.scheduler import LoadScopeScheduling

        class ModuleUnits(LoadScopeScheduling):
            def _split_scope(self, nodeid):
                return _unit(nodeid)

        config.option.loadscopereorder = False  # keep the collection's order: slowest units first
        return ModuleUnits(config, log)


def pytest_collection_modifyitems(config, items):
    """Under xdist, the units that took longest last time first (each worker collects the same order)."""
    if not _parallel(config) or getattr(config, "cache", None) is None:
        return
    seconds = config.cache.get("sova/module_seconds", {})
    unit_seconds: dict = {}
    for item in items:
        unit = _unit(item.nodeid)
        unit_seconds[unit] = max(unit_seconds.get(unit, 0.0), seconds.get(_module(item.nodeid), 0.0))
    ray = sum(s for m, s in seconds.items() if _unit(m) == "ray")
    if "ray" in unit_seconds:
        unit_seconds["ray"] = ray
    items.sort(key=lambda item: -unit_seconds[_unit(item.nodeid)])  # stable: within a unit, the file's order


_TIMES: dict = {"start": None, "modules": {}, "tests": 0}


def pytest_sessionstart(session):
    _TIMES["start"] = time.perf_counter()


def pytest_runtest_logreport(report):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker: the controller counts
    module = _module(report.nodeid)
    _TIMES["modules"][module] = _TIMES["modules"].get(module, 0.0) + report.duration
    if report.when == "call":
        _TIMES["tests"] += 1


def pytest_sessionfinish(session, exitstatus):
    """The controller (or a run without xdist) keeps each module's seconds and, for a whole-suite run, its wall time."""
    config = session.config
    if os.environ.get("PYTEST_XDIST_WORKER") or getattr(config, "cache", None) is None or _TIMES["start"] is None:
        return
    known = config.cache.get("sova/module_seconds", {})
    config.cache.set("sova/module_seconds", {**known, **{m: round(s, 2) for m, s in _TIMES["modules"].items()}})
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.keyword \
            and not config.option.markexpr:
        workers = getattr(config.option, "numprocesses", None) or 0
        config.cache.set("sova/last_run", {
            "wall_seconds": round(time.perf_counter() - _TIMES["start"], 1),
            "test_seconds": round(sum(_TIMES["modules"].values()), 1), "tests": _TIMES["tests"],
            "workers": workers if isinstance(workers, int) else str(workers), "exitstatus": int(exitstatus),
            "finished": time.strftime("%Y-%m-%d %H:%M:%S"), "cpus": os.cpu_count()})
