import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def encoder(tmp_path_factory):
    """The real offline all-MiniLM-L6-v2, loaded once, with a throw-away cache."""
    from sova_lib.embed import SentenceEncoder

    return SentenceEncoder(cache_dir=tmp_path_factory.mktemp("cache"), show_progress=False)
