"""Benchmark: the sentence encoder's sentences/s against the fp32 matrix-product rate of this machine, per dtype.

Encodes ``--sentences`` synthetic description sentences (10-30 words of a
surveillance vocabulary, as an MLLM writes them; no disk cache) with
``SentenceEncoder`` (default all-MiniLM-L6-v2) and prints, measured in one
run:

1. sentences/s of ``SentenceEncoder.encode`` (the model loaded and warmed up
   first, so loading is not counted);
2. the compute floor: the floating-point operations the encoder must do for
   these sentences (its linear layers, ``2 * (4 H^2 + 2 H I)`` per token and
   layer, plus attention, ``4 T^2 H`` per sentence of ``T`` tokens and
   layer; padding not counted) divided by the rate at which this machine
   multiplies fp32 matrices of the encoder's shapes (``torch.matmul`` of a
   batch's tokens by the Q/K/V/output, up and down projections, same
   threads), as sentences/s;
3. the ratio of the two: how far the encoder is from what fp32 arithmetic
   allows here (1.0 would be the floor);
4. the same encoding with the weights in each other ``--dtypes`` (default
   bfloat16; ``SentenceEncoder(dtype=...)``), measured in the same alternating
   rounds: its sentences/s, its speed against float32 and against the fp32
   floor, the lowest cosine between its vectors and float32's, and the mAP
   of the quickstart protocol on the committed description cache with each
   dtype (and their difference).

``--threads 1 2`` also times float32 and each dtype at those torch thread
counts (``torch.set_num_threads``), interleaved: on a machine whose cores
other jobs share, fewer threads can be faster (docs/performance.md). Set
``OMP_WAIT_POLICY=PASSIVE`` in the environment to see the effect of OpenMP
threads that sleep instead of spinning while they wait.

``--sweep 16 32 64 128 256`` also times each batch size (the measurement
behind ``sova_lib.encoder.DEFAULT_BATCH_SIZE``; docs/performance.md).

    python bench/bench_encode.py [--sentences 384] [--batch-size N] [--rounds 3] [--dtypes bfloat16]
                                 [--threads 1 2] [--sweep 32 64 128]

``--quick``: 16 sentences, one round, to check that it runs.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402

from sova_lib.encoder import DEFAULT_BATCH_SIZE, DEFAULT_ENCODER, DTYPES, SentenceEncoder  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = next((ROOT / "cache" / "descriptions").glob("quickstart-motion-classical-motion-general-2fps__*"))

WORDS = ("a person in a dark jacket walks slowly from the left of the frame toward the parked white car near the "
         "entrance while another vehicle turns right into the lot stops briefly and then drives away as two people "
         "open the trunk carry a box across the road and enter the building on the far side").split()


def sentences(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, rng.integers(10, 31))).capitalize() + f" ({k})." for k in range(n)]


def encoder(name: str, batch_size: int, model=None, dtype: str = DTYPES[0]) -> SentenceEncoder:
    enc = SentenceEncoder(name, cache_dir=None, batch_size=batch_size, show_progress=False, dtype=dtype)
    if model is not None:  # share weights already loaded; otherwise the encoder loads its own
        enc.model = model
    enc.encode(["Warm up the model."])
    return enc


def encode_seconds(enc: SentenceEncoder, texts: list[str]) -> float:
    enc._memory.clear()
    start = time.perf_counter()
    enc.encode(texts)
    return time.perf_counter() - start


def shapes(enc: SentenceEncoder, texts: list[str], batch_size: int) -> dict:
    """Sizes of the encoder, and the useful FLOPs it spends on ``texts`` (padding not counted)."""
    model = enc.model
    config = model[0].auto_model.config
    h, inter, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    tokens = np.array([len(ids) for ids in model.tokenizer(texts)["input_ids"]], dtype=np.float64)
    flops = layers * (tokens.sum() * 2 * (4 * h * h + 2 * h * inter) + (4 * tokens ** 2 * h).sum())
    return {"flops_per_sentence": flops / len(texts), "tokens": float(tokens.mean()), "hidden": h,
            "intermediate": inter, "layers": layers, "m": int(batch_size * tokens.mean())}


def matmul_gflops(sizes: dict) -> float:
    """fp32 rate of one pass of the encoder's linear layers over one batch's tokens (torch.matmul)."""
    import torch

    h, inter, layers, m = sizes["hidden"], sizes["intermediate"], sizes["layers"], sizes["m"]
    x, up_in = torch.randn(m, h), torch.randn(m, inter)
    weights = [torch.randn(h, h) for _ in range(4)] + [torch.randn(h, inter)]
    down = torch.randn(inter, h)
    with torch.inference_mode():
        start = time.perf_counter()
        for _ in range(layers):
            for w in weights:
                torch.matmul(x, w)
            torch.matmul(up_in, down)
        seconds = time.perf_counter() - start
    return layers * 2 * m * (4 * h * h + 2 * h * inter) / seconds / 1e9


def quickstart_map(enc: SentenceEncoder) -> float:
    """mAP of the quickstart protocol on the committed description cache, with ``enc``."""
    from sova_lib.benchmarks.sovabench.api import evaluate_files

    return evaluate_files("quickstart-direction", descriptions=QUICKSTART, encoder=enc).value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--encoder", default=DEFAULT_ENCODER)
    parser.add_argument("--sentences", type=int, default=384)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of measurement (the best is kept)")
    parser.add_argument("--dtypes", nargs="*", default=list(DTYPES[1:]), choices=DTYPES[1:],
                        help="also encode with the weights in these number types")
    parser.add_argument("--threads", type=int, nargs="*", default=[], metavar="N",
                        help="also time each dtype at these torch thread counts")
    parser.add_argument("--sweep", type=int, nargs="*", default=[], metavar="N",
                        help="also time these batch sizes on 256 of the sentences")
    parser.add_argument("--quick", action="store_true", help="16 sentences, one round: checks that it runs")
    args = parser.parse_args()
    if args.quick:
        args.sentences, args.rounds = 16, 1
    import torch

    texts = sentences(args.sentences)
    encoders = {DTYPES[0]: encoder(args.encoder, args.batch_size)}
    encoders.update({dtype: encoder(args.encoder, args.batch_size, dtype=dtype) for dtype in args.dtypes})
    enc = encoders[DTYPES[0]]
    sizes = shapes(enc, texts, args.batch_size)
    # Rounds alternate the matrix products and every dtype's encoding, and the best of each is kept: on a shared
    # machine all see the same load, and the best round is the least disturbed one.
    seconds, gflops = {dtype: [] for dtype in encoders}, []
    for _ in range(args.rounds):
        gflops.append(max(matmul_gflops(sizes) for _ in range(3)))
        for dtype, e in encoders.items():
            seconds[dtype].append(encode_seconds(e, texts))
    rates, best_gflops = {dtype: len(texts) / min(s) for dtype, s in seconds.items()}, max(gflops)
    floor_sentences = best_gflops * 1e9 / sizes["flops_per_sentence"]
    print(f"encoder {args.encoder} ({sizes['layers']} layers, {sizes['hidden']}/{sizes['intermediate']} wide), "
          f"{len(texts)} sentences of {sizes['tokens']:.1f} tokens on average, batch {args.batch_size}, "
          f"{torch.get_num_threads()} torch threads, best of {args.rounds} rounds; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  fp32 matrix products of the encoder's shapes: {best_gflops:.1f} GFLOP/s; the encoder needs "
          f"{sizes['flops_per_sentence'] / 1e6:.0f} MFLOP a sentence")
    print(f"  encoding: {rates[DTYPES[0]]:.0f} sentences/s against a compute floor of {floor_sentences:.0f} "
          f"sentences/s: {rates[DTYPES[0]] / floor_sentences:.2f} of the limit")
    reference = enc.encode(texts)
    maps = {DTYPES[0]: quickstart_map(enc)}
    for dtype in args.dtypes:
        cosine = float((reference * encoders[dtype].encode(texts)).sum(axis=1).min())
        maps[dtype] = quickstart_map(encoders[dtype])
        print(f"  {dtype}: {rates[dtype]:.0f} sentences/s, {rates[dtype] / rates[DTYPES[0]]:.2f}x float32, "
              f"{rates[dtype] / floor_sentences:.2f} of the fp32 floor; lowest cosine to float32 {cosine:.5f}")
    print("  quickstart-direction mAP on the committed cache: " + ", ".join(
        f"{dtype} {value:.2f} ({value - maps[DTYPES[0]]:+.2f})" for dtype, value in maps.items()))
    if args.threads:
        best = {(n, dtype): float("inf") for n in args.threads for dtype in encoders}
        for _ in range(args.rounds):  # thread counts interleaved, so that a change of load touches all of them
            for n, dtype in best:
                torch.set_num_threads(n)
                best[n, dtype] = min(best[n, dtype], encode_seconds(encoders[dtype], texts))
        for (n, dtype), secs in best.items():
            print(f"  {n} thread(s), {dtype}: {len(texts) / secs:6.0f} sentences/s")
    if args.sweep:
        best = dict.fromkeys(args.sweep, float("inf"))
        sweep_texts = texts[:256]
        for _ in range(args.rounds):  # sizes interleaved, so that a change of load touches all of them
            for size in args.sweep:
                enc.batch_size = size
                best[size] = min(best[size], encode_seconds(enc, sweep_texts))
        for size, secs in best.items():
            print(f"  batch {size:4d}: {len(sweep_texts) / secs:6.0f} sentences/s")


if __name__ == "__main__":
    main()
