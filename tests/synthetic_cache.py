"""A description cache of constructed texts, written through the library's one cache writer (for tests)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sova_lib.describe.cache import cache_key, open_cache
from sova_lib.describe.prompts import Prompt


def write_synthetic_cache(cache_dir, texts: dict, *, name: str = "synthetic-demo", description: str) -> Path:
    """Write ``texts`` as a description cache marked synthetic; returns its folder.

    It goes through the one cache writer (``sova_lib.describe.cache.open_cache``)
    with ``source = "synthetic"``: backend ``synthetic``, no model, and the key
    holding how the texts were made and their SHA-256, so other texts get
    another folder. ``source_details.description`` says how they were made.
    """
    body = "".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in texts.items())
    describer = {"model": "none (synthetic)", "construction": description,
                 "texts_sha256": hashlib.sha256(body.encode()).hexdigest()}
    key = cache_key("synthetic", describer, Prompt("none", "", ""), None, sampler_version="none", crop_source="none")
    with open_cache(cache_dir, key, source="synthetic", name=name, details={"description": description}) as cache:
        for k, v in texts.items():
            if k not in cache.done:
                cache.add(k, v)
        cache.update_manifest()
    return cache.folder
