"""The words of the ``sova`` command line: one spelling per concept, one concept per spelling.

``VOCABULARY`` maps every option a ``sova`` command has to the one concept
it names. ``tests/cli/test_vocabulary.py`` walks every sub-parser and fails on
an option outside ``VOCABULARY`` (or one stored under another name than its
own), so a new option has to be placed here, next to the words it could be
confused with. ``docs/architecture.md`` prints the same table
(``tests/cli/test_vocabulary.py`` holds the two equal).
"""
from __future__ import annotations

__all__ = ["VOCABULARY"]

#: Option -> the concept it names (the same in every command that has it).
VOCABULARY: dict[str, str] = {
    # what is described, embedded or scored
    "--protocol": "a retrieval protocol (SOVABench's four, or the bundled quickstart-direction)",
    "--task": "a benchmark's task: an image task of Table 3, or a VANTAGE-Bench task key",
    "--version": "the MUVR version (base, filter, qa); on 'sova' alone, the package's version",
    "--videos": "input: any folder or glob of video/image files (ids: file stems)",
    "--images": "input: a folder or glob of images for the image tasks (ids: file stems, digit-only as integers)",
    "--manifest": "input: a clip manifest written by 'sova sovabench clips plan'",
    "--items": "input: VANTAGE-Bench's public items (a TSV, annotations.json or a folder)",
    "--data": "input: the MUVR data root (holds annotations/)",
    "--annotations": "input: annotation files (KPF for clips plan and clips sources; an image task's annotation file)",
    "--tsv": "input: a SOVABench-format TSV, or a protocol name",
    "--authors-json": "input: the SOVABench authors' JSON of descriptions",
    "--ground-truth": "input: a VANTAGE-Bench answer key",
    "--video-root": "folder holding the videos the items read (clips fetch writes MEVA's there)",
    "--media-root": "folder VANTAGE-Bench items' media paths are relative to",
    "--partitions": "MUVR partitions",
    "--descriptions": "input: texts a describer wrote, to be embedded (JSONL, authors' JSON or a cache folder)",
    "--answers": "input: answers a describer gave to questions, to be parsed and scored (a cache folder)",
    "--submission": "input: a VANTAGE-Bench leaderboard submission file",
    "--embeddings": "input: an .npz of vectors (ids, owner, vectors)",
    "--features": "input: MUVR's released feature files",
    "--baseline": "input: a built-in baseline instead of a model's output",
    # the describer
    "--backend": "describer backend",
    "--model": "the model (hub id, local folder, or served name)",
    "--revision": "the model's hub revision",
    "--prompt": "the describer's prompt (a preset name, default general, or a sentence of free text)",
    "--system-prompt": "the describer's system prompt",
    "--base-url": "a server's URL: OpenAI-compatible server(s) for describers, the MEVA bucket for clips fetch",
    "--key-template": "clips fetch: each video's key under --base-url and path under --video-root, from {date} {hour} {name}",
    "--model-tag": "a name for the weights a server runs, keying its cache",
    "--api-key-env": "environment variable holding the API key",
    "--concurrency": "requests in flight per server (transfers at once for clips fetch)",
    "--max-new-tokens": "answer length limit in tokens",
    "--max-answer-chars": "longest answer kept, in characters (a longer one is cut and flagged)",
    "--connect-timeout": "seconds to wait for a connection to a server",
    "--read-timeout": "seconds to wait for one whole answer from a server (the next bytes of a download for clips fetch)",
    "--first-token-timeout": "seconds to wait for a server's first streamed token",
    "--device-map": "how a transformers model is split over GPUs",
    "--backend-option": "any other option of the backend (KEY=VALUE, read as its declared type)",
    "--qa-mode": "MUVR-QA: how frames are sent",
    "--qa-template": "MUVR-QA: the question template",
    "--window-seconds": "MUVR: length of a described window",
    "--max-windows": "MUVR: most windows per video",
    # frames
    "--fps": "frame rate: frames sampled per second of video",
    "--source-fps": "a source video's own frame rate",
    "--frames": "frame count: frames sampled per video",
    "--max-frames": "a cap on the frames --fps samples per clip",
    "--batch-frames": "frames per forward pass of a contrastive model",
    # the contrastive model
    "--pool": "how frame vectors make a clip's vector",
    "--device": "torch device",
    "--dtype": "weights' precision",
    "--text-model": "the contrastive model whose text tower embeds choice sentences",
    # scoring
    "--embedder": "the sentence encoder that embeds descriptions",
    "--embedder-option": "a setting of the sentence encoder (KEY=VALUE: trust_remote_code, prompt_name, prompt, dtype)",
    "--no-split": "embed each description whole",
    "--aggregate": "set similarity of two clips' sentence sets",
    "--ties": "tie rule of average precision",
    "--scoring": "scoring mode: official (as the benchmark's own code scores) or strict",
    "--allow-missing": "score without the items missing from the input",
    "--query": "MUVR query modality",
    "--tag-weight": "MUVR Filter: weight of the tag score",
    "--join-listed": "MUVR: let listed ids missing from videos.json join the gallery",
    "--similarity": "VANTAGE-Bench dense captioning: caption similarity",
    "--bertscore-model": "VANTAGE-Bench dense captioning: the BERTScore model",
    "--box-order": "order of box coordinates in a submission",
    "--names": "compare: the two scorers' names to print",
    "--top": "compare: how many queries of largest disagreement to list",
    "--bootstrap": "bootstrap resamples for a 95% interval (one default everywhere; 0: none)",
    "--seed": "seed of the bootstrap",
    # where things go
    "--cache-dir": "cache root (default $SOVA_CACHE or ./cache)",
    "--index-dir": "where clips plan caches its annotation indexes",
    "--no-index": "clips plan: re-read every annotation file, write no index",
    "--retry-errors": "retry items that failed in earlier runs",
    "--limit": "a small first run: only the first N items (into the same cache; clips fetch: the first N missing videos)",
    "--out": "output path: the file or folder the command writes",
    "--json": "print one JSON object",
    "--no-progress": "no progress bar (neither sova's nor those of transformers and huggingface_hub)",
    # parallel work
    "--engine": "local (this process) or ray (a pool of Ray actors)",
    "--workers": "Ray actors in the pool",
    "--processes": "operating-system processes (clips plan, clips extract)",
    "--gpus-per-worker": "GPUs each Ray actor holds",
    "--cpus-per-worker": "CPUs each Ray actor holds",
    "--batch-size": "items the model takes per call, on every engine",
    "--ray-items-per-call": "items per Ray actor call",
    "--address": "the Ray cluster to join",
    "--num-cpus": "CPUs of a local Ray instance",
    "--num-gpus": "GPUs of a local Ray instance",
    # clips
    "--min-size": "clips plan: smallest region side in pixels",
    "--buffer-frames": "clips plan: frames added around start/stop activities",
    "--dry-run": "clips fetch: print what would be done, do nothing",
    "--prompts": "a prompts file: each item's exact messages (and frame plan), keyed by item id",
    "--harness": "a checkout of the VANTAGE-Bench harness",
    "--model-family": "the harness's model family, which chooses its prompt wording and box order",
    "--video-input": "how the harness's message carries a video: frames or a video file",
    "--nframe": "the harness's frame count per video",
    "--max-pixels": "the harness's largest frame size in pixels",
    "--total-pixels": "the harness's pixel budget over a video's frames",
    "--codec": "clips extract: video encoder",
    "--pix-fmt": "clips extract: output pixel format",
    "--crf": "clips extract: x264 constant rate factor",
    # reproduce
    "--notebooks": "folder of the notebooks",
    "--build": "folder for the executed notebooks",
    "--skip-notebooks": "write the baseline tables only",
}
