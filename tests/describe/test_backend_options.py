"""Each backend declares its options once (its factory's ``Options``), which its constructor takes whole (or as
keywords), and which converts ``--backend-option`` text to the declared types."""
import dataclasses
import inspect

import pytest

from sova_lib.describe import contract

#: Keywords a factory takes from Python alone (test hooks), which its declaration leaves out.
IN_PROCESS = {"openai": {"rng", "sleep"}}


@pytest.mark.parametrize("backend", sorted(contract.DESCRIBERS))
def test_each_backends_declaration_matches_its_factorys_keywords(backend):
    factory = contract.describer_factory(backend)
    declared = contract.backend_options(backend)
    assert dataclasses.is_dataclass(factory.Options) and factory.Options.__dataclass_params__.frozen
    assert all(option.help for option in declared.values())
    params = inspect.signature(factory).parameters
    required = {key: "m" for key, option in declared.items() if option.required}
    options = factory.Options(**required)
    assert factory(options).options is options and factory(**required).options == options
    assert set(params) == {"options", "given"} | IN_PROCESS.get(backend, set())  # nothing declared twice
    with pytest.raises(TypeError):
        factory(nonsense=1)
    with pytest.raises(TypeError) as both:
        factory(options, **dataclasses.asdict(options))
    assert str(both.value) == f"give the {backend} backend its options or their keywords, not both"


def test_backend_options_are_read_as_their_declared_types():
    declared = contract.backend_options("transformers") | contract.backend_options("openai")
    value = contract.option_value
    assert value(declared["batch_size"], "4") == 4 and type(value(declared["batch_size"], "4")) is int
    assert value(declared["connect_timeout"], "10") == 10.0 and type(value(declared["connect_timeout"], "10")) is float
    assert value(declared["stream"], "false") is False and value(declared["stream"], "True") is True
    assert value(declared["revision"], "null") is None and value(declared["revision"], "main") == "main"
    assert value(declared["device_map"], "auto") == "auto"
    assert value(declared["device_map"], '{"": 0}') == {"": 0}
    assert value(declared["processor_kwargs"], '{"max_pixels": 401408}') == {"max_pixels": 401408}
    assert value(declared["frame_packing"], "3") == 3 and value(declared["frame_packing"], "null") is None
    assert value(declared["video_input"], '"frames"') == '"frames"'  # text is taken as written
    for key, text, words in [("batch_size", "two", "an integer"), ("batch_size", "1.5", "an integer"),
                             ("stream", "yes", "true or false"), ("connect_timeout", "soon", "a number"),
                             ("processor_kwargs", "[1]", "a JSON object or null"),
                             ("frame_packing", "x", "an integer or null")]:
        with pytest.raises(ValueError) as caught:
            value(declared[key], text)
        assert str(caught.value) == f"{key} takes {words}, not {text!r}"


def test_a_factory_without_options_is_read_from_its_signature(monkeypatch):
    monkeypatch.setitem(contract.DESCRIBERS, "plain", f"{__name__}:Plain")
    declared = contract.backend_options("plain")
    assert list(declared) == ["model", "size"] and declared["model"].required and declared["size"].default == 2
    assert contract.option_value(declared["size"], "3") == 3 and contract.option_value(declared["size"], "x") == "x"
    monkeypatch.setitem(contract.DESCRIBERS, "open", f"{__name__}:Open")
    assert contract.backend_options("open") is None


class Plain:
    def __init__(self, model, size=2):
        pass


class Open:
    def __init__(self, **options):
        pass
