"""What ``sova sovabench`` and the notebooks call: score a protocol, plan and cut the clips, import the authors' output.

``evaluate_files`` scores descriptions, vectors or a built-in baseline under a
protocol (any registered one: SOVABench's four and the bundled
``quickstart-direction``) and returns a ``sova_lib.evaluation.Result`` whose
``to_record()`` needs no argument. ``sources`` lists the source videos a protocol
needs and ``fetch`` downloads the MEVA ones; ``clips_of``, ``plan``, ``extract`` and
``clip_stats`` turn the MEVA/VIRAT downloads into clips and describe them;
``items`` gives the describer items of a protocol's clip files or of a clip
manifest; ``import_authors`` turns the authors' output JSON into a
description cache.
Every benchmark has such a module (``sova_lib.benchmarks.image_tasks.api``, ...).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sova_lib import evaluation, item_vectors
from sova_lib.benchmarks.sovabench.protocols import SOVABENCH_PROTOCOLS
from sova_lib.benchmarks.sovabench.splits import read_tsv
from sova_lib.encoder import SentenceEncoder
from sova_lib.protocols import get_protocol

__all__ = ["INPUT_NAME", "clip_stats", "clips_of", "evaluate_files", "extract", "fetch", "import_authors", "items", "plan", "sources"]


def _encoder(encoder) -> SentenceEncoder:
    """``encoder`` itself, the one a function makes (called only when a text needs vectors), or the default."""
    return encoder() if callable(encoder) else encoder or SentenceEncoder()


def evaluate_files(protocol: str, *, descriptions=None, embeddings=None, baseline: str | None = None, encoder=None,
                   sentences: bool = True, max_chars: int = item_vectors.MAX_TEXT_CHARS, aggregate: str = "max",
                   ties: str = "expected", allow_missing: bool = False, bootstrap: int = 0,
                   seed: int = 0) -> evaluation.Result:
    """Score one input under ``protocol``: ``descriptions`` (JSON Lines, the authors' JSON or a describe cache
    folder), ``embeddings`` (an ``.npz``) or the built-in ``baseline`` (``sova_lib.evaluation.BASELINES``).

    ``encoder``: a ``SentenceEncoder`` or a function that makes one, used for descriptions (each split into
    sentences unless ``sentences=False``, at most ``max_chars`` of each embedded, with a note) and the oracle.
    The other keywords as ``sova_lib.evaluation.evaluate`` takes them; its ``CoverageError`` names the input
    (``--descriptions PATH: ...``). The result's ``to_record()`` records what
    was scored (kind, source, encoder, text split, bootstrap, seed), for ``embeddings`` the file's name and content
    digest (``item_vectors.vectors_identity``) and, for a describe cache folder, what wrote
    it (``sova_lib.describe.provenance.cache_provenance``: model, fingerprint, prompt, fps or frames, key hash,
    software versions).
    """
    run = {"bootstrap": bootstrap, "seed": seed, "benchmark": get_protocol(protocol).benchmark}
    if baseline is not None:
        made = _encoder(encoder) if baseline == "oracle" else None
        result = evaluation.baseline(protocol, baseline, encoder=made, bootstrap=bootstrap, seed=seed)
        result.context.update(kind="baseline", source=baseline, baseline=baseline, encoder=made and made.name, **run)
        return result
    if embeddings is not None:
        items = item_vectors.read_embeddings(embeddings)
        context = {"kind": "embeddings", "source": str(embeddings), **item_vectors.vectors_identity(embeddings)}
    else:
        wrote = {}
        if (Path(descriptions) / "manifest.json").is_file():  # a describe cache folder: checked first, then named
            from sova_lib.describe.provenance import folder_provenance  # in the record

            wrote = folder_provenance(descriptions)
        texts, made = item_vectors.read_descriptions(descriptions), _encoder(encoder)
        items = item_vectors.embed_descriptions(texts, made, sentences=sentences, max_chars=max_chars)
        context = {"kind": "description cache", "source": str(descriptions), "cache": Path(descriptions).name,
                   "encoder": made.name, "text_split": "sentences" if sentences else "whole text", **wrote}
    try:
        result = evaluation.evaluate(protocol, items, aggregate=aggregate, ties=ties, allow_missing=allow_missing,
                                     bootstrap=bootstrap, seed=seed)
    except evaluation.CoverageError as err:  # named by the file whose ids do not match
        flag, path = ("--embeddings", embeddings) if embeddings is not None else ("--descriptions", descriptions)
        raise evaluation.CoverageError(f"{flag} {path}: {err}") from None
    if embeddings is None:
        result.notes.extend(item_vectors.empty_note(texts) + item_vectors.cut_note(texts, max_chars))
    result.context.update(**context, **run)
    return result


def clips_of(tsv: str):
    """The clips of a SOVABench-format TSV file, or of a protocol named ``tsv``; ``ValueError`` for neither."""
    if not Path(tsv).exists() and tsv in SOVABENCH_PROTOCOLS:
        return get_protocol(tsv).clips()
    if not Path(tsv).is_file():
        raise ValueError(f"--tsv {tsv}: no such file (or give a protocol: {', '.join(SOVABENCH_PROTOCOLS)})")
    return read_tsv(tsv)


def sources(tsv: str, out, *, annotations=None, video_root=None, index_dir=None) -> tuple[list, list[str]]:
    """List the source videos of ``tsv`` (``clips_of``) into ``out`` (TSV, or JSON for a ``.json`` name) with,
    when given, whether their annotations are under ``annotations`` and their videos under ``video_root`` (each
    opened and checked, against its annotations where both are found: ``clips.sources.check_video``, with the
    annotation indexes cached in ``index_dir`` as ``plan`` caches them: None the default folder, False none);
    returns the ``clips.sources.Source`` list and the lines that summarise it per dataset."""
    from sova_lib.benchmarks.sovabench.clips import sources as clip_sources

    clips = clips_of(tsv)  # its messages name the file already
    try:
        found = clip_sources.list_sources(clips, annotations, video_root, index_dir=index_dir)
    except ValueError as err:
        raise ValueError(f"--tsv {tsv}: {err}") from None
    clip_sources.write_sources(found, out)
    return found, clip_sources.summary_lines(found, annotations=annotations is not None, videos=video_root is not None)


def fetch(tsv: str, video_root, **options):
    """Download the MEVA source videos of ``tsv`` (``clips_of``) missing under ``video_root`` from the public
    bucket (``clips.fetch.fetch_sources``; ``options`` as it takes them); returns its ``FetchSummary``. A server
    that cannot be reached raises ``clips.fetch.FetchEnvironmentError``, an ``OSError``."""
    from sova_lib.benchmarks.sovabench.clips.fetch import fetch_sources
    from sova_lib.benchmarks.sovabench.clips.sources import list_sources

    clips = clips_of(tsv)  # its messages name the file already
    try:
        found = list_sources(clips, None, video_root, check=False)
    except ValueError as err:
        raise ValueError(f"--tsv {tsv}: {err}; nothing fetched") from None
    return fetch_sources(found, video_root, **options)


def plan(tsv: str, annotations, out, **options) -> tuple[list, list[str], list[str]]:
    """Plan the clips of ``tsv`` (``clips_of``) from the KPF ``annotations`` into the manifest ``out``.

    ``options`` as ``clips.plan.plan_clips`` takes them (``cache_dir``, ``min_size``, ``buffer_frames``,
    ``workers``, ``show_progress``). Returns the manifest's rows, the lines that summarise them and a note when no
    row got a clip. A broken annotation file is a ``ValueError`` naming its line.
    """
    from sova_lib.benchmarks.sovabench.clips import kpf
    from sova_lib.benchmarks.sovabench.clips import plan as clip_plan

    try:
        rows = clip_plan.plan_clips(clips_of(tsv), annotations, **options)
    except kpf.KpfError as err:
        raise ValueError(f"{err}\n  fix or remove that annotation file and run the command again") from None
    clip_plan.write_manifest(rows, out)
    notes = []
    if rows and not any(r.ok for r in rows):
        why = ("it holds no KPF annotation file (*.yml)" if next(Path(annotations).rglob("*.yml"), None) is None
               else "no row matched its annotations")
        notes.append(f"--annotations {annotations}: none of the {len(rows)} rows got a clip; {why}")
    return rows, clip_plan.summary_lines(rows), notes


def _manifest(path):
    from sova_lib.benchmarks.sovabench.clips import plan as clip_plan

    try:
        return clip_plan.read_manifest(path)
    except (OSError, ValueError) as err:
        raise ValueError(f"--manifest {path}: {err}") from None


def extract(manifest, video_root, out, **options):
    """Cut, crop and write each planned clip of ``manifest`` from the source videos under ``video_root`` into
    ``out`` (``clips.extract.extract_clips``; ``options`` as it takes them); returns its ``ExtractSummary``.
    ``ValueError`` when none of the source videos still needed is under ``video_root``."""
    from sova_lib.benchmarks.sovabench.clips.extract import extract_clips

    return extract_clips(_manifest(manifest), video_root, out, **options)


def clip_stats(manifest, tsv: str | None = None, source_fps: float | None = None) -> str:
    """Clip durations (Figure 3(b)), crop sizes (Figure 3(c)) and the counts per status, source dataset and class
    of a clip manifest, as text; ``tsv`` gives each index its class (default: the packaged splits)."""
    from sova_lib.benchmarks.sovabench.clips import plan as clip_plan
    from sova_lib.benchmarks.sovabench.clips import stats

    df = stats.manifest_frame(_manifest(manifest))
    fps = clip_plan.DEFAULT_FPS if source_fps is None else source_fps
    parts = ["Rows per status and source dataset", stats.status_counts(df).to_string(index=False),
             "\nRows and clips per source dataset", stats.dataset_counts(df).to_string(index=False),
             "\nRows and clips per class", stats.class_counts(df, clips_of(tsv) if tsv else None).to_string(index=False)]
    durations = stats.clip_durations(df, fps)
    if len(durations):
        rate = ", ".join(f"{k} {v:g}" for k, v in fps.items()) if isinstance(fps, dict) else f"{fps:g}"
        parts += [f"\nClip durations in seconds (Figure 3(b); fps: {rate})",
                  durations.groupby("source_dataset")["duration_s"].describe().round(2).to_string(),
                  "\nCrop sizes in pixels, as annotated (Figure 3(c))",
                  stats.crop_sizes(df)[["width", "height"]].describe().round(1).to_string()]
    return "\n".join(parts)


#: Items checked up front: when the first ones all lack their file, the video root is wrong.
FIRST_ITEMS = 5

#: The input's name in a description cache's key and folder name (``sova_lib.describe.cache.cache_key``): the
#: benchmark, not the protocol, since every protocol's clips keep their benchmark index and one folder serves them
#: all; a clip manifest's run is told apart by its crop source.
INPUT_NAME = "sovabench"


def items(video_root, *, protocol: str | None = None, manifest=None) -> tuple[list, str, dict | None]:
    """``(items, crop source, cache details)`` of a protocol's clip files (``DIR/<clip name>.mp4`` or
    ``DIR/<tail of the TSV prefix>/<clip name>.mp4``) or of a clip manifest's rows read from the source videos
    under ``video_root`` (``clips.items``); the details name the manifest and its SHA-256. ``ValueError`` when the
    first ``FIRST_ITEMS`` items all miss their video (a missing one further on is that item's error)."""
    from sova_lib.benchmarks.sovabench.clips.items import manifest_items, protocol_items

    if manifest is None:
        (found, crop_source), details = protocol_items(protocol, video_root), None
    else:
        found, crop_source = manifest_items(manifest, video_root)
        details = {"clip_manifest": {"file": Path(manifest).name, "rows": len(found),
                                     "sha256": hashlib.sha256(Path(manifest).read_bytes()).hexdigest()}}
    missing = [i for i in found[:FIRST_ITEMS] if (i.error is not None and "not found" in i.error)
               or (i.error is None and not Path(i.path).is_file())]
    if found and len(missing) == len(found[:FIRST_ITEMS]):
        raise ValueError(f"--video-root {video_root}: the first {len(missing)} items all miss their video "
                         f"(e.g. {missing[0].error or f'no file {missing[0].path}'}); give the folder that holds them")
    return found, crop_source, details


def _authors_texts(path: Path, raw: bytes) -> dict:
    """id -> text of the authors' JSON object; a JSON Lines file or other bad input is a ``ValueError`` naming the
    line."""
    expected = 'expected one JSON object {"<index>": "<text>", ...}'
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise ValueError(f"{path}, line {line}: not UTF-8 text; {expected}") from None
    except json.JSONDecodeError as err:
        if err.msg == "Extra data":
            raise ValueError(f"{path}, line {err.lineno}: a second JSON value after the first; this looks like "
                             f"JSON Lines; {expected} (sova sovabench evaluate --descriptions reads JSON Lines "
                             "directly)") from None
        raise ValueError(f"{path}, line {err.lineno}: not valid JSON ({err.msg}); {expected}") from None
    except RecursionError as err:
        from sova_lib.storage import json_problem

        raise ValueError(f"{path}: {json_problem(err)}; {expected}") from None
    if not isinstance(data, dict):
        raise ValueError(f'{path}: expected one JSON object {{"<index>": "<text>"}}, found {type(data).__name__}')
    texts = {}
    for k, v in data.items():
        if not isinstance(v, str):
            raise ValueError(f"{path}: the value of {k!r} is {type(v).__name__}, not text")
        texts[int(k) if k.strip().lstrip("-").isdigit() else k] = v
    return texts


def import_authors(path, cache_dir, *, backend: str, model: str, prompt, fps: float | None = None,
                   revision: str | None = None) -> tuple[Path, int, dict, list[str]]:
    """Write the SOVABench authors' output, one JSON object ``{"<index>": "<text>", ...}``, into the description
    cache under ``cache_dir``, keyed by the ``backend``, ``model`` (and ``revision``), ``prompt`` (a
    ``sova_lib.describe.prompts.Prompt``) and ``fps`` (None: 1, the paper's rate, with a note) that made it, with ``sampler_version = "authors"`` and
    ``crop_source = "authors-clips"`` (so an import never shares a folder with a run of this library).

    Returns ``(folder, texts added, texts, notes)``; importing the same file again adds nothing, and an id that
    is already there with another text is a ``ValueError``.
    """
    from sova_lib.describe.cache import cache_key, import_texts

    path = Path(path)
    raw = path.read_bytes()
    texts = _authors_texts(path, raw)
    named = [k for k in texts if not isinstance(k, int)]
    notes = ["--fps not given; the import records 1 frame per second (the paper's rate)"] if fps is None else []
    notes += [f"{path}: {len(named)} key(s) are not benchmark indices (e.g. {named[:3]}); they are imported as text "
              "ids, which no SOVABench protocol scores"] if named else []
    fps = 1.0 if fps is None else fps
    config = {"model": model, **({"revision": revision} if revision else {})}
    key = cache_key(backend, config, prompt, fps, sampler_version="authors", crop_source="authors-clips")
    details = {"imported_from": {"file": path.name, "sha256": hashlib.sha256(raw).hexdigest()}}
    folder, added = import_texts(cache_dir, key, texts, details=details)
    return folder, added, texts, notes
