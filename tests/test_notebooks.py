"""Every notebook runs through papermill (as ``sova reproduce`` runs it) with small parameters.

The notebooks execute once per module into a temporary folder (``executed``
fixture); each test reads one notebook's JSON of headline numbers and checks
numbers that the library computes independently here. The ``.py`` sources are
the notebooks (the paired ``.ipynb`` is ignored by git); running and saving one
as JupyterLab does leaves every tracked file as it was.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sova_lib.encoder import SentenceEncoder
from sova_lib.item_vectors import read_descriptions
from sova_lib.report import reproduce
from sova_lib.sentences import split
from tests.figure_helpers import differs
from tests.paths import ROOT  # noqa: E402
from tests.synthetic_cache import write_synthetic_cache

from paper import error_analysis

NOTEBOOKS = ROOT / "notebooks"
QUICKSTART_CACHE = ROOT / "cache" / "descriptions"


def _kernel_env(tmp: Path, monkeypatch) -> None:
    """Make the kernel ``python3`` this interpreter (the venv's), adding a kernelspec when it is not."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        argv0 = KernelSpecManager().get_kernel_spec("python3").argv[0]
    except NoSuchKernel:
        argv0 = None
    # jupyter_client replaces a bare "python"/"python3" by sys.executable when it starts the kernel.
    if argv0 in ("python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}"):
        return
    if argv0 is not None and Path(argv0).resolve() == Path(sys.executable).resolve():
        return
    spec = tmp / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (test)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp / "jupyter"))


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Run the notebooks with small parameters; returns ``(figures folder, {stem: JSON})``."""
    tmp = tmp_path_factory.mktemp("notebooks")
    monkeypatch = pytest.MonkeyPatch()
    _kernel_env(tmp, monkeypatch)
    figures, cache, empty = tmp / "figures", tmp / "cache", tmp / "empty-cache"
    empty.mkdir()
    # The committed quickstart descriptions, copied so the run cannot touch the repository's cache.
    shutil.copytree(QUICKSTART_CACHE, cache / "descriptions")
    texts, _ = error_analysis.synthetic_texts("intra-pair", swap_fraction=0.2, generic_fraction=0.1,
                                              rng=np.random.default_rng(0))
    write_synthetic_cache(cache, texts, description="intra-pair clips only, for the notebook test")
    # Encode every sentence the notebooks will meet once, here, into the embedding cache they read: the kernels
    # then find the real model's vectors on disk and need not load the model again (the slow part of each run).
    quickstart = read_descriptions(next((cache / "descriptions").glob("quickstart-motion-*")))
    SentenceEncoder(cache_dir=cache, show_progress=False).encode(
        sorted({s for t in [*quickstart.values(), *texts.values()] for s in split(t)} | set(texts.values())))
    shutil.copytree(cache / "embeddings", empty / "embeddings")  # vectors only: 04 finds no description cache
    # Image-task annotations: one CountBench item and one Visual7W-Count question (VSR ships with the package; no
    # What's Up file is given).
    annotations = tmp / "image-annotations"
    _image_annotations(annotations, countbench=[("two cats", 2)])
    (annotations / "dataset_v7w_telling.json").write_text(json.dumps({"images": [{
        "filename": "v7w_1.jpg", "split": "test", "qa_pairs": [{
            "question": "How many dogs are there?", "answer": "Two.", "multiple_choices": ["One.", "Three.", "Four."],
            "qa_id": 1}]}]}))
    common = {"figures_dir": str(figures)}
    monkeypatch.setenv("SOVA_CACHE", str(cache))  # 00, 02 and 03 find it there; 04 and 07 are given theirs
    runs = {
        "00_quickstart": {**common, "top_k": 2},
        "01_benchmark": common,
        "02_results": {**common, "bootstrap": 20, "include_oracle": False},
        "03_ablations": {**common, "protocols": ["intra-pair"], "bootstrap": 0,
                         "encoders": ["all-MiniLM-L6-v2", "no-such-org/no-such-encoder"]},
        "04_errors": {**common, "cache_dir": str(empty), "worst_k": 5},
        "05_muvr": {**common, "synthetic_dir": str(tmp / "muvr"), "bootstrap": 20},
        "06_vantage": {**common, "answers_dir": str(tmp / "vantage-answers"), "work_dir": str(tmp / "vantage-street"),
                       "n_resamples": 100},
        "07_image_tasks": {**common, "cache_dir": str(empty), "annotations": str(annotations), "oracle_items": 10,
                           "bootstrap": 20},
    }
    assert sorted(runs) == [p.stem for p in reproduce.find_notebooks(NOTEBOOKS)]
    try:
        for stem, params in runs.items():
            reproduce.run_notebook(NOTEBOOKS / f"{stem}.py", tmp / "build" / f"{stem}.ipynb", params)
    finally:
        monkeypatch.undo()
    return figures, {stem: json.loads((figures / f"{stem}.json").read_text()) for stem in runs}


def _image_annotations(folder: Path, *, countbench) -> Path:
    """``folder`` holding a CountBench annotation file of the ``(caption, number)`` items ``countbench``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "CountBench.json").write_text(json.dumps([{"image_url": "u", "text": text, "number": number}
                                                        for text, number in countbench]))
    return folder


def _check_sources(folder: Path, tmp_path: Path) -> None:
    """The rules every notebook source ``NN_name.py`` of ``folder`` follows (notebooks/README.md)."""
    import jupytext
    import nbformat
    import papermill

    sources = sorted(folder.glob("[0-9][0-9]_*.py"))
    assert sources, folder
    for source in sources:
        text = jupytext.read(source)
        header = source.read_text().split("# %%")[0]
        assert "jupytext_version" not in header and "format_version" not in header, source.name
        first, params = text.cells[0], text.cells[1]
        assert first.cell_type == "markdown" and first.source.startswith("# "), source.name
        assert "parameters" in params.metadata.get("tags", []), source.name
        assert "figures_dir" in params.source
        # papermill can override every parameter only if it parses each line (a "=" in a comment breaks it)
        names = {line.split("=")[0].strip() for line in params.source.splitlines()
                 if line and not line.startswith((" ", "#")) and "=" in line}
        nbformat.write(text, tmp_path / source.with_suffix(".ipynb").name)
        assert set(papermill.inspect_notebook(str(tmp_path / source.with_suffix(".ipynb").name))) == names
        assert all("  # " in line for line in params.source.splitlines() if line[:1].isalpha()), \
            f"{source.name}: every parameter has a comment"
        for cell in text.cells:
            if cell.cell_type == "code":
                assert "def " not in cell.source and "lambda" not in cell.source, source.name
                assert len(cell.source.splitlines()) <= 20, f"{source.name}: a cell over 20 lines"


def _git(folder: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout


def test_sources_follow_the_notebook_rules(tmp_path):
    _check_sources(NOTEBOOKS, tmp_path)


def test_only_the_sources_are_tracked():
    """The .py is the notebook; a paired .ipynb (outputs and all) is ignored by git wherever it is made."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = _git(ROOT, "ls-files", "notebooks").split()
    assert not [t for t in tracked if t.endswith(".ipynb")], tracked
    for source in reproduce.find_notebooks(NOTEBOOKS):
        assert f"notebooks/{source.name}" in tracked
        ipynb = f"notebooks/{source.stem}.ipynb"
        assert _git(ROOT, "check-ignore", "--no-index", ipynb).strip() == ipynb


def test_run_and_save_in_jupyterlab_changes_no_tracked_file(tmp_path, monkeypatch):
    """Open the quickstart as JupyterLab does (jupytext's contents manager), run every cell in a live kernel, save.

    A git repository made of the notebooks, the root .gitignore and the
    quickstart's description cache stands for a fresh clone. After the run
    and the save, ``git status`` is clean: the notebook writes to its default
    output folder under ``build/``, which git ignores; the .py is byte for
    byte what it was, the saved .ipynb holds the outputs, and the sources
    still pass the rules.
    """
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    repo = tmp_path / "repo"
    shutil.copytree(NOTEBOOKS, repo / "notebooks", ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
    shutil.copytree(QUICKSTART_CACHE, repo / "cache" / "descriptions")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "clone")
    before = (repo / "notebooks" / "00_quickstart.py").read_bytes()
    # The sentence vectors, made here once, so the kernel finds them in the (ignored) embedding cache.
    texts = read_descriptions(next((repo / "cache" / "descriptions").glob("quickstart-motion-*")))
    SentenceEncoder(cache_dir=repo / "cache", show_progress=False).encode(
        sorted({s for t in texts.values() for s in split(t)}))
    _kernel_env(tmp_path, monkeypatch)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("SOVA_CACHE", raising=False)  # a fresh clone's defaults: its own cache/
    manager = jupytext.TextFileContentsManager(root_dir=str(repo / "notebooks"))
    for opened in ("00_quickstart.py", "00_quickstart.ipynb"):  # first open, then the paired notebook it made
        nb = nbformat.from_dict(manager.get(opened)["content"])
        NotebookClient(nb, kernel_name="python3", timeout=600,
                       resources={"metadata": {"path": str(repo / "notebooks")}}).execute()
        assert any(c.get("outputs") for c in nb.cells)
        manager.save({"type": "notebook", "content": nb}, opened)
        assert (repo / "notebooks" / "00_quickstart.py").read_bytes() == before, opened
        assert _git(repo, "status", "--porcelain", "--untracked-files=normal").splitlines() == []
        assert (repo / "build" / "figures" / "00_quickstart.json").is_file()
    saved = nbformat.read(repo / "notebooks" / "00_quickstart.ipynb", as_version=4)
    assert sum(bool(c.get("outputs")) for c in saved.cells) >= 10
    assert [c.source for c in saved.cells] == [c.source for c in jupytext.read(repo / "notebooks" / "00_quickstart.py").cells]
    _check_sources(repo / "notebooks", tmp_path)


def test_quickstart(executed):
    figures, out = executed
    q = out["00_quickstart"]
    assert q["items"] == q["described"] == 6  # three excerpts, each also reversed
    assert "not an MLLM" in q["describer"]
    assert q["cache"].startswith("quickstart-motion-classical-motion-general-2fps__")
    # every description was read back and split; the counts match the cache's own text
    texts = read_descriptions(QUICKSTART_CACHE / q["cache"])
    assert q["sentences"] == {k: len(split(v)) for k, v in texts.items()}
    assert q["query"] not in q["neighbours_max"] and len(q["neighbours_max"]) == 2
    assert q["max_cosine"] == sorted(q["max_cosine"], reverse=True) and len(q["ranks_by_mean"]) == 2
    # one sentence vector: 384 numbers of length 1; the two clips compared, and their largest sentence cosine
    assert q["vector"] == {"shape": [384], "norm": 1.0}
    assert q["compared"] == q["query"] + "-reversed" and q["max_cosine_pair"] == pytest.approx(q["max_cosine"][0],
                                                                                               abs=5e-4)
    # the closing score: the cache's texts scored here under the same protocol, beside the exact random ranking
    from sova_lib.evaluation import evaluate
    from sova_lib.item_vectors import embed_descriptions

    assert q["direction_protocol"] == "quickstart-direction"
    described, random = q["direction_scores"]
    own = evaluate("quickstart-direction", embed_descriptions(texts, SentenceEncoder(show_progress=False)))
    assert described["mAP"] == round(own.value, 2) and described["queries"] == 6
    assert random["mAP"] == round(100 * sum((1 + (k - 1) / 4) / k for k in range(1, 6)) / 5, 2) == 59.25
    # the explorer's static view (papermill): the query's AP is the evaluation's own for that query
    shown = q["explorer"]
    assert shown["query"] == q["query"] and len(shown["top"]) == 2 and len(shown["relevant"]) == 2
    assert shown["AP"] == round(100 * own.per_query[q["query"]], 2)
    for stem in ("filmstrips", "sentence_similarity", "clip_similarity"):
        assert (figures / f"00_quickstart_{stem}.png").stat().st_size > 10_000
        assert (figures / f"00_quickstart_{stem}.pdf").exists()


def test_quickstart_with_a_tiny_transformers_model(tmp_path, monkeypatch, encoder):
    """The quickstart's describer is a parameter: a tiny random Qwen2.5-VL (``tests/tiny_vlm.py``) describes the six
    excerpts at 1 fps, and every step, the score and its record follow from its (meaningless) texts."""
    from sova_lib.evaluation import evaluate
    from sova_lib.item_vectors import embed_descriptions
    from tests.tiny_vlm import build_tiny_qwen2_5_vl

    model = str(build_tiny_qwen2_5_vl(tmp_path / "tiny-qwen2.5-vl"))
    figures, cache = tmp_path / "figures", tmp_path / "cache"
    _kernel_env(tmp_path, monkeypatch)
    reproduce.run_notebook(NOTEBOOKS / "00_quickstart.py", tmp_path / "build" / "00_quickstart.ipynb",
                           {"figures_dir": str(figures), "cache_dir": str(cache), "backend": "transformers",
                            "model": model, "backend_options": {"max_new_tokens": 8, "device": "cpu"}, "fps": 1.0,
                            "top_k": 2})
    q = json.loads((figures / "00_quickstart.json").read_text())
    assert q["describer"] == f"transformers: {model}" and q["items"] == q["described"] == 6 and q["fps"] == 1.0
    folder = cache / "descriptions" / q["cache"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert (manifest["backend"], manifest["model"], manifest["fps"]) == ("transformers", model, 1.0)
    texts = read_descriptions(folder)
    assert len(texts) == 6
    (record,) = [json.loads(p.read_text()) for p in (figures / "results").glob("*.json")
                 if json.loads(p.read_text())["kind"] == "description cache"]
    assert (record["source"], record["model"], record["cache"]) == (f"{model} + max cosine", model, q["cache"])
    own = evaluate("quickstart-direction", embed_descriptions(texts, encoder))
    assert q["direction_scores"][0]["mAP"] == record["value"] == round(own.value, 2)


def _status(repo: Path) -> list[str]:
    return _git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()


def test_the_quickstart_with_a_server_that_refuses_two_clips_goes_on_in_sova_cache(tmp_path, monkeypatch,
                                                                                   server_factory):
    """A describer other than the default, behind a loopback server that refuses two of the six clips, with
    ``$SOVA_CACHE`` set and no ``cache_dir``: the notebook lists the two clips with the server's reason, goes on
    with the four described (the score counts the two as failures), and writes its descriptions under
    ``$SOVA_CACHE``, nothing into the checkout."""
    server = server_factory([("status", 400, "this clip is refused", {})] * 2, models=["M"])
    cache, figures = tmp_path / "sova-cache", tmp_path / "figures"
    _kernel_env(tmp_path, monkeypatch)
    monkeypatch.setenv("SOVA_CACHE", str(cache))
    before = _status(ROOT)
    executed = tmp_path / "build" / "00_quickstart.ipynb"
    reproduce.run_notebook(NOTEBOOKS / "00_quickstart.py", executed,
                           {"figures_dir": str(figures), "backend": "openai", "model": "M",
                            "backend_options": {"base_url": server.url, "concurrency": 1}, "top_k": 2})
    assert _status(ROOT) == before
    q = json.loads((figures / "00_quickstart.json").read_text())
    assert (q["items"], q["described"]) == (6, 4)
    (folder,) = (cache / "descriptions").iterdir()
    assert folder.name == q["cache"] and len(read_descriptions(folder)) == 4
    import nbformat

    shown = "".join(o.get("text", "") for c in nbformat.read(executed, as_version=4).cells
                    for o in c.get("outputs", []))
    assert "2 clip(s) without a description:" in shown
    assert shown.count(f"OpenAIError: HTTP 400 from {server.url}/chat/completions: this clip is refused") == 2
    described, _ = q["direction_scores"]
    assert described["queries"] == 6  # the two clips without a description count as failures


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory):
    """The quickstart as notebooks/README.md runs it, with no parameter at all: ``jupytext --to ipynb``, then the
    ``papermill`` command, in a copy of the repository's layout (so its default ``../cache`` and ``../build/figures``
    are the copy's). The sentence vectors are made here first, so the kernel finds them and loads no model.

    Returns ``(the copy's root, the executed notebook)``.
    """
    import nbformat

    tmp = tmp_path_factory.mktemp("plain-papermill")
    monkeypatch = pytest.MonkeyPatch()
    _kernel_env(tmp, monkeypatch)
    monkeypatch.delenv("SOVA_CACHE", raising=False)  # no cache named: the copy's own cache/
    repo = tmp / "repo"
    shutil.copytree(NOTEBOOKS, repo / "notebooks", ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
    shutil.copytree(QUICKSTART_CACHE, repo / "cache" / "descriptions")
    texts = read_descriptions(next((repo / "cache" / "descriptions").glob("quickstart-motion-*")))
    SentenceEncoder(cache_dir=repo / "cache", show_progress=False).encode(
        sorted({s for t in texts.values() for s in split(t)}))
    build = repo / "build"
    (build / "notebooks").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        subprocess.run([sys.executable, "-m", "jupytext", "--to", "ipynb", "-o", str(build / "00_quickstart.ipynb"),
                        str(repo / "notebooks" / "00_quickstart.py")], check=True, capture_output=True, env=env)
        subprocess.run([sys.executable, "-m", "papermill", str(build / "00_quickstart.ipynb"),
                        str(build / "notebooks" / "00_quickstart.ipynb"), "--cwd", str(repo / "notebooks")],
                       check=True, capture_output=True, env=env, timeout=600)
    finally:
        monkeypatch.undo()
    return repo, nbformat.read(build / "notebooks" / "00_quickstart.ipynb", as_version=4)


def test_a_plain_papermill_run_shows_the_explorer_to_every_viewer(plain_run):
    """One output: the widget for JupyterLab, and the top-k table with its AP (HTML) and the figure (PNG) for the
    viewers without it (GitHub, nbviewer, nbconvert, a notebook reopened without its kernel)."""
    repo, nb = plain_run
    shown = json.loads((repo / "build" / "figures" / "00_quickstart.json").read_text())["explorer"]
    (explorer,) = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})
                   and "AP =" in o["data"].get("text/html", "")]
    data = explorer["data"]
    assert "application/vnd.jupyter.widget-view+json" in data  # interactive = True, the default
    page = data["text/html"]
    assert f"AP = {shown['AP']:.1f}" in page and len(shown["top"]) == 3  # top_k = 3, the default
    rows = [page.index(f"<td>{rank}</td><td>{i}</td>") for rank, i in enumerate(shown["top"], start=1)]
    assert rows == sorted(rows)  # the top-k table, best first
    assert base64.b64decode(data["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert data["text/plain"].startswith(f"{shown['query']} on quickstart-direction: AP = {shown['AP']:.1f}")
    # nbconvert (and nbviewer, GitHub) on the notebook without widget state: the static table and figure
    import copy

    from nbconvert import HTMLExporter

    bare = copy.deepcopy(nb)
    bare.metadata.pop("widgets", None)
    page, _ = HTMLExporter().from_notebook_node(bare)
    assert f"AP = {shown['AP']:.1f}" in page and f"data:image/png;base64,{data['image/png'][:64]}" in page


def test_a_plain_papermill_run_writes_the_committed_bytes(plain_run):
    """What the quickstart writes on its default parameters (to ``build/figures``, as ``make reproduce`` writes
    ``figures/``) is what the repository holds, byte for byte."""
    repo, _ = plain_run
    written = sorted(p.name for p in (repo / "build" / "figures").glob("00_quickstart*"))
    assert len(written) == 13 and not (repo / "figures").exists()
    differ = [name for name in written if (repo / "build" / "figures" / name).read_bytes() !=
              (ROOT / "figures" / name).read_bytes()]
    assert differ == [], differs(", ".join(differ))


def test_the_documented_papermill_command_leaves_the_repository_clean(tmp_path, monkeypatch):
    """notebooks/README.md's papermill command, with other parameters, run in a clone: it writes to the folder it
    names, ``git status`` stays clean (the committed figures untouched), and every record it writes carries its
    parameters, the oracle's tie rule included."""
    import shlex

    from sova_lib.evaluation import oracle_texts

    commands = [line for line in (NOTEBOOKS / "README.md").read_text().splitlines()
                if line.startswith(("mkdir -p build", "jupytext --to ipynb", "papermill "))]
    assert len(commands) == 3 and "-p ties pessimistic" in commands[2] and "-p figures_dir" in commands[2]
    repo = tmp_path / "repo"
    shutil.copytree(NOTEBOOKS, repo / "notebooks", ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
    shutil.copytree(QUICKSTART_CACHE, repo / "cache" / "descriptions")
    shutil.copytree(ROOT / "figures", repo / "figures")
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "clone")
    oracle = {t for p in ("inter-pair", "intra-pair", "inter-pair-constrained") for t in oracle_texts(p).values()}
    SentenceEncoder(cache_dir=repo / "cache", show_progress=False).encode(sorted({s for t in oracle for s in split(t)}))
    _kernel_env(tmp_path, monkeypatch)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for command in commands:
        words = shlex.split(command)
        subprocess.run(words if words[0] == "mkdir" else [sys.executable, "-m", *words], cwd=repo, check=True,
                       capture_output=True, env=env, timeout=900)
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    out = repo / "build" / commands[2].split("-p figures_dir ")[1].split()[0].removeprefix("../build/")
    written = [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]
    assert len(written) == 9 and (out / "02_results_table4.md").is_file()
    assert {r["bootstrap"] for r in written} == {200} and {r["encoder"] for r in written} >= {"all-MiniLM-L6-v2"}
    assert {r["ties"] for r in written if r["baseline"] == "oracle"} == {"pessimistic"}
    assert {r["ties"] for r in written if r["baseline"] != "oracle"} == {"n/a"}


def test_jupyterlab_opens_the_py_notebooks_as_notebooks(tmp_path):
    """``make lab`` puts the project's settings where JupyterLab reads its overrides: a Python file opens in
    jupytext's notebook view on a double-click, and a saved notebook keeps its widgets' state. It opens the
    quickstart."""
    from jupyter_core.paths import jupyter_path
    from jupyterlab.commands import get_app_dir
    from jupyterlab_server.settings_utils import get_settings

    overrides = tmp_path / "settings" / "overrides.d"
    overrides.mkdir(parents=True)
    shutil.copy(NOTEBOOKS / ".jupyterlab-overrides.json", overrides / "sova_lib.json")
    found, _ = get_settings(str(tmp_path / "settings"), str(Path(get_app_dir()) / "schemas"), str(tmp_path / "user"),
                            labextensions_path=jupyter_path("labextensions"))
    schema = {s["id"]: s["schema"].get("properties", {}) for s in found["settings"]}
    assert schema["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]["default"] == {
        "python": "Jupytext Notebook"}
    assert schema["@jupyter-widgets/jupyterlab-manager:plugin"]["saveState"]["default"] is True
    # "Jupytext Notebook" is the name of the viewer that jupytext's JupyterLab extension registers
    extension = next(Path(p) / "jupyterlab-jupytext" for p in jupyter_path("labextensions")
                     if (Path(p) / "jupyterlab-jupytext").is_dir())
    assert any('"Jupytext Notebook"' in f.read_text() for f in (extension / "static").glob("*.js"))
    outside_make = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    dry = subprocess.run(["make", "--no-print-directory", "-n", "lab", "VENV=.venv"], cwd=ROOT, capture_output=True,
                         text=True, check=True, env=outside_make).stdout
    assert "cp notebooks/.jupyterlab-overrides.json .venv/share/jupyter/lab/settings/overrides.d/sova_lib.json" in dry
    assert dry.rstrip().endswith("notebooks/00_quickstart.py")


def test_benchmark(executed):
    from sova_lib.benchmarks.sovabench.clips.kpf import find_annotation_files
    from sova_lib.benchmarks.sovabench.splits import DATA_DIR, load_split

    figures, out = executed
    b = out["01_benchmark"]
    rows = {r["benchmark"]: r for r in b["table2"]}
    assert rows["SOVABench (Inter-pair)"]["samples (here)"] == 9882
    assert rows["SOVABench (Inter-pair)"]["samples (paper)"] == 9900  # printed as 9.9k
    assert rows["SOVABench (Inter-pair)"]["queries (here)"] == 1423
    assert rows["SOVABench (Intra-pair)"]["samples (here)"] == rows["SOVABench (Intra-pair)"]["queries (here)"] == 2300
    assert rows["SOVABench (Inter-pair, constrained; Table C.1)"]["queries (here)"] == 1423
    assert rows["FIVR-200K"]["queries (here)"] == "not computed here"
    assert rows["EVVE"]["queries (paper)"] == 620 and rows["EVVE"]["queries (here)"] == "not computed here"
    assert b["queries_per_dataset"] == {"MEVA": 975, "VIRAT": 448}  # measured in the spec
    assert sum(b["queries_per_action"].values()) == 1423
    assert len(b["queries_per_action"]) == 12 and "driving forward" not in b["queries_per_action"]  # not inter-pair
    counts = pd.read_csv(figures / "01_benchmark_figure3a.csv").set_index("action")
    assert counts.loc["turning left"].tolist() == [177, 70]
    clips = {c.index: c for c in load_split("interpair")}
    independent = sum(1 for c in clips.values() if c.label == "closing trunk")
    assert b["queries_per_action"]["closing trunk"] == independent
    # each clip's duration is the clip planner's window: 90 frames before vehicle_starts and after vehicle_stops
    assert b["durations"]["clips"] == 9882
    durations = pd.read_csv(figures / "01_benchmark_figure3b.csv").set_index("index")
    start = next(c for c in clips.values() if c.activity == "vehicle_starts" and c.start_frame >= 90)
    stop = next(c for c in clips.values() if c.activity == "vehicle_stops")
    plain = next(c for c in clips.values() if c.activity == "person_opens_trunk")
    assert durations.loc[start.index, "frames"] == start.end_frame - start.start_frame + 1 + 90
    assert durations.loc[stop.index, "frames"] == stop.end_frame - stop.start_frame + 1 + 90
    assert durations.loc[plain.index, "frames"] == plain.end_frame - plain.start_frame + 1
    assert durations.loc[plain.index, "duration_s"] == pytest.approx(durations.loc[plain.index, "frames"] / 30)
    # the crop sizes of the shipped sample: 91 clips of its 4 annotated source videos, all planned
    assert "sample" in b["crops"]["source"] and b["crops"]["clips"] == 91 and b["crops"]["min_side"] >= 112
    assert "4 source videos" in b["crops"]["source"]
    assert "| ok | 91 | 0 | 91 |\n" in (figures / "01_benchmark_figure3c.md").read_text()
    assert len((figures / "01_benchmark_figure3c.md").read_text().splitlines()) == 3  # one status: ok
    videos = {v.split(".r13")[0] for v in find_annotation_files(DATA_DIR / "meva-annotations-sample")}
    sizes = pd.read_csv(figures / "01_benchmark_figure3c.csv")
    assert len(videos) == 4 and set(sizes["video"].str.split(".r13").str[0]) <= videos
    assert (sizes["width"] >= 112).all() and (sizes["height"] >= 112).all()
    assert b["pair_counts"]["opening trunk"] == 49 and b["pair_counts"]["closing trunk"] == 48
    assert sum(b["pair_counts"].values()) == 2300 and len(b["pair_counts"]) == 14
    for stem in ("figure3a", "figure3b", "figure3c", "figureA1"):
        assert (figures / f"01_benchmark_{stem}.png").exists() and (figures / f"01_benchmark_{stem}.pdf").exists()


def test_results(executed):
    figures, out = executed
    r = out["02_results"]
    assert r["caches"] == 2 and r["sovabench_caches"] == 1  # the quickstart cache is not SOVABench
    assert r["comparisons"] == [] and "a paired comparison needs two" in r["comparison_note"]
    values = {(c["source"].split(" (")[0], c["protocol"]): c["value"] for c in r["computed"]}
    assert values[("prevalence", "inter-pair")] == 3.42
    assert values[("prevalence", "inter-pair-constrained")] == 23.75
    assert values[("prevalence", "intra-pair")] == 50.31
    assert values[("random ranking", "intra-pair")] == 51.2
    synthetic = {c["protocol"]: c["value"] for c in r["computed"] if c["source"].startswith("synthetic")}
    assert 50.31 < synthetic["intra-pair"] < 100
    # the cache holds intra-pair clips only: on inter-pair the 8,524 others count as failures, and its record and
    # table cell say so beside the score without them
    collected = pd.read_csv(figures / "results.csv")
    (inter,) = collected[(collected["protocol"] == "inter-pair") & collected["source"].str.startswith("synthetic")
                         ].to_dict("records")
    assert inter["value"] == synthetic["inter-pair"] < inter["value_without_missing"] and inter["n_missing"] == 8524
    assert f"; 8524 missing, {inter['value_without_missing']:.1f} without them" in \
        (figures / "02_results_table4.md").read_text()
    # 20 of the paper's 21 Table 4 rows are not computed here (only Random is, by the prevalence baseline)
    assert r["table4_not_computed"] == 20
    table4 = (figures / "02_results_table4.md").read_text()
    assert table4.count("not computed here") >= 40 and "38.3" in table4
    assert (figures / "02_results_figure2b.png").exists() and (figures / "02_results_tableC1.csv").exists()


def test_tables_are_read_from_the_collected_records(executed):
    """One result flow: every computed number of Tables 4 and C.1 is a row of results.csv, built from the JSONs."""
    from sova_lib import records

    figures, _ = executed
    collected = pd.read_csv(figures / "results.csv")
    assert len(collected) == len(list((figures / "results").glob("*.json"))) > 0
    assert collected.equals(pd.read_csv(figures / "results.csv"))  # the CSV is stable on a second read
    rebuilt = records.collect_records(figures / "results")
    assert rebuilt[["source", "protocol", "value"]].fillna(-1).equals(collected[["source", "protocol", "value"]]
                                                                     .fillna(-1))
    for name, columns in (("02_results_table4", ("inter-pair", "intra-pair")),
                          ("02_results_tableC1", ("inter-pair-constrained",))):
        table = pd.read_csv(figures / f"{name}.csv")
        for protocol in columns:
            here = table[["computed as", f"{protocol} here"]].dropna()
            assert len(here) > 0
            for source, value in here.itertuples(index=False):
                source = source.split("; encoder")[0].split(" (")[0]
                # one record per evaluation: 03_ablations' rerun of a cache (bootstrap 0) replaced 02's (bootstrap 20)
                match = collected[(collected["protocol"] == protocol) & collected["source"].str.startswith(source)]
                assert value in match["value"].tolist(), (name, protocol, source, value)


def test_ablations(executed):
    figures, out = executed
    a = out["03_ablations"]
    assert a["sovabench_caches"] == 1
    assert a["encoders_available"] == ["all-MiniLM-L6-v2"]
    assert a["encoders_not_available"] == ["no-such-org/no-such-encoder"]
    split = {r["text_split"]: r["value"] for r in a["table5"]}
    agg = {r["aggregate"]: r["value"] for r in a["aggregation"]}
    # one sentence per synthetic description: splitting and every aggregate give the same score
    assert split["sentences"] == pytest.approx(split["whole text"], abs=0.5)
    assert agg["max"] == split["sentences"] and agg["mean"] == pytest.approx(agg["max"], abs=0.5)
    table6 = (figures / "03_ablations_table6.md").read_text()
    assert "GTE-Large-8152" in table6 and "not computed here" in table6
    assert a["table7_rows"] == 5  # the paper's four sampling rates and the one cache
    collected = pd.read_csv(figures / "results.csv")
    ablation = _ablation_records(collected, protocols=["intra-pair"], bootstrap=0)
    assert sorted(ablation["aggregate"].unique()) == ["max", "mean", "median"]
    assert set(ablation["text_split"]) == {"sentences", "whole text"}
    assert set(ablation["cache"]) == {r["cache"] for r in a["table5"]}  # the one SOVABench cache, nothing else
    # the paper's tables as printed
    table5_paper = pd.read_csv(figures / "03_ablations_table5_paper.csv")
    assert len(table5_paper) == 4 and table5_paper.columns[-1] == "Avg."
    assert table5_paper.set_index(["prompt", "text_split"]).loc[("general", "whole text"), "Avg."] == 42.1
    table7 = pd.read_csv(figures / "03_ablations_table7.csv", dtype=str)  # the paper's rows, then the cache's
    assert table7["fps"][:4].tolist() == ["1.0", "3.0", "5.0", "7.0"]
    assert table7["inter-pair mAP"][:4].tolist() == ["38.3", "37.3", "36.3", "36.2"]
    assert table7["intra-pair Pair-mAP"][:4].tolist() == ["53.6", "54.0", "53.8", "53.4"]
    # an encoder that does not load is listed with the reason
    table6 = pd.read_csv(figures / "03_ablations_table6.csv").set_index("encoder")
    assert table6.loc["no-such-org/no-such-encoder", "here"] == (
        "not computed here: weights not on this machine and the model hub not reachable")


def test_ablations_without_any_cache_say_so_and_write_the_committed_bytes(tmp_path, monkeypatch):
    """03 on its default parameters with a cache folder that holds no SOVABench cache (as ``make reproduce`` runs it on
    a fresh clone): every computed table says so in one sentence naming the folder, Table 6 says which encoders load
    here, and every output is the committed file, byte for byte."""
    cache, figures = tmp_path / "cache", tmp_path / "figures"
    cache.mkdir()
    _kernel_env(tmp_path, monkeypatch)
    reproduce.run_notebook(NOTEBOOKS / "03_ablations.py", tmp_path / "03_ablations.ipynb",
                           {"figures_dir": str(figures), "cache_dir": str(cache)})
    note = ("no SOVABench description cache in cache/descriptions: nothing computed here (describe the benchmark with "
            "`sova sovabench describe ...`, then re-run)")
    for name in ("table5_sovabench", "aggregation"):
        assert pd.read_csv(figures / f"03_ablations_{name}.csv")["source"].tolist() == [note]
    table7 = pd.read_csv(figures / "03_ablations_table7.csv", keep_default_na=False)
    assert len(table7) == 5 and table7.iloc[-1].tolist() == [note, "", "not computed here", "not computed here"]
    table6 = pd.read_csv(figures / "03_ablations_table6.csv").set_index("encoder")
    assert len(table6) == 6 and table6.loc["GTE-Large-8152", "inter-pair mAP (paper, MiniCPM-V 4.5 task-aware)"] == 38.3
    assert table6.loc["GTE-Large-8152", "here"] == (
        "not computed here: weights not on this machine and the model hub not reachable")
    assert table6.loc["all-MiniLM-L6-v2", "here"].startswith("not computed here: loads here, but")
    assert table6.loc["Qwen3 Embedding 0.6B", "params (M)"] == 596
    written = sorted(p.name for p in figures.glob("03_ablations*"))
    assert len(written) == 11
    differ = [n for n in written if (figures / n).read_bytes() != (ROOT / "figures" / n).read_bytes()]
    assert differ == [], differs(", ".join(differ))


def test_ablations_on_a_cache_of_two_sentences_per_clip(tmp_path, monkeypatch):
    """03 on a cache of intra-pair clips whose descriptions share one sentence, on both protocols, Table 6 tried with
    all-MiniLM-L6-v2 alone and an encoder that does not exist: each setting is one record, the inter-pair clips the
    cache lacks count as failures (and each cell says so), and the shared sentence ties every clip under max."""
    from sova_lib.evaluation import baseline

    texts, _ = error_analysis.synthetic_texts("intra-pair", rng=np.random.default_rng(0))
    texts = {k: f"{v}. The scene is a parking lot." for k, v in texts.items()}  # one sentence shared by all
    write_synthetic_cache(tmp_path / "cache", texts, description="two sentences")
    figures = tmp_path / "figures"
    _kernel_env(tmp_path, monkeypatch)
    reproduce.run_notebook(NOTEBOOKS / "03_ablations.py", tmp_path / "03_ablations.ipynb",
                           {"figures_dir": str(figures), "cache_dir": str(tmp_path / "cache"), "bootstrap": 0,
                            "encoders": ["all-MiniLM-L6-v2"]})
    split = pd.read_csv(figures / "03_ablations_table5_sovabench.csv")  # sentences and the whole text, max
    aggregated = pd.read_csv(figures / "03_ablations_aggregation.csv")  # sentences: max, mean, median
    assert len(split) == 4 and len(aggregated) == 6
    # one record per evaluation: 4 settings on 2 protocols (Table 6's row is the sentences-and-max one again)
    assert len(list((figures / "results").glob("*.json"))) == 8
    rows = pd.concat([split, aggregated]).drop_duplicates(["protocol", "text_split", "aggregate"])
    intra = rows[rows["protocol"] == "intra-pair"].set_index(["text_split", "aggregate"])["value"]
    assert intra[("sentences", "mean")] > intra[("sentences", "max")]
    inter = rows[rows["protocol"] == "inter-pair"]  # 8,524 of its 9,882 clips are missing: counted as failures
    assert (inter["n_missing"] == 8524).all() and (inter["value"] < inter["value_without_missing"]).all()
    assert (rows[rows["protocol"] == "intra-pair"]["n_missing"] == 0).all()
    # every pair's maximum is the shared sentence's cosine with itself: all clips tie, and the tie-aware AP of
    # a fully tied ranking is a random ranking's expected AP (its chance level, which the cell says)
    assert intra[("sentences", "max")] == pytest.approx(baseline("intra-pair", "random-ranking").value, abs=0.01)
    sentences = inter[inter["text_split"] == "sentences"].iloc[0]
    assert sentences["value"] == sentences["chance"]
    table5 = (figures / "03_ablations_table5_sovabench.md").read_text().splitlines()
    assert table5[0] == "| source | cache | protocol | sentences | whole text |"  # no note: both protocols scored
    (cell,) = [line.split(" | ")[3] for line in table5 if "| inter-pair |" in line]
    assert cell.endswith(f"; 8524 missing, {sentences['value_without_missing']:.1f} without them; chance "
                         f"{sentences['chance']:.1f}, {sentences['chance_without_missing']:.1f} without them")
    table7 = pd.read_csv(figures / "03_ablations_table7.csv")
    assert table7.iloc[-1]["fps"] == "not recorded" and table7.iloc[-1]["inter-pair mAP"].endswith("without them")


def _ablation_records(collected, *, protocols, bootstrap: int, seed: int = 0):
    """The records of 03's run: SOVABench description caches on its protocols, with its bootstrap and seed."""
    from sova_lib.report.baselines import BENCHMARK

    keep = ((collected["kind"] == "description cache") & (collected["benchmark"] == BENCHMARK)
            & collected["protocol"].isin(protocols) & (collected["bootstrap"] == bootstrap)
            & (collected["seed"] == seed))
    return collected[keep].reset_index(drop=True)


def test_ablation_records_leave_other_benchmarks_out(tmp_path):
    """VANTAGE and MUVR records of kind "description cache" without a bootstrap are not ablation rows."""
    from sova_lib.benchmarks.muvr import MuvrResult
    from sova_lib.benchmarks.vantage import VantageResult
    from sova_lib.records import collect_records, make_record, write_record

    run = {"kind": "description cache", "bootstrap": 0, "seed": 0}
    made = [
        make_record(source="a SOVABench cache", benchmark="SOVABench", protocol="intra-pair", value=60.0, **run),
        VantageResult("vqa", "accuracy", 50.0, "official", 4, 4, 4, "question", "none").to_record(
            kind="description cache", source="a VANTAGE answer file", seed=0),
        MuvrResult("base", "text", "a MUVR cache", "expected", 0.0, {"mAP": 40.0}, {"news": {"mAP": 40.0}},
                   3).to_record(source="a MUVR cache", **run),
        make_record(source="a SOVABench cache", benchmark="SOVABench", protocol="inter-pair", value=5.0, **run),
    ]
    for record in made:
        write_record(record, tmp_path)
    collected = collect_records(tmp_path)
    assert (collected["bootstrap"] == 0).all() and (collected["kind"] == "description cache").all()
    assert set(collected["benchmark"]) == {"SOVABench", "VANTAGE-Bench", "MUVR"}
    kept = _ablation_records(collected, protocols=["intra-pair"], bootstrap=0)
    assert kept[["benchmark", "protocol", "value"]].values.tolist() == [["SOVABench", "intra-pair", 60.0]]


ERROR_MODES = ["hallucination", "under-description", "temporal misunderstanding", "action assumption", "correct"]


def test_errors(executed):
    from sova_lib.evaluation import evaluate
    from sova_lib.item_vectors import embed_descriptions

    figures, out = executed
    e = out["04_errors"]
    assert e["synthetic"] is True and e["source"].startswith("SYNTHETIC DEMONSTRATION")
    assert set(e["per_pair"]) == {"forward/reverse", "enter/exit", "load/unload", "trunk", "door", "start/stop",
                                  "turn"}
    assert e["pair_map"] == pytest.approx(np.mean(list(e["per_pair"].values())))
    assert e["sheet_rows"] == 97 and sum(e["error_modes"].values()) == 97  # the trunk pair
    sheet = pd.read_csv(figures / e["sheet"], keep_default_na=False)
    assert list(sheet.columns) == ["source", "id", "pair", "action", "AP (%)", "description", "n1 action",
                                   "n1 description", "error_mode", "note"]
    assert len(sheet) == 97 and set(sheet["pair"]) == {"trunk"}
    assert (sheet["error_mode"] == "").all() and (sheet["note"] == "").all()  # left for a researcher to fill
    assert sheet["source"].str.startswith("SYNTHETIC").all() and sheet["AP (%)"].is_monotonic_increasing
    # what make reproduce wrote into figures/ on the same defaults: the sheet (never overwritten there, so a stale one
    # would stay), the confusions and the mode counts, byte for byte
    for name in (e["sheet"], "04_errors_confusion.csv", "04_errors_modes.csv"):
        assert (figures / name).read_bytes() == (ROOT / "figures" / name).read_bytes(), differs(name)
    # the "labels" of the demonstration are its errors as constructed (the notebook's default fractions and seed)
    texts, constructed = error_analysis.synthetic_texts("intra-pair", swap_fraction=0.2, generic_fraction=0.1,
                                                        rng=np.random.default_rng(0))
    made = constructed[constructed["id"].isin(sheet["id"])]["constructed_as"].value_counts().to_dict()
    assert list(e["error_modes"]) == [*ERROR_MODES, "not labelled"]
    assert {mode: n for mode, n in e["error_modes"].items() if n} == made
    # the worst queries: lowest AP first, each with its own description and its neighbours', best neighbour first
    worst = pd.read_csv(figures / "04_errors_worst_queries.csv")
    assert worst["id"].tolist() == e["worst_ids"] and len(worst) == 5 and worst["AP (%)"].is_monotonic_increasing
    own = evaluate("intra-pair", embed_descriptions(texts, SentenceEncoder(show_progress=False)))
    assert worst["AP (%)"].iloc[0] == round(100 * min(own.per_query.values()), 2)
    assert (worst["id"] != worst["n1 id"]).all() and (worst["n1 similarity"] >= worst["n2 similarity"]).all()
    assert (worst["n2 similarity"] >= worst["n3 similarity"]).all()
    for _, row in worst.iterrows():
        assert row["description"] == texts[row["id"]] and row["n1 description"] == texts[row["n1 id"]]


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    """A cache folder holding two description caches of intra-pair clips, their sentences already encoded (so a
    kernel need not load the encoder): ``stand-in``, every clip described by its action but the trunk pair by
    "trunk" alone (blind to direction) and the first door clip by the opposite action, and ``part``, two clips.
    Returns the folder, ``{name: cache folder name}``, the texts and the door clips."""
    from sova_lib.benchmarks.sovabench import labels
    from sova_lib.protocols import get_protocol

    clips = get_protocol("intra-pair").clips()
    texts = {c.index: ("trunk" if c.pair == "trunk" else c.label) for c in clips}
    door = [c for c in clips if c.pair == "door"]
    texts[door[0].index] = labels.opposite_of(door[0].label)
    cache = tmp_path_factory.mktemp("stand-in")
    folders = {name: write_synthetic_cache(cache, part, name=name, description=f"a {name} cache").name
               for name, part in (("stand-in", texts), ("part", dict(list(texts.items())[:2])))}
    SentenceEncoder(cache_dir=cache, show_progress=False).encode(sorted(set(texts.values())))
    return cache, folders, texts, door


def test_errors_on_a_description_cache(stand_in, tmp_path, monkeypatch):
    """04_errors on a cache that covers the intra-pair protocol: the cache is analysed (not the demonstration), its
    record names it, the confusions are those counted by hand, and a labelling sheet already there is kept and
    counted."""
    from sova_lib.benchmarks.sovabench import labels
    from sova_lib.evaluation import baseline

    cache, folders, _, door = stand_in
    figures = tmp_path / "figures"
    figures.mkdir()
    labelled = pd.DataFrame({"id": [5, 9], "error_mode": ["hallucination", " "], "note": ["", ""]})
    labelled.to_csv(figures / "04_errors_labels_trunk.csv", index=False)
    before = (figures / "04_errors_labels_trunk.csv").read_bytes()
    _kernel_env(tmp_path, monkeypatch)
    reproduce.run_notebook(NOTEBOOKS / "04_errors.py", tmp_path / "04_errors.ipynb",
                           {"figures_dir": str(figures), "cache_dir": str(cache), "worst_k": 3})
    e = json.loads((figures / "04_errors.json").read_text())
    assert e["synthetic"] is False and e["source"] == "synthetic demonstration (a stand-in cache)"
    # an existing sheet is never overwritten: its labels are counted, a blank mode is "not labelled"
    assert (figures / "04_errors_labels_trunk.csv").read_bytes() == before and e["sheet_rows"] == 97
    assert e["error_modes"] == {**dict.fromkeys(ERROR_MODES, 0), "hallucination": 1, "not labelled": 1}
    (record,) = [json.loads(p.read_text()) for p in (figures / "results").glob("*.json")]
    assert record["cache"] == folders["stand-in"] and record["benchmark"] == "SOVABench"
    assert record["protocol"] == "intra-pair" and record["bootstrap"] == 0 and record["seed"] is None
    # every query of a pair described by its action ranks its own action first; the trunk pair's one sentence ties
    # every clip, so its expected AP is exactly the random ranking's
    assert record["per_class"] == {**dict.fromkeys(["forward/reverse", "enter/exit", "load/unload", "start/stop",
                                                    "turn"], 100.0), "trunk": record["per_class"]["trunk"],
                                   "door": record["per_class"]["door"]}
    assert record["per_class"]["trunk"] == round(baseline("intra-pair", "random-ranking").per_pair["trunk"], 2)
    conf = pd.read_csv(figures / "04_errors_confusion.csv").set_index(["pair", "action"])
    assert len(conf) == 7 * 3 and (conf.drop(index=["trunk", "door"], level="pair")["top-1 opposite (%)"] == 0).all()
    trunk = conf.loc[("trunk", "all")]
    assert trunk["top-1 opposite (%)"] == pytest.approx(trunk["chance (%)"], abs=0.01)
    # opening trunk: 49 clips, each ties with 48 others of its action and 48 closing clips -> 48/96 = 50%
    assert conf.loc[("trunk", "opening trunk"), "top-1 opposite (%)"] == 50.0
    assert conf.loc[("trunk", "closing trunk"), "top-1 opposite (%)"] == pytest.approx(100 * 49 / 96, abs=0.01)
    # door: only the flipped clip confuses among its action's queries; each query of the opposite action ties with
    # its n_opp - 1 peers and the flipped clip, so one in n_opp picks the flipped clip
    n_same = sum(c.label == door[0].label for c in door)
    n_opp = len(door) - n_same
    assert conf.loc[("door", door[0].label), "top-1 opposite (%)"] == pytest.approx(100 / n_same, abs=0.01)
    assert conf.loc[("door", labels.opposite_of(door[0].label)), "top-1 opposite (%)"] == pytest.approx(
        100 / n_opp, abs=0.01)
    worst = pd.read_csv(figures / "04_errors_worst_queries.csv")
    assert worst["id"].iloc[0] == door[0].index and worst["n1 action"].iloc[0] != worst["action"].iloc[0]


@pytest.mark.parametrize("parameters, refusal", [
    ({"cache_name": "nope"}, r"no description cache named 'nope' under .*; found: \['part__\w+', 'stand-in__"),
    ({"cache_name": "part"}, r"cache 'part__\w+' holds 2 of the 2300 intra-pair clips; the error analysis needs all"),
    ({"pair": "no-such-pair"}, r"unknown pair 'no-such-pair'; choose one of \['forward/reverse', 'enter/exit'"),
    ({"labels_csv": "sheet.csv"}, r"sheet.csv, line 3 \(clip 9\): unknown error mode 'halucination'; use one of "
                                  r"hallucination, under-description, "),
], ids=["no such cache", "cache lacks clips", "unknown pair", "unknown error mode"])
def test_errors_refuses_a_bad_parameter(parameters, refusal, stand_in, tmp_path, monkeypatch):
    """04_errors stops, naming what is wrong, on a cache name it does not find or that lacks clips, an unknown pair
    and a labelling sheet with an unknown error mode."""
    from papermill.exceptions import PapermillExecutionError

    cache, folders, _, _ = stand_in
    pd.DataFrame({"id": [5, 9], "error_mode": ["hallucination", "halucination"]}).to_csv(tmp_path / "sheet.csv",
                                                                                        index=False)
    given = {"figures_dir": str(tmp_path / "figures"), "cache_dir": str(cache),
             "cache_name": folders["stand-in"], **parameters}
    given["cache_name"] = folders.get(given["cache_name"], given["cache_name"])
    if "labels_csv" in parameters:
        given["labels_csv"] = str(tmp_path / "sheet.csv")
    _kernel_env(tmp_path, monkeypatch)
    with pytest.raises(PapermillExecutionError, match=refusal):
        reproduce.run_notebook(NOTEBOOKS / "04_errors.py", tmp_path / "04_errors.ipynb", given)


def test_muvr(executed, tmp_path):
    from fractions import Fraction

    from sova_lib.benchmarks import muvr
    from sova_lib.benchmarks.muvr import hand_cases

    figures, out = executed
    m = out["05_muvr"]
    assert m["hand_cases"]["2: uAP"] == round(44 / 63, 4) and m["hand_cases"]["6: random E[AP], N = 4, R = 2"] == 0.6806
    assert all(r["computed"] == pytest.approx(float(Fraction(str(r["by hand"]))), abs=1e-4) for r in hand_cases.hand_cases())
    # the synthetic set is the same for the same seed: the random ranking is recomputed here independently
    root = muvr.write_synthetic(tmp_path / "muvr", np.random.default_rng(0))
    random = muvr.random_ranking([muvr.load_partition(root, p) for p in muvr.PARTITIONS])
    assert m["synthetic_base"]["random ranking"]["mAP"] == pytest.approx(random.metrics["mAP"])
    assert m["synthetic_base"]["text+video"]["mAP"] > m["synthetic_base"]["random ranking"]["mAP"]
    always_yes = next(r for r in m["qa_stand_ins"] if r["stand-in"] == "always 'Yes'" and r["parse"] == "official")
    assert always_yes["accuracy all"] == 50.0 and always_yes["reranking score all"] == 0.0
    assert m["table7_not_computed"] == 60 and m["table8_not_computed"] == 40  # no released data given
    assert "58.0" in (figures / "05_muvr_table7.md").read_text()


def test_muvr_scores_a_description_cache_and_changes_no_other_output(tmp_path, monkeypatch, capsys):
    """Notebook 05 with ``description_cache`` (a ``sova muvr describe`` run on ``sova muvr synthetic``'s data, one
    partition): its table holds what ``sova muvr evaluate --descriptions`` prints, and every other output is the
    committed file, byte for byte (the headline JSON differs by the one added entry)."""
    from sova_lib.cli import main

    data, cache, figures = tmp_path / "data", tmp_path / "cache", tmp_path / "figures"
    assert main(["muvr", "synthetic", "--out", str(data), "--partitions", "news"]) == 0
    assert main(["muvr", "describe", "--data", str(data), "--video-root", str(data / "videos"), "--backend",
                 "motion", "--cache-dir", str(cache), "--no-progress"]) == 0
    (folder,) = (cache / "descriptions").iterdir()
    capsys.readouterr()
    assert main(["muvr", "evaluate", "--data", str(data), "--descriptions", str(folder), "--bootstrap", "0",
                 "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    _kernel_env(tmp_path, monkeypatch)
    reproduce.run_notebook(NOTEBOOKS / "05_muvr.py", tmp_path / "05_muvr.ipynb",
                           {"figures_dir": str(figures), "synthetic_dir": str(tmp_path / "muvr"),
                            "data_root": str(data), "description_cache": str(folder)})
    table = pd.read_csv(figures / "05_muvr_descriptions.csv").set_index("partition")
    assert list(table.index) == ["news", "mean"] and table.loc["news", "n_rows"] == 4
    assert table.loc["mean", "mAP"] == round(expected["metrics"]["mAP"], 2) > 0
    assert table.loc["news", "uAP"] == round(expected["per_partition"]["news"]["uAP"], 2)
    summary = json.loads((figures / "05_muvr.json").read_text())
    assert summary.pop("descriptions")["source"] == str(folder)
    assert summary == json.loads((ROOT / "figures" / "05_muvr.json").read_text())
    others = sorted(p.name for p in figures.glob("05_muvr_*") if not p.name.startswith("05_muvr_descriptions"))
    assert len(others) == 14
    differ = [n for n in others if (figures / n).read_bytes() != (ROOT / "figures" / n).read_bytes()]
    assert differ == [], differs(", ".join(differ))


def test_muvr_computes_tables_7_and_8_from_released_features(tmp_path, monkeypatch):
    """Notebook 05 with ``data_root`` and ``features_root``: a model whose features folder is there (here the synthetic
    set's, as EVA-CLIP's) has a computed row under each of its paper rows of Tables 7 and 8, holding what ``sova muvr
    evaluate --features`` gives on all five partitions, to one decimal; a model without a folder (OpenCLIP) reads
    "not computed here"."""
    from sova_lib.benchmarks import muvr
    from sova_lib.benchmarks.muvr.synthetic import SYNTHETIC_MODEL
    from tests.benchmarks.muvr.fixtures import synthetic

    data = synthetic(tmp_path / "data", 2, topics=2, videos_per_topic=5, distractors=2)  # the five partitions
    features, figures = tmp_path / "features", tmp_path / "figures"
    features.mkdir()
    (features / "EVA-CLIP").symlink_to(data / "features" / "VLMs_1_15" / SYNTHETIC_MODEL)
    _kernel_env(tmp_path, monkeypatch)
    reproduce.run_notebook(NOTEBOOKS / "05_muvr.py", tmp_path / "05_muvr.ipynb",
                           {"figures_dir": str(figures), "synthetic_dir": str(tmp_path / "muvr"), "bootstrap": 0,
                            "data_root": str(data), "features_root": str(features)})
    table7 = pd.read_csv(figures / "05_muvr_table7.csv").set_index(["group", "model", "column"])
    table8 = pd.read_csv(figures / "05_muvr_table8.csv").set_index(["group", "model", "column"])
    video = muvr.evaluate_files(data, features=features / "EVA-CLIP", query="video")
    assert table7.loc[("video", "EVA-CLIP", "mAP")].tolist() == [50.7, str(round(video.metrics["mAP"], 1))]
    assert table7.loc[("video", "EVA-CLIP", "others"), "computed"] == str(round(video.per_partition["others"]["mAP"], 1))
    for table in (table7, table8):  # every group computed for EVA-CLIP, none for OpenCLIP (no folder)
        eva = table.xs("EVA-CLIP", level="model")
        assert set(eva[eva["computed"] != "not computed here"].index.get_level_values("group")) == set(
            table.index.get_level_values("group"))
        assert (table.xs("OpenCLIP (ViT-H-14)", level="model")["computed"] == "not computed here").all()
    filtered = muvr.evaluate_files(data, version="filter", features=features / "EVA-CLIP", tag_weight=0.3)
    assert "uAP" not in filtered.metrics and sorted(filtered.per_partition) == sorted(muvr.PARTITIONS)
    assert table8.loc[("p=0.3", "EVA-CLIP", "news"), "computed"] == str(round(filtered.per_partition["news"]["mAP"], 1))
    assert table8.loc[("p=0.3", "EVA-CLIP", "mAP"), "computed"] == str(round(filtered.metrics["mAP"], 1))
    summary = json.loads((figures / "05_muvr.json").read_text())
    assert summary["table7_not_computed"] == int((table7["computed"] == "not computed here").sum())
    assert summary["table7_not_computed"] == len(table7.xs("OpenCLIP (ViT-H-14)", level="model"))  # EVA-CLIP's all computed


def test_vantage(executed):
    figures, out = executed
    v = out["06_vantage"]
    assert v["hand_cases_match"] and v["hand_cases"] == 17 and v["mode"] == "official"
    assert sorted(v["synthetic"]) == ["dvc", "event_verification", "temporal", "vqa"]
    assert all(row["parse_rate"] == 1.0 for row in v["synthetic"].values())
    assert "stand-in" in v["describer"] and v["computed_tasks"] == [] and v["published_rows"] == 19
    ci = v["synthetic"]["temporal"]["ci"]
    assert ci[0] <= v["synthetic"]["temporal"]["value"] <= ci[1]
    published = (figures / "06_vantage_published.md").read_text()
    assert "computed here" not in published and "55.71" in published  # the paper's rows alone
    assert (figures / "06_vantage_success_curve.png").stat().st_size > 5_000


def test_image_tasks(executed):
    figures, out = executed
    t = out["07_image_tasks"]
    # VSR: 1222 items of 2 choices; the one CountBench item: the nine choices "two".."ten" (100/9 = 11.11 at the
    # records' 2 decimals); the one Visual7W-Count question: four options; no What's Up file; SpatialBench never
    assert t["random"] == {"SpatialBench InD.": None, "SpatialBench OutD.": None, "VSR": 50.0, "What's Up A": None,
                           "What's Up B": None, "CountBench": 11.11, "Visual7W-Count": 25.0}
    rows = pd.read_csv(figures / "07_image_tasks_random.csv").set_index("column")
    assert len(rows) == 7 and rows["items"].to_dict() == {"SpatialBench InD.": 0, "SpatialBench OutD.": 0, "VSR": 1222,
                                                          "What's Up A": 0, "What's Up B": 0, "CountBench": 1,
                                                          "Visual7W-Count": 1}
    notes = rows["note"].fillna("")
    assert notes["VSR"] == notes["CountBench"] == "" and "controlled_images_dataset.json" in notes["What's Up A"]
    assert "SpatialBench" in notes["SpatialBench InD."] and notes["SpatialBench OutD."].startswith("not computed here")
    collected = pd.read_csv(figures / "results.csv")
    random = collected[(collected["benchmark"] == "image-tasks") & (collected["baseline"] == "random")]
    assert sorted(random["protocol"]) == ["countbench", "visual7w-count", "vsr-zeroshot", "whatsup-a", "whatsup-b"]
    assert t["oracle"] == {"VSR": 100.0, "CountBench": 100.0, "Visual7W-Count": 100.0}
    assert t["caches"] == 0 and t["ties"] == "expected"
    check = {row["averages"]: row for row in t["random_check"]}
    assert check["printed in Table 3"] == {"averages": "printed in Table 3", "Spatial Avg.": 31.9, "Count Avg.": 17.5,
                                           "Avg.": 24.7}
    assert round(check["recomputed from the printed columns"]["Count Avg."], 2) == 10.0
    assert round(check["recomputed from the printed columns"]["Avg."], 2) == 20.96
    assert round(check["recomputed with Visual7W-Count = 25.0 (4 options)"]["Avg."], 2) == 24.71
    table = (figures / "07_image_tasks_table3.md").read_text()
    assert "Random (recomputed from the choice lists)" in table and "not computed here" in table
    # one decimal; an empty paper cell "-", an empty computed cell "not computed here"
    assert "| CLIP-ViT-H-14 | paper | - | - | 54.5 | - | - | - | - | - | - | - |" in table
    assert "| oracle (first 10 items; an upper bound) | computed here | not computed here | not computed here | 100.0 |" \
        in table
    # the paper's rows keep their prompts apart; a computed row's average needs every column it averages
    frame = pd.read_csv(figures / "07_image_tasks_table3.csv").set_index("row")
    assert frame.loc["InternVL3.5 8B (general)", "Avg."] == 45.3
    assert frame.loc["InternVL3.5 8B (task-aware)", "Avg."] == 54.3
    chance = frame.loc["Random (recomputed from the choice lists)"]
    assert chance["Count Avg."] == pytest.approx((11.11 + 25.0) / 2) and np.isnan(chance["Spatial Avg."])
    assert np.isnan(chance["Avg."]) and chance["source"] == "computed here"


def test_image_tasks_score_description_caches(tmp_path, monkeypatch):
    """07_image_tasks scores each image description cache on every task it describes completely (and only those), one
    record each, and names each one's row by its source, and by its folder when two caches share a source."""
    from sova_lib.benchmarks import image_tasks

    annotations = _image_annotations(tmp_path / "annotations", countbench=[("two cats", 2), ("three dogs", 3)])
    items = image_tasks.load("countbench", annotations)
    right = {i.image_key: i.choices[i.answer] for i in items}  # each image described by its correct choice
    wrong = {i.image_key: i.choices[(i.answer + 1) % len(i.choices)] for i in items}  # and by a wrong one
    cache = tmp_path / "cache"
    folders = [write_synthetic_cache(cache, texts, name=name, description=description).name
               for texts, name, description in ((right, "a-full", "one source"), (dict([*right.items()][:1]), "b-part",
                                                                                  "one source"),
                                                (wrong, "c-alone", "another source"))]
    figures = tmp_path / "figures"
    _kernel_env(tmp_path, monkeypatch)
    reproduce.run_notebook(NOTEBOOKS / "07_image_tasks.py", tmp_path / "07_image_tasks.ipynb",
                           {"figures_dir": str(figures), "cache_dir": str(cache), "annotations": str(annotations),
                            "oracle_items": 2, "bootstrap": 0})
    t = json.loads((figures / "07_image_tasks.json").read_text())
    assert t["caches"] == 3 and t["described_rows"] == 3  # each on CountBench alone, which it touches
    made = {r["cache"]: r for r in (json.loads(p.read_text()) for p in (figures / "results").glob("*.json"))
            if r["kind"] == "description cache"}
    full, part, alone = (made[f] for f in folders)
    assert (full["protocol"], full["benchmark"], full["n_queries"]) == ("countbench", "image-tasks", 2)
    # the correct choice is the one choice a description's sentence equals: every item right; a wrong choice: none
    assert full["value"] == 100.0 and alone["value"] == 0.0
    assert full["source"] == "synthetic demonstration (one source)" and full["encoder"] == "all-MiniLM-L6-v2"
    assert full["model"] == json.loads((cache / "descriptions" / folders[0] / "manifest.json").read_text())["model"]
    assert part["value"] is None and part["note"] == "1 of 2 images not described: not scored"  # never on a subset
    table = pd.read_csv(figures / "07_image_tasks_table3.csv")
    computed = table[table["source"] == "computed here"].set_index("row")["CountBench"]
    assert list(computed.index) == ["Random (recomputed from the choice lists)", "oracle (first 2 items; an upper bound)",
                                    f"synthetic demonstration (one source) [here: {folders[0]}]",
                                    f"synthetic demonstration (one source) [here: {folders[1]}]",
                                    "synthetic demonstration (another source) [here]"]
    assert computed.iloc[2] == 100.0 and np.isnan(computed.iloc[3]) and computed.iloc[4] == 0.0
    assert f"| synthetic demonstration (one source) [here: {folders[1]}] | computed here | " in \
        (figures / "07_image_tasks_table3.md").read_text()


def test_benchmark_reads_the_crop_sizes_from_a_manifest_file(tmp_path):
    """``manifest`` names a planned manifest TSV: Figure 3(c) reads its rows (here, the sample's 91 clips). The
    durations follow the ``fps`` given (here 15 frames per second: twice the default's seconds)."""
    from sova_lib.benchmarks.sovabench.clips.plan import MANIFEST_COLUMNS, plan_clips, read_manifest
    from sova_lib.benchmarks.sovabench.clips.stats import manifest_frame
    from sova_lib.benchmarks.sovabench.splits import DATA_DIR, load_split

    clips = {c.index: c for split in ("interpair", "intrapair") for c in load_split(split)}
    planned = manifest_frame(plan_clips(list(clips.values()), DATA_DIR / "meva-annotations-sample"))
    manifest = tmp_path / "manifest.tsv"
    planned[planned["status"] != "annotation_missing"][list(MANIFEST_COLUMNS)].to_csv(manifest, sep="\t", index=False)
    assert len(read_manifest(manifest)) == 91
    figures = tmp_path / "figures"
    reproduce.run_notebook(NOTEBOOKS / "01_benchmark.py", tmp_path / "01_benchmark.ipynb",
                           {"figures_dir": str(figures), "manifest": str(manifest),
                            "fps": {"MEVA": 15.0, "VIRAT": 15.0}})
    crops = json.loads((figures / "01_benchmark.json").read_text())["crops"]
    assert crops["source"] == "manifest manifest.tsv" and crops["clips"] == 91
    durations = pd.read_csv(figures / "01_benchmark_figure3b.csv")
    at_30 = pd.read_csv(ROOT / "figures" / "01_benchmark_figure3b.csv")  # the default, 30 frames per second
    assert durations["duration_s"].tolist() == pytest.approx((2 * at_30["duration_s"]).tolist())
