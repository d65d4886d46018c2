"""What made a description cache, in the fields a result record carries: the read side of a cache folder.

A score of a description cache is only as meaningful as the name of what
wrote the texts. ``cache_provenance(manifest, folder)`` reads a cache's
``manifest.json`` (``sova_lib.describe.cache``) into the record fields
(``sova_lib.records.RECORD_FIELDS``) that name it: the folder, model id,
weights fingerprint (``None`` when the manifest has none), prompt, sampling
rate or frame count, key hash and the software that wrote it. The command
line (``sova sovabench evaluate --out``) and the notebooks read a cache
through this one function, so the same cache gives the same record.
``config_hash`` is the key's hash that names a folder, and ``MANIFEST_SCHEMA`` the version of the manifest's
layout (both written by ``sova_lib.describe.cache``). Scoring reads a cache through this module alone: it needs
json and hashlib, never the describe runner or the video code.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

__all__ = ["MANIFEST_SCHEMA", "cache_provenance", "check_manifest", "config_hash", "folder_provenance",
           "prompt_name", "read_cache_manifest"]

#: Version of the ``manifest.json`` layout written by ``sova_lib.describe.cache.new_manifest``.
MANIFEST_SCHEMA = 1


def config_hash(key: dict) -> str:
    """12 hex digits of the SHA-256 of ``key`` as canonical JSON."""
    blob = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def prompt_name(manifest: dict) -> str:
    """The prompt preset of a manifest (``general``, ``task-aware``, ...), else the prompt's own text.

    A free-text prompt that equals a preset's text is named by that preset.
    """
    prompt = manifest["prompt"]
    if prompt["name"] != "custom":
        return str(prompt["name"])
    from sova_lib.describe.prompts import PROMPTS  # only a free-text prompt is compared with the presets

    text = (prompt["video"] or prompt["image"] or "").strip()
    presets = {t.strip().lower(): name for name, p in PROMPTS.items() for t in (p.video, p.image)
               if name in ("general", "task-aware")}
    return presets.get(text.lower(), text)


def read_cache_manifest(folder: str | Path) -> dict | None:
    """The ``manifest.json`` of a cache ``folder``, checked (``check_manifest``), or ``None`` when ``folder`` is
    not a folder holding one. ``ValueError`` in one line naming the file for one that is not UTF-8 JSON or fails
    a check."""
    path = Path(folder) / "manifest.json"
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text (byte {err.start}); a describe run writes its manifest as "
                         "UTF-8 JSON") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from None
    check_manifest(manifest, path)
    return manifest


def check_manifest(manifest, path: str | Path) -> None:
    """Check that ``manifest`` (read from ``path``, a cache folder's ``manifest.json``) names what wrote the texts:
    a JSON object holding every field of its key (``hash_fields``) and a ``prompt``, whose fields hash
    (``config_hash``) to the ``config_hash`` it records and to the hash that ends its folder's name
    (``<name>__<hash>``), with ``model`` and ``revision`` those of its ``describer``. ``ValueError`` in one
    line naming the file (and both hashes where they differ) otherwise: a manifest edited after it was written,
    or a folder renamed to another's key, must not name a score."""
    path = Path(path)
    if not isinstance(manifest, dict):
        raise ValueError(f"{path}: not a cache manifest (a JSON object is expected, not {type(manifest).__name__})")
    fields = manifest.get("hash_fields")
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise ValueError(f"{path}: not a cache manifest (no list of 'hash_fields')")
    for name in [*fields, "prompt", "config_hash"]:
        if name not in manifest:
            raise ValueError(f"{path}: no field {name!r}; a describe run writes every field of its key")
    if not isinstance(manifest["prompt"], dict) or "name" not in manifest["prompt"]:
        raise ValueError(f"{path}: field 'prompt' is not a prompt (an object with a 'name')")
    found = config_hash({name: manifest[name] for name in fields})
    if found != manifest["config_hash"]:
        raise ValueError(f"{path}: its fields hash to {found}, not to the config_hash {manifest['config_hash']} it "
                         "records: it was edited after the run; describe again, or restore the file")
    named = re.fullmatch(r".*__([0-9a-f]{12})", path.parent.name)
    if named and named.group(1) != found:
        raise ValueError(f"{path}: its fields hash to {found}, but its folder {path.parent.name} is named for "
                         f"{named.group(1)}: it was edited or moved after the run; describe again, or restore it")
    describer = manifest.get("describer") if isinstance(manifest.get("describer"), dict) else {}
    for name in ("model", "revision"):
        if name in manifest and manifest[name] != describer.get(name):
            raise ValueError(f"{path}: {name} {manifest[name]!r} is not its describer's {describer.get(name)!r} "
                             "(part of the key): it was edited after the run; describe again, or restore the file")


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
