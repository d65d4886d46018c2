"""A command imports only what its own work needs: the ``sova_lib`` modules of a warm ``sova sovabench evaluate`` of
a JSON Lines file and of a describe cache folder, and of a warm ``sova compare`` of two cache folders, listed; no
describing or embedding code in ``sova image-tasks evaluate``; no Ray, KPF or clip extraction in ``sova describe --backend motion``, and no torch in ``sova describe --backend
openai``, which decodes frames with decord and sends them to a server."""
import json
import os
import subprocess
import sys

import pytest

from tests.paths import ROOT
from tests.synthetic_cache import write_synthetic_cache

QUICKSTART = next((ROOT / "cache" / "descriptions").glob("quickstart-motion-classical-motion-general-2fps__*"))

# Runs a `sova` command line in a fresh interpreter, then reports its exit status and the modules it imported.
RUN = """
import json, sys
from sova_lib.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

#: Every sova_lib module a warm `sova sovabench evaluate` of a JSON Lines file imports: the command (cli, its parser
#: and options), the sentence encoder's cache (keyed by the fingerprint of its folder; the packaged model needs no
#: hub), the protocols (SOVABench's and the bundled excerpts', the registry's two providers), and the evaluation's
#: sequence (item vectors, similarity, metrics).
WARM_EVALUATE = [
    "sova_lib", "sova_lib._version",
    "sova_lib.benchmarks", "sova_lib.benchmarks.excerpts", "sova_lib.benchmarks.excerpts.protocols",
    "sova_lib.benchmarks.sovabench", "sova_lib.benchmarks.sovabench.api", "sova_lib.benchmarks.sovabench.labels",
    "sova_lib.benchmarks.sovabench.protocols", "sova_lib.benchmarks.sovabench.splits",
    "sova_lib.cli", "sova_lib.cli.evaluate", "sova_lib.cli.options", "sova_lib.cli.sovabench", "sova_lib.fingerprint",
    "sova_lib.encoder", "sova_lib.sentences", "sova_lib.storage",
    "sova_lib.evaluation", "sova_lib.item_vectors", "sova_lib.metrics", "sova_lib.protocols", "sova_lib.similarity",
]

#: What a describe cache folder adds: its manifest read and checked, and what made it named, by
#: ``sova_lib.describe.provenance`` alone (no runner, no video code).
CACHE_READER = ["sova_lib.describe", "sova_lib.describe.provenance"]

#: Describing code that scoring a cache folder never needs.
DESCRIBING = {"sova_lib.describe.runner", "sova_lib.describe.cache", "sova_lib.describe.contract",
              "sova_lib.describe.run_cache", "sova_lib.video", "sova_lib.video.decode", "sova_lib.video.frames",
              "sova_lib.crop"}


def _run(*argv, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", RUN, *map(str, argv)], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    return done.stdout, report["modules"]


def _ours(modules):
    return [m for m in modules if m.split(".")[0] == "sova_lib"]


@pytest.fixture(scope="module")
def intra(tmp_path_factory):
    """The six quickstart descriptions, given in turn to the 2,300 clips of the intra-pair protocol, as a JSON Lines
    file and as two describe cache folders (the second with each text moved to the next clip): SOVABench inputs of
    six distinct texts, so that one cold run warms the sentence cache (``cache``) of every later run."""
    from sova_lib.protocols import get_protocol

    root = tmp_path_factory.mktemp("intra")
    texts = [json.loads(line)["text"] for line in (QUICKSTART / "descriptions.jsonl").read_text().splitlines()]
    ids = get_protocol("intra-pair").ids().tolist()
    jsonl = root / "intra.jsonl"
    jsonl.write_text("".join(json.dumps({"id": i, "text": texts[n % len(texts)]}) + "\n" for n, i in enumerate(ids)))
    folders = [write_synthetic_cache(root / f"run{k}", {i: texts[(n + k) % len(texts)] for n, i in enumerate(ids)},
                                     description=f"texts moved by {k}") for k in (0, 1)]
    _, cold = _run("sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", jsonl, "--cache-dir",
                   root / "cache", "--bootstrap", "0", cwd=root)  # splits and encodes the six texts' sentences
    assert "sentence_transformers" in cold
    return {"root": root, "jsonl": jsonl, "folders": folders, "cache": root / "cache"}


def test_a_warm_sovabench_evaluate_imports_the_listed_modules_alone(intra):
    out, modules = _run("sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", intra["jsonl"],
                        "--cache-dir", intra["cache"], "--bootstrap", "0", cwd=intra["root"])
    assert out.startswith("intra-pair: Pair-mAP = ") and "over 2300 queries" in out
    assert _ours(modules) == sorted(WARM_EVALUATE) and len(WARM_EVALUATE) == 23
    assert not {"torch", "sentence_transformers", "nltk", "ray"} & set(modules)  # warm: nothing split or encoded


def test_a_warm_evaluate_of_a_cache_folder_reads_it_without_describing_code(intra):
    jsonl_out, _ = _run("sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", intra["jsonl"],
                        "--cache-dir", intra["cache"], "--bootstrap", "0", cwd=intra["root"])
    out, modules = _run("sovabench", "evaluate", "--protocol", "intra-pair", "--descriptions", intra["folders"][0],
                        "--cache-dir", intra["cache"], "--bootstrap", "0", cwd=intra["root"])
    assert out == jsonl_out  # the same texts, the same score
    assert _ours(modules) == sorted(WARM_EVALUATE + CACHE_READER) and len(_ours(modules)) == 25
    assert not {"torch", "sentence_transformers", "nltk", "ray"} & set(modules)


def test_a_warm_compare_of_two_cache_folders_imports_no_describing_code(intra):
    out, modules = _run("compare", "--protocol", "intra-pair", *intra["folders"], "--cache-dir", intra["cache"],
                        "--bootstrap", "0", cwd=intra["root"])
    assert "intra-pair" in out
    ours = _ours(modules)
    assert set(ours) - set(WARM_EVALUATE) == {"sova_lib.cli.compare", "sova_lib.report", "sova_lib.report.compare",
                                              "sova_lib.records", *CACHE_READER}
    assert len(ours) == 27 and not DESCRIBING & set(modules)


def test_a_muvr_evaluate_of_cached_answers_imports_no_describing_code(tmp_path):
    from sova_lib.benchmarks.muvr import qa
    from tests.benchmarks.muvr.fixtures import synthetic

    data = synthetic(tmp_path / "muvr", 1, partitions=("news",), topics=2, videos_per_topic=5, distractors=2)
    questions = qa.load_qa(data, ["news"])
    folder = write_synthetic_cache(tmp_path, {q.id: "Yes" for q in questions}, description="yes to every question")
    out, modules = _run("muvr", "evaluate", "--data", data, "--partitions", "news", "--version", "qa", "--answers",
                        folder, "--json", cwd=tmp_path)
    assert json.loads(out)["accuracy"]["all"] == 50.0  # the fixture's questions: half are answered yes
    assert "sova_lib.describe.provenance" in modules and not DESCRIBING & set(modules)
    assert not {"sova_lib.cli.describe", "sova_lib.cli.engine", "torch", "cv2"} & set(modules)


def test_a_vantage_evaluate_of_cached_answers_imports_no_runner_or_video_code(tmp_path):
    from sova_lib.benchmarks import vantage
    from sova_lib.benchmarks.vantage.synthetic import RuleBasedStandIn, write_street_benchmark
    from sova_lib.describe.run_cache import RunOptions
    from sova_lib.video.frames import example_videos, probe

    videos = example_videos()[:1]
    tsvs = write_street_benchmark(tmp_path / "bench", videos, [probe(videos[0]).num_frames / 10.0])
    described = vantage.describe(RuleBasedStandIn(), "video_qa", tsvs["vqa"], tmp_path / "cache",
                                 media_root=videos[0].parent, run=RunOptions(show_progress=False, verbose=False))
    out, modules = _run("vantage", "evaluate", "--task", "vqa", "--ground-truth", tmp_path / "bench" / "vqa_gt.jsonl",
                        "--answers", described.summary.folder, "--items", tsvs["vqa"], "--bootstrap", "0",
                        cwd=tmp_path)
    assert out == "video_qa (vqa): accuracy = 50.00  [official; parsed 2/2 = 100.0%]\n"
    # the answers are read back through the cache folder's own reader (sova_lib.describe.cache), under its lock
    assert {"sova_lib.describe.provenance", "sova_lib.describe.cache"} <= set(modules)
    assert not (DESCRIBING - {"sova_lib.describe.cache"}) & set(modules)
    assert not {"sova_lib.cli.describe", "sova_lib.cli.engine", "torch", "cv2"} & set(modules)


def test_an_image_tasks_evaluate_imports_no_describing_or_embedding_code(tmp_path):
    out, modules = _run("image-tasks", "evaluate", "--task", "vsr-zeroshot", "--baseline", "random", "--json",
                        cwd=tmp_path)
    assert (json.loads(out)["value"], json.loads(out)["n_items"]) == (50.0, 1222)  # chance on VSR's 1,222 items
    assert not DESCRIBING & set(modules)
    assert not {m for m in modules if m.startswith(("sova_lib.describe.", "sova_lib.video."))} - set(CACHE_READER)
    assert not {"sova_lib.cli.describe", "sova_lib.cli.embed", "sova_lib.cli.engine", "torch", "cv2"} & set(modules)


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
