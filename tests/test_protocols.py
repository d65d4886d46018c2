"""The protocol registry fills itself from its providers on the first lookup, never by importing the package."""
import subprocess
import sys

import numpy as np
import pytest

from sova_lib import protocols
from sova_lib.protocols import PROTOCOL_PROVIDERS, Protocol, ProtocolRegistry, Task, get_protocol, register_protocol
from tests.paths import ROOT


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter on this checkout; its stdout."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}).stdout


def test_importing_the_metrics_loads_the_core_alone():
    loaded = _fresh("import sys, sova_lib.metrics; print(' '.join(m for m in sys.modules if m.startswith('sova_lib')))")
    # the package (its public names load on first use), its version and the metrics: no benchmark, at most 6
    assert sorted(loaded.split()) == ["sova_lib", "sova_lib._version", "sova_lib.metrics"]


def test_a_lookup_in_a_fresh_interpreter_finds_sovabench_protocols_without_importing_the_benchmarks_first():
    out = _fresh(
        "import sys\n"
        "from sova_lib.protocols import get_protocol\n"
        "print('before', any(m.startswith('sova_lib.benchmarks') for m in sys.modules))\n"
        "p = get_protocol('inter-pair')\n"
        "print(p.benchmark, p.metric, len(p.clips()), get_protocol('quickstart-direction').benchmark)\n")
    assert out.splitlines() == ["before False", "SOVABench mAP 9882 the bundled examples"]


def test_the_registry_lists_every_provider_protocol():
    # SOVABench's four (sova_lib.benchmarks.sovabench.protocols) and the excerpts' one; a provider imported
    # earlier by other code registers earlier, so the order is not fixed
    assert sorted(protocols.PROTOCOLS) == ["inter-pair", "inter-pair-constrained", "intra-pair",
                                           "quickstart-direction", "two-class"]
    assert len(protocols.PROTOCOLS) == 5
    assert PROTOCOL_PROVIDERS == ("sova_lib.benchmarks.sovabench.protocols", "sova_lib.benchmarks.excerpts.protocols")


def _toy(name: str) -> Protocol:
    labels = np.array(["a", "a", "b"])
    every = np.arange(3, dtype=np.int64)
    return Protocol(name, "mAP", "toy", lambda: (), lambda: [Task(name, every, every, labels)], lambda c: "")


def test_a_provider_is_imported_on_the_first_read_and_its_protocols_found(tmp_path, monkeypatch):
    (tmp_path / "toy_provider.py").write_text(
        "from sova_lib.protocols import register_protocol\nfrom tests.test_protocols import _toy\n"
        "register_protocol(_toy('toy'))\nregister_protocol(_toy('toy-2'))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "toy_provider", raising=False)
    registry = ProtocolRegistry(("toy_provider",))
    monkeypatch.setattr(protocols, "PROTOCOLS", registry)
    assert "toy_provider" not in sys.modules  # making the registry imports nothing
    assert get_protocol("toy").name == "toy" and "toy_provider" in sys.modules
    assert sorted(registry) == ["toy", "toy-2"] and len(registry) == 2
    with pytest.raises(ValueError, match=r"unknown protocol 'toys'; choose one of \['toy', 'toy-2'\]"):
        get_protocol("toys")
    register_protocol(_toy("toy-3"))  # registered by hand after the providers: found as well
    assert get_protocol("toy-3").tasks()[0].relevance().tolist() == [[True, True, False]] * 2 + [[False, False, True]]


def test_a_provider_that_fails_to_import_fails_the_lookup_and_is_tried_again(tmp_path, monkeypatch):
    provider = tmp_path / "flaky_provider.py"
    provider.write_text("raise ImportError('flaky_provider: not ready')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "flaky_provider", raising=False)
    monkeypatch.setattr(protocols, "PROTOCOLS", ProtocolRegistry(("flaky_provider",)))
    with pytest.raises(ImportError, match="not ready"):
        get_protocol("toy")
    provider.write_text("from sova_lib.protocols import register_protocol\nfrom tests.test_protocols import _toy\n"
                        "register_protocol(_toy('toy'))\n")
    assert get_protocol("toy").name == "toy"
