"""A command imports only what its own work needs: the ``sova_lib`` modules of a warm ``sova sovabench evaluate``,
listed, no Ray, KPF or clip extraction in ``sova describe --backend motion``, and no torch in ``sova describe
--backend openai``, which decodes frames with decord and sends them to a server."""
import json
import os
import subprocess
import sys

from tests.paths import ROOT

QUICKSTART = next((ROOT / "cache" / "descriptions").glob("quickstart-motion-classical-motion-general-2fps__*"))

# Runs a `sova` command line in a fresh interpreter, then reports its exit status and the modules it imported.
RUN = """
import json, sys
from sova_lib.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

#: Every sova_lib module a warm `sova sovabench evaluate` of descriptions imports: the command (cli, its parser and
#: options), the sentence encoder's cache (keyed by the fingerprint of its folder), the protocols (SOVABench's and the
#: bundled excerpts', the registry's two providers), and the evaluation's sequence (item vectors, similarity,
#: metrics).
WARM_EVALUATE = [
    "sova_lib", "sova_lib._version",
    "sova_lib.benchmarks", "sova_lib.benchmarks.excerpts", "sova_lib.benchmarks.excerpts.protocols",
    "sova_lib.benchmarks.sovabench", "sova_lib.benchmarks.sovabench.api", "sova_lib.benchmarks.sovabench.labels",
    "sova_lib.benchmarks.sovabench.protocols", "sova_lib.benchmarks.sovabench.splits",
    "sova_lib.cli", "sova_lib.cli.evaluate", "sova_lib.cli.options", "sova_lib.cli.sovabench", "sova_lib.fingerprint",
    "sova_lib.encoder", "sova_lib.hub", "sova_lib.progress", "sova_lib.sentences", "sova_lib.storage",
    "sova_lib.evaluation", "sova_lib.item_vectors", "sova_lib.metrics", "sova_lib.protocols", "sova_lib.similarity",
]


def _run(*argv, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", RUN, *map(str, argv)], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    return done.stdout, report["modules"]


def _intra_pair_descriptions(path):
    """The six quickstart descriptions, given in turn to the 2,300 clips of the intra-pair protocol: a SOVABench
    input of six distinct texts, so one cold run warms the cache for the next."""
    from sova_lib.protocols import get_protocol

    texts = [json.loads(line)["text"] for line in (QUICKSTART / "descriptions.jsonl").read_text().splitlines()]
    ids = get_protocol("intra-pair").ids().tolist()
    path.write_text("".join(json.dumps({"id": i, "text": texts[n % len(texts)]}) + "\n" for n, i in enumerate(ids)))
    return path


def test_a_warm_sovabench_evaluate_imports_the_listed_modules_alone(tmp_path):
    cache = tmp_path / "cache"
    descriptions = _intra_pair_descriptions(tmp_path / "intra.jsonl")
    argv = ("sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", descriptions, "--cache-dir", cache,
            "--bootstrap", "0")
    _, cold = _run(*argv, cwd=tmp_path)  # splits and encodes the six texts' sentences into the cache
    assert "sentence_transformers" in cold
    out, modules = _run("sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", descriptions,
                        "--cache-dir", cache, "--bootstrap", "0", cwd=tmp_path)
    assert out.startswith("intra-pair: Pair-mAP = ") and "over 2300 queries" in out
    ours = [m for m in modules if m.split(".")[0] == "sova_lib"]
    assert ours == sorted(WARM_EVALUATE) and len(ours) <= 25
    assert not {"torch", "sentence_transformers", "nltk", "ray"} & set(modules)  # warm: nothing split or encoded


def test_describe_with_the_motion_backend_imports_no_ray_kpf_or_clip_extraction(tmp_path):
    _, modules = _run("describe", "--backend", "motion", "--fps", "2", "--protocol", "quickstart-direction",
                      "--cache-dir", tmp_path / "cache", "--no-progress", cwd=tmp_path)
    (described,) = (tmp_path / "cache" / "descriptions").glob("*/descriptions.jsonl")
    assert len(described.read_text().splitlines()) == 6  # the six clips of the protocol
    unwanted = {"ray", "sova_lib.describe.ray_engine", "sova_lib.benchmarks.sovabench.clips",
                "sova_lib.benchmarks.sovabench.clips.kpf", "sova_lib.benchmarks.sovabench.clips.kpf_index",
                "sova_lib.benchmarks.sovabench.clips.plan", "sova_lib.benchmarks.sovabench.clips.extract"}
    assert unwanted & set(modules) == set()
    assert "sova_lib.describe.backends.motion" in modules


def test_describe_with_the_openai_backend_decodes_with_decord_and_imports_no_torch(tmp_path, server_factory):
    server = server_factory(models=["org/vlm"])
    _, modules = _run("describe", "--backend", "openai", "--model", "org/vlm", "--base-url", server.url,
                      "--protocol", "quickstart-direction", "--cache-dir", tmp_path / "cache", "--no-progress",
                      cwd=tmp_path)
    (described,) = (tmp_path / "cache" / "descriptions").glob("*/descriptions.jsonl")
    texts = [json.loads(line)["text"] for line in described.read_text().splitlines()]
    assert len(texts) == 6 and all(t.startswith("images: ") and t != "images: 0" for t in texts), texts
    assert len([r for r in server.requests if r["path"].endswith("/chat/completions")]) == 6
    assert {"decord", "sova_lib.video.decode", "sova_lib.describe.backends.openai"} <= set(modules)
    assert {"torch", "transformers", "sentence_transformers", "nvidia"} & set(modules) == set()
