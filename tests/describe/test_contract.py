"""The describer registry: a backend registered by name is built by name, with its options, on first use."""
import sys

import pytest

from sova_lib.describe import contract
from sova_lib.describe.contract import (
    Describer,
    DescribeRequest,
    PromptedDescriber,
    make_describer,
)


class Shouting:
    """A describer that answers each request with its prompt in capitals (``suffix`` appended)."""

    name = "shouting"
    max_batch_size = 2
    max_concurrency = 1

    def __init__(self, suffix: str = "!"):
        self.suffix = suffix

    def config(self) -> dict:
        return {"suffix": self.suffix}

    def describe(self, requests):
        return [r.prompt.upper() + self.suffix for r in requests]


def test_a_registered_describer_is_made_by_name_with_its_options(monkeypatch):
    monkeypatch.setitem(contract.DESCRIBERS, "shouting", f"{__name__}:Shouting")  # the real registry, restored after
    describer = make_describer("shouting", suffix="?!")
    assert type(describer) is Shouting and isinstance(describer, Describer)
    assert describer.config() == {"suffix": "?!"}
    assert describer.describe([DescribeRequest(0, (), "a car turns left")]) == ["A CAR TURNS LEFT?!"]
    with pytest.raises(ValueError, match=r"unknown describer backend 'shout'; choose one of \[.*'shouting'"):
        make_describer("shout")


def test_a_backend_module_is_imported_only_when_its_describer_is_made(monkeypatch, tmp_path):
    (tmp_path / "late_backend.py").write_text(
        "class Late:\n    name = 'late'\n    max_batch_size = 1\n    max_concurrency = 1\n"
        "    def __init__(self, **options):\n        self.options = options\n"
        "    def config(self):\n        return dict(self.options)\n"
        "    def describe(self, requests):\n        return ['late' for _ in requests]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "late_backend", raising=False)
    monkeypatch.setitem(contract.DESCRIBERS, "late", "late_backend:Late")
    assert "late_backend" not in sys.modules  # registering names the module; it does not import it
    assert make_describer("late", model="m").config() == {"model": "m"}
    assert "late_backend" in sys.modules


class Served(Shouting):
    """``Shouting`` with the optional part of the contract: it counts load() and stop() calls."""

    device = "cuda:1"

    def __init__(self):
        super().__init__()
        self.loads = self.stops = 0

    def load(self):
        self.loads += 1

    def stop(self):
        self.stops += 1

    def run_info(self):
        return {"served_model": "m-1"}


def test_a_prompted_describer_sends_each_item_its_own_fields_and_keeps_the_rest_of_the_inner_describer():
    inner = Served()
    asked = PromptedDescriber(inner, {"a": {"prompt": "first"}, "b": {"prompt": "second", "system_prompt": "s"}},
                              "bench", {"frames": 3})
    requests = [DescribeRequest("a", [], "template"), DescribeRequest("b", [], "template", "x")]
    assert asked.describe(requests) == ["FIRST!", "SECOND!"]
    assert (asked.name, asked.max_batch_size, asked.max_concurrency) == ("shouting", 2, 1)
    assert asked.config() == {"suffix": "!", "bench": {"frames": 3}}
    asked.load(), asked.stop(), asked.stop()
    assert (inner.loads, inner.stops) == (1, 2)
    assert asked.run_info() == {"served_model": "m-1"} and asked.device == "cuda:1"
    plain = PromptedDescriber(Shouting("?"), {}, "bench", {})
    # an inner describer without them: neither has them, and the runner calls none of them
    assert not any(hasattr(plain, name) for name in ("load", "stop", "run_info", "device"))
    assert isinstance(plain, Describer)


def test_backend_keywords_reads_flags_and_settings_as_the_declared_types(monkeypatch):
    """Given flags are kept (None: not given), KEY=VALUE settings read as their declared type, a model dropped for a
    backend that has none; an undeclared key, a wrong type and a missing required option are one-line refusals."""
    given = {"model": "m", "concurrency": 2, "base_url": None}
    assert contract.backend_keywords("openai", given, ["stream=false", "token_timeout=5", "extra_body={\"a\": 1}"]) \
        == {"model": "m", "concurrency": 2, "stream": False, "token_timeout": 5.0, "extra_body": {"a": 1}}
    assert contract.backend_keywords("motion", {"model": "m"}, ["min_area=0"]) == {"min_area": 0.0}
    with pytest.raises(ValueError, match=r"^--concurrency does not apply to the motion backend$"):
        contract.backend_keywords("motion", {"concurrency": 2})
    with pytest.raises(ValueError, match=r"^--backend-option top_p: the openai backend has no such option; its "):
        contract.backend_keywords("openai", {"model": "m"}, ["top_p=0.5"])
    with pytest.raises(ValueError, match=r"^--backend-option stream: stream takes true or false, not 'maybe'$"):
        contract.backend_keywords("openai", {"model": "m"}, ["stream=maybe"])
    with pytest.raises(ValueError, match=r"^--backend-option 'stream' is not KEY=VALUE$"):
        contract.backend_keywords("openai", {"model": "m"}, ["stream"])
    with pytest.raises(ValueError, match=r"^the openai backend needs --model$"):
        contract.backend_keywords("openai", {})
    monkeypatch.delenv("SOVA_TEST_UNSET_KEY", raising=False)
    with pytest.raises(ValueError, match=r"^--api-key-env names an environment variable that is not set"):
        contract.backend_keywords("openai", {"model": "m", "api_key_env": "SOVA_TEST_UNSET_KEY"})
