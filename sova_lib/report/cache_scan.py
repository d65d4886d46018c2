"""Finding description caches under a folder, and saying what made each one.

A description cache is a folder ``<cache>/descriptions/<name>__<hash>/``
holding ``descriptions.jsonl`` and ``manifest.json`` as ``sova describe``
writes them (``sova_lib.describe.cache``). ``find_description_caches`` reads every
one below a cache root and records which protocols' clips it covers;
``source_label`` names what produced it (an MLLM by model id and prompt, the
classical motion describer as such, a synthetic demonstration as synthetic).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from sova_lib.describe.provenance import MANIFEST_SCHEMA, prompt_name
from sova_lib.item_vectors import read_descriptions
from sova_lib.protocols import PROTOCOLS
from sova_lib.records import fingerprint_label

__all__ = ["MODEL_IDS", "FoundCache", "caches_frame", "find_description_caches", "paper_model", "source_label",
           "sovabench_caches"]

#: Paper model name -> public model ids a description cache may name (case-insensitive).
MODEL_IDS: dict[str, tuple[str, ...]] = {
    "MiniCPM-V 4.5": ("openbmb/MiniCPM-V-4_5",),
    "InternVL3.5 8B": ("OpenGVLab/InternVL3_5-8B", "OpenGVLab/InternVL3_5-8B-HF"),
    "InternVL3.5 2B": ("OpenGVLab/InternVL3_5-2B", "OpenGVLab/InternVL3_5-2B-HF"),
    "VideoLLaVA 7B": ("LanguageBind/Video-LLaVA-7B-hf", "LanguageBind/Video-LLaVA-7B"),
    "VideoLlama3 7B": ("DAMO-NLP-SG/VideoLLaMA3-7B",),
    "VideoChat-R1 7B": ("OpenGVLab/VideoChat-R1_7B",),
    "Gemini 2.5 Flash": ("gemini-2.5-flash",),
    "Qwen3-VL 235B A22B": ("Qwen/Qwen3-VL-235B-A22B-Instruct",),
}


def paper_model(model_id: str, known: dict = MODEL_IDS) -> str | None:
    """The paper's name of the model ``model_id`` among ``known`` (paper name -> ids; case-insensitive), or None."""
    return next((p for p, ids in known.items() if model_id.lower() in (i.lower() for i in ids)), None)


@dataclass
class FoundCache:
    """One description cache folder.

    ``texts`` maps id -> description; ``manifest`` is ``manifest.json`` (``{}``
    when absent); ``coverage`` maps each protocol to ``(clips present, clips
    needed)``; ``benchmark_ids`` counts the ids that are SOVABench clips.
    """

    path: Path
    texts: dict
    manifest: dict
    coverage: dict = field(default_factory=dict)
    benchmark_ids: int = 0

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def model(self) -> str:
        return str(self.manifest["model"])

    @property
    def prompt(self) -> str:
        return prompt_name(self.manifest)

    @property
    def fps(self) -> float | None:
        return None if self.manifest["fps"] is None else float(self.manifest["fps"])

    @property
    def frames(self) -> int | None:
        """The fixed frame count per clip of a ``--frames`` run; None when frames were sampled by rate."""
        return None if self.manifest.get("frames") is None else int(self.manifest["frames"])

    @property
    def label(self) -> str:
        return source_label(self.manifest)

    @property
    def is_sovabench(self) -> bool:
        """True when every id is a SOVABench clip index."""
        return self.benchmark_ids > 0 and self.benchmark_ids == len(self.texts)

    def covers(self, protocol: str) -> bool:
        present, needed = self.coverage.get(protocol, (0, 1))
        return present == needed

    def missing(self, protocol: str) -> int:
        """How many of ``protocol``'s clips the cache lacks (scored as failures; ``evaluation.evaluate``)."""
        present, needed = self.coverage.get(protocol, (0, 1))
        return needed - present

    def scores(self, protocol: str) -> bool:
        """True when the cache holds at least one of ``protocol``'s clips, so that it can be scored on it."""
        return self.coverage.get(protocol, (0, 1))[0] > 0


def source_label(manifest: dict) -> str:
    """A name that says what produced a cache: model (with a short name of its weights' fingerprint,
    ``records.fingerprint_label``, so two checkpoints of one model read apart) and prompt, or what the describer
    is."""
    backend, model, source = manifest["backend"], str(manifest["model"]), manifest["source"]
    if source == "synthetic":
        return f"synthetic demonstration ({manifest['source_details'].get('description', 'constructed texts')})"
    prompt = prompt_name(manifest)
    if backend == "motion":
        return "motion describer (classical OpenCV motion analysis, not an MLLM)"
    paper = paper_model(model)
    shown = f"{paper} [{model}]" if paper else model
    weights = fingerprint_label(manifest.get("fingerprint"))
    shown += f" @{weights}" if weights else ""
    how = ", ".join(x for x in (prompt, backend, "imported descriptions" if source == "import" else "") if x)
    return f"{shown} ({how})"


def find_description_caches(cache_dir: str | Path) -> list[FoundCache]:
    """Every folder below ``<cache_dir>/descriptions`` holding a ``descriptions.jsonl``, sorted by path.

    A missing ``descriptions`` folder gives an empty list. A missing,
    unreadable or outdated ``manifest.json`` raises ``ValueError`` naming the file.
    """

    root = Path(cache_dir) / "descriptions"
    if not root.is_dir():
        return []
    wanted = {name: set(p.ids().tolist()) for name, p in PROTOCOLS.items() if p.benchmark == "SOVABench"}
    every = set().union(*wanted.values())
    caches = []
    for jsonl in sorted(root.rglob("descriptions.jsonl")):
        folder = jsonl.parent
        path = folder / "manifest.json"
        try:
            manifest = json.loads(path.read_text())
        except FileNotFoundError:
            raise ValueError(f"{folder}: no manifest.json; a cache folder is made by sova describe or sova import") from None
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON ({err.msg})") from None
        if manifest.get("schema") != MANIFEST_SCHEMA:
            raise ValueError(f"{path}: manifest schema {manifest.get('schema')!r}, expected {MANIFEST_SCHEMA}; "
                             "describe or import the cache again with this version of sova_lib")
        texts = read_descriptions(folder)
        ids = set(texts)
        coverage = {p: (len(ids & need), len(need)) for p, need in wanted.items()}
        caches.append(FoundCache(folder, texts, manifest, coverage, len(ids & every)))
    return caches


def sovabench_caches(caches) -> list[FoundCache]:
    """The caches whose ids are all SOVABench clips."""
    return [c for c in caches if c.is_sovabench]


def caches_frame(caches, protocols=("inter-pair", "inter-pair-constrained", "intra-pair")):
    """One row per cache: what made it, how many items, and which protocols it is scored on (or why it is skipped).

    ``fps`` is the sampling rate, or for a run of a fixed frame count per clip that count (``"8 frames"``).

    A cache is scored on every protocol of which it holds a clip; the clips it
    lacks count as failures, and the status says how many.
    """
    import pandas as pd  # here, so that naming a cache (``source_label``) loads no pandas
    rows = []
    for c in caches:
        rate = c.fps if c.fps is not None or c.frames is None else f"{c.frames} frames"  # a --frames run
        row = {"cache": c.name, "source": c.label, "fps": rate, "items": len(c.texts),
               "SOVABench clips": c.benchmark_ids, **{p: "/".join(map(str, c.coverage[p])) for p in protocols}}
        if not c.benchmark_ids:
            row["status"] = "skipped: its ids are not SOVABench clips"
        elif not c.is_sovabench:
            row["status"] = f"skipped: {len(c.texts) - c.benchmark_ids} ids are not SOVABench clips"
        else:
            scored = [p + (f" ({c.missing(p)} missing, counted as failures)" if c.missing(p) else "")
                      for p in protocols if c.scores(p)]
            row["status"] = "scored on " + ", ".join(scored) if scored else "skipped: holds no clip of these protocols"
        rows.append(row)
    return pd.DataFrame(rows, columns=["cache", "source", "fps", "items", "SOVABench clips", *protocols, "status"])
