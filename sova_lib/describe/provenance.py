"""What made a description cache, in the fields a result record carries.

A score of a description cache is only as meaningful as the name of what
wrote the texts. ``cache_provenance(manifest, folder)`` reads a cache's
``manifest.json`` (``sova_lib.describe.cache``) into the record fields
(``sova_lib.records.RECORD_FIELDS``) that name it: the folder, model id,
weights fingerprint (``None`` when the manifest has none), prompt, sampling
rate or frame count, key hash and the software that wrote it. The command
line (``sova sovabench evaluate --out``) and the notebooks read a cache
through this one function, so the same cache gives the same record.
"""
from __future__ import annotations

import json
from pathlib import Path

from sova_lib.describe.prompts import PROMPTS

__all__ = ["cache_provenance", "folder_provenance", "prompt_name", "read_cache_manifest"]


def prompt_name(manifest: dict) -> str:
    """The prompt preset of a manifest (``general``, ``task-aware``, ...), else the prompt's own text.

    A free-text prompt that equals a preset's text is named by that preset.
    """
    prompt = manifest["prompt"]
    if prompt["name"] != "custom":
        return str(prompt["name"])
    text = (prompt["video"] or prompt["image"] or "").strip()
    presets = {t.strip().lower(): name for name, p in PROMPTS.items() for t in (p.video, p.image)
               if name in ("general", "task-aware")}
    return presets.get(text.lower(), text)


def read_cache_manifest(folder: str | Path) -> dict | None:
    """The ``manifest.json`` of a cache ``folder``, or ``None`` when ``folder`` is not a folder holding one."""
    path = Path(folder) / "manifest.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg})") from None


def cache_provenance(manifest: dict, folder: str | Path) -> dict:
    """The record fields naming the cache ``folder`` whose manifest is ``manifest``.

    ``cache`` (the folder's name), ``config_hash``, ``model``,
    ``fingerprint`` (the manifest's fingerprint of the weights, ``None`` when
    it records none), ``prompt`` (``prompt_name``), ``fps``, ``frames`` (a
    fixed frame count, ``None`` when sampled by rate) and ``versions`` (the
    software that wrote the texts, as the manifest lists it).
    """
    fps = manifest.get("fps")
    return {"cache": Path(folder).name, "config_hash": manifest.get("config_hash"),
            "model": None if manifest.get("model") is None else str(manifest["model"]),
            "fingerprint": manifest.get("fingerprint"), "prompt": prompt_name(manifest),
            "fps": None if fps is None else float(fps), "frames": manifest.get("frames"),
            "versions": manifest.get("versions")}


def folder_provenance(path: str | Path) -> dict:
    """``cache_provenance`` of ``path`` when it is a describe cache folder (it holds a ``manifest.json``); ``{}``
    for anything else (a JSON Lines file, a folder of another tool)."""
    manifest = read_cache_manifest(path)
    return {} if manifest is None else cache_provenance(manifest, path)
