"""Ablation tables of the MLLM-to-Embedding framework (SOVABench paper, Tables 5, 6 and 7).

Each ablation scores the SOVABench description caches that exist (see
``paper.results``) under varied settings and sets the paper's numbers
beside them:

* text splitting (Table 5): sentences with the maximum cosine against one
  embedding of the whole text; the paper measured it on image benchmarks;
* set aggregation: maximum, mean or median cosine over sentence pairs;
* sentence encoder (Table 6): every encoder that loads here (offline, only
  all-MiniLM-L6-v2), each with its settings (``ENCODER_SETTINGS``); the
  others are listed as not computed, with the reason;
* sampling rate (Table 7): caches that differ in the ``fps`` of their manifest.

With no SOVABench cache every table says so (``no_cache_note``) instead of
showing a number. Values are percentages; intervals are 95% bootstrap
intervals over queries.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from sova_lib.encoder import SentenceEncoder
from sova_lib.item_vectors import embed_descriptions
from sova_lib.records import score_cell
from sova_lib.report.cache_scan import sovabench_caches

from paper.results import NOT_COMPUTED, evaluate_cache, paper_results

__all__ = ["ENCODER_IDS", "ENCODER_SETTINGS", "ablation_rows", "encoder_rows", "encoder_table", "fps_compare", "no_cache_note",
           "paper_wide", "settings_table"]


def ablation_rows(caches, encoders, protocols, settings, *, ties: str = "expected", bootstrap: int = 0,
                  seed: int = 0) -> list[dict]:
    """Each SOVABench cache scored with each encoder under each ``(sentences, aggregate)`` of ``settings``.

    ``encoders`` is one ``SentenceEncoder`` or a list of them; ``settings``
    a list of ``(sentences: bool, aggregate: str)``. Each cache is embedded
    once per encoder and splitting mode. Returns the ``evaluate_cache``
    records (none when no SOVABench cache is given).
    """
    encoders = encoders if isinstance(encoders, (list, tuple)) else [encoders]
    rows = []
    for cache in sovabench_caches(caches):
        for encoder in encoders:
            for sentences in dict.fromkeys(s for s, _ in settings):
                covered = any(cache.scores(p) for p in protocols)
                items = embed_descriptions(cache.texts, encoder, sentences=sentences) if covered else None
                for aggregate in [a for s, a in settings if s == sentences]:
                    rows += evaluate_cache(cache, encoder, protocols, aggregate=aggregate, sentences=sentences,
                                           ties=ties, bootstrap=bootstrap, seed=seed, items=items)
    return rows


def encoder_rows(names, *, cache_dir=None):
    """Which sentence encoders load here: one row per name with ``available`` and a ``reason``.

    Returns ``(frame, encoders)``, where ``encoders`` maps each available
    name to a loaded ``SentenceEncoder``, made with the name's
    ``ENCODER_SETTINGS`` (none for a name not listed there).
    """
    rows, encoders = [], {}
    for name in names:
        try:
            settings = ENCODER_SETTINGS.get(name, {}).get("options", {})
            encoders[name] = SentenceEncoder(name, cache_dir=cache_dir, show_progress=False, **settings)
            rows.append({"encoder": name, "available": True, "reason": "loads offline here"})
        except RuntimeError as err:
            reason = ("weights not on this machine and the model hub not reachable" if "could not be downloaded" in str(err)
                      else str(err).split(". ")[0])
            rows.append({"encoder": name, "available": False, "reason": reason})
    return pd.DataFrame(rows), encoders


#: Table 6's sentence encoders (paper name -> public id that ``SentenceEncoder`` loads).
ENCODER_IDS = {
    "CLIP-ViT-L-14 (Text tower)": "sentence-transformers/clip-ViT-L-14",
    "all-MiniLM-L6-v2": "all-MiniLM-L6-v2",
    "EmbeddingGemma": "google/embeddinggemma-300m",
    "GTE-Large-8152": "Alibaba-NLP/gte-large-en-v1.5",
    "mE5 Large Instruct": "intfloat/multilingual-e5-large-instruct",
    "Qwen3 Embedding 0.6B": "Qwen/Qwen3-Embedding-0.6B",
}

#: The instruction the E5 and Qwen3 Embedding evaluation code gives a symmetric similarity (STS) task, put before
#: every sentence of it: microsoft/unilm, ``e5/mteb_except_retrieval_eval.py`` (``main``: one prompt for all the
#: sentences of a task, from ``get_task_def_by_task_name_and_type`` in ``e5/utils.py``, "Instruct: {task}\nQuery: ");
#: QwenLM/Qwen3-Embedding, ``evaluation/qwen3_embedding_model.py`` (``get_instruction``, its STS branch) in the
#: template of ``evaluation/run_mteb.sh`` ("Instruct: {}\nQuery:").
_E5_STS = "Instruct: Retrieve semantically similar text.\nQuery: "
_QWEN3_STS = "Instruct: Retrieve semantically similar text\nQuery:"

#: Table 6's encoders (by id) -> the ``SentenceEncoder`` keywords they are loaded with (``options``) and why
#: (``reason``). The paper names the encoders and nothing of their settings. The framework compares sentences
#: with sentences, each sentence on both sides of a comparison, so an encoder with query and document prompts
#: gets its one prompt for symmetric similarity on every sentence (docs/sovabench.md, "The sentence encoders of
#: Table 6").
ENCODER_SETTINGS: dict[str, dict] = {
    "Alibaba-NLP/gte-large-en-v1.5": {
        "options": {"trust_remote_code": True},
        "reason": "its config.json maps the model through auto_map to modeling code in the hub repository "
                  "Alibaba-NLP/new-impl, which transformers runs only with trust_remote_code; it has no prompts",
    },
    "google/embeddinggemma-300m": {
        "options": {"prompt_name": "STS"},
        "reason": "its sentence-transformers config names one prompt per task (query, document, STS, ...); STS "
                  "is the one for sentence similarity",
    },
    "intfloat/multilingual-e5-large-instruct": {
        "options": {"prompt": _E5_STS},
        "reason": "its model card asks for an instruction before each query and none before a document; E5's "
                  "evaluation code puts the STS instruction before every sentence of a similarity task",
    },
    "Qwen/Qwen3-Embedding-0.6B": {
        "options": {"prompt": _QWEN3_STS},
        "reason": "its model card asks for an instruction before each query and none before a document; its "
                  "evaluation code puts the STS instruction before every sentence of a similarity task",
    },
    "all-MiniLM-L6-v2": {"options": {}, "reason": "no prompts, no code of its own"},
    "sentence-transformers/clip-ViT-L-14": {"options": {}, "reason": "no prompts, no code of its own"},
}


def no_cache_note(cache_dir) -> str:
    """The sentence a table shows when no SOVABench description cache exists (names the folder, not its full path)."""
    folder = Path(cache_dir).resolve().name or str(cache_dir)
    return (f"no SOVABench description cache in {folder}/descriptions: nothing computed here "
            "(describe the benchmark with `sova sovabench describe ...`, then re-run)")


def paper_wide(table: str):
    """A paper table as printed: one row per configuration, one column per table column."""
    paper = paper_results(table)
    keys = [c for c in ("group", "model", "prompt", "encoder", "fps", "text_split") if (paper[c] != "").any()]
    wide = paper.pivot_table(index=keys, columns="column", values="value", aggfunc="first", sort=False)
    wide = wide[list(dict.fromkeys(paper["column"]))]
    return wide.reset_index().rename_axis(columns=None)


def settings_table(rows, setting: str, cache_dir):
    """Computed ablation rows side by side: one row per (source, protocol), one column per ``setting`` value.

    ``rows`` come from ``ablation_rows``; ``setting`` is the column that
    varies (``text_split``, ``aggregate`` or ``encoder``). Cells read
    ``value [CI low, CI high]`` or say why nothing was computed.
    """
    if not len(rows):
        return pd.DataFrame([{"source": no_cache_note(cache_dir)}])
    out = []
    for (source, cache, protocol), part in rows.groupby(["source", "cache", "protocol"], sort=False):
        row = {"source": source, "cache": cache, "protocol": protocol}
        for r in part.to_dict("records"):
            row[str(r[setting])] = score_cell(r)
            if isinstance(r.get("note"), str) and r["note"]:
                row["note"] = r["note"]
        out.append(row)
    return pd.DataFrame(out)


def encoder_table(availability, rows):
    """Table 6: each paper encoder (and any other tried) with the paper's mAP and what was computed here.

    ``availability`` is ``encoder_rows``' frame (``encoder, available,
    reason``) with encoder ids; ``rows`` the ``ablation_rows`` of the caches
    (inter-pair). One ``here`` column per SOVABench cache.
    """
    wide = paper_wide("Table 6").set_index("encoder")
    tried = {r["encoder"]: r for r in availability.to_dict("records")}
    names = list(wide.index) + [n for n in tried if n not in ENCODER_IDS.values()]
    out = []
    for name in names:
        enc_id = ENCODER_IDS.get(name, name)
        row = {"encoder": name, "id": enc_id}
        if name in wide.index:
            row.update({"params (M)": int(wide.loc[name, "params"]), "embedding size": int(wide.loc[name, "embedding size"]),
                        "inter-pair mAP (paper, MiniCPM-V 4.5 task-aware)": float(wide.loc[name, "inter-pair"])})
        info = tried.get(enc_id)
        if info is None:
            row["here"] = f"{NOT_COMPUTED} (not tried)"
        elif not info["available"]:
            row["here"] = f"{NOT_COMPUTED}: {info['reason']}"
        elif not len(rows):
            row["here"] = f"{NOT_COMPUTED}: loads here, but there is no SOVABench description cache"
        else:
            part = rows[(rows["encoder"] == enc_id) & (rows["protocol"] == "inter-pair")]
            row["here"] = "; ".join(f"{r['source']} [{r['cache']}]: {score_cell(r)}"
                                    for r in part.to_dict("records")) or NOT_COMPUTED
        out.append(row)
    return pd.DataFrame(out)


def fps_compare(rows, cache_dir):
    """Table 7: the paper's rows (MiniCPM-V 4.5 task-aware at 1, 3, 5, 7 fps), then each computed cache by fps.

    ``rows`` are ``evaluate_cache`` rows of the SOVABench caches (inter-pair
    and intra-pair). Computed rows are grouped by what made them other than
    the sampling rate (model, prompt), read from each cache's manifest.
    """
    out = []
    for r in paper_wide("Table 7").to_dict("records"):
        out.append({"source": "paper: MiniCPM-V 4.5 (task-aware), GTE-Large-8152", "fps": float(r["fps"]),
                    "inter-pair mAP": f"{r['inter-pair']:.1f}", "intra-pair Pair-mAP": f"{r['intra-pair']:.1f}"})
    if not len(rows):
        out.append({"source": no_cache_note(cache_dir), "fps": "",
                    "inter-pair mAP": NOT_COMPUTED, "intra-pair Pair-mAP": NOT_COMPUTED})
        return pd.DataFrame(out)
    key = ["source", "cache", "fps"]
    for (source, cache, fps), part in rows.sort_values(["model", "prompt", "fps"], na_position="last").groupby(key, sort=False, dropna=False):
        cells = {r["protocol"]: score_cell(r) for r in part.to_dict("records")}
        out.append({"source": f"here: {source} [{cache}], encoder {part['encoder'].iloc[0]}",
                    "fps": "not recorded" if fps is None or fps != fps else fps,
                    "inter-pair mAP": cells.get("inter-pair", NOT_COMPUTED),
                    "intra-pair Pair-mAP": cells.get("intra-pair", NOT_COMPUTED)})
    return pd.DataFrame(out)
