"""Figures are the same bytes on every machine, and the notebooks' figure cells redraw the committed files.

Another CPU (another BLAS, another summation order) can return a similarity
or a score that differs from this machine's in its last bit. Each figure
draws its values as it prints them (``plots.printed``), and writes no date or
version into its files (``plots.FILE_METADATA``), so such a difference must
not change one byte of the PNG or the PDF. The values are drawn at random
away from the rounding boundaries (a value within its last bits of a
boundary could round either way on two machines, whatever the code does).

Each figure is drawn by its notebook's cells tagged ``figure``; run on the
committed data (the CSVs, records and description cache the notebooks
wrote), those cells must write every committed figure byte for byte.
"""
import json
import shutil
import tempfile

import numpy as np
import pandas as pd
import pytest

from sova_lib.report import explore, plots
from tests.figure_helpers import close_figures, differs, draw_figures  # noqa: F401  (close_figures: closes every figure)
from tests.paper_tables import beside, figure2b_points
from tests.paths import ROOT

FIGURES_DIR = ROOT / "figures"


def _values(rng, shape, digits, low=0.0, high=1.0):
    """float32 values in [low, high), none within 1e-4 of a boundary of rounding to ``digits`` decimals."""
    values = rng.uniform(low, high, size=shape).astype(np.float32)
    scaled = values.astype(np.float64) * 10 ** digits
    near = np.abs(scaled - np.floor(scaled) - 0.5) < 1e-4 * 10 ** digits
    values[near] += np.float32(0.3 / 10 ** digits)
    return values


def _ulp(values, direction):
    """Each value moved by one float32 unit in the last place (up or down), as float64."""
    values = np.asarray(values, dtype=np.float32)
    return np.nextafter(values, np.float32(direction * np.inf)).astype(np.float64)


def _both(make, values):
    """The PNG and PDF bytes of ``make(values)`` for the values, one ulp above and one ulp below."""
    out = []
    for v in (np.asarray(values, dtype=np.float64), _ulp(values, 1), _ulp(values, -1)):
        fig = make(v)
        out.append((plots.figure_bytes(fig, "png", dpi=100), plots.figure_bytes(fig, "pdf")))
    return out


def _quickstart_figure(figure, frames):
    """One of the quickstart's figures, drawn by its cells from ``frames``."""
    with tempfile.TemporaryDirectory() as out:
        return draw_figures("00_quickstart", out, lambda ns: frames, figure=figure)["fig"]


def _heatmap(v):
    sentences = [f"Sentence {k} of the clip." for k in range(v.shape[0])]
    i, j = np.unravel_index(int(np.argmax(v)), v.shape)
    return _quickstart_figure("sentence_similarity", {
        "cosines": v, "i": i, "j": j, "query": "q", "other": "o",
        "texts": {"q": " ".join(sentences), "o": " ".join(sentences[: v.shape[1]][::-1])}})


def _heatmaps(v):
    return _quickstart_figure("clip_similarity", {"max_matrix": v, "mean_matrix": v.T, "names": {"long": "a describer"},
                                                  "clip_ids": [f"clip-{k}" for k in range(v.shape[0])]})


def _explorer(v):
    hits = pd.DataFrame({"rank": [1, 2, 3, 4], "id": ["a", "b", "c", "d"], "similarity": v,
                         "relevant": [True, False, True, False], "query sentence": ["q"] * 4,
                         "item sentence": ["s"] * 4, "sentence pair": [(0, 0)] * 4, "description": ["s"] * 4})
    view = explore.QueryView(protocol="p", query="q", query_class="forward", ap=0.5 + float(v[0]) / 3, n_relevant=2,
                             n_gallery=4, query_description="q", hits=hits)
    return explore.static_view(view)[1]


def _scatter(v):
    frame = pd.DataFrame({"label": [f"row {k}" for k in range(len(v))], "group": ["General MLLMs"] * len(v),
                          "prompt": ["general"] * len(v), "inter": 100 * v, "intra": 100 * v[::-1],
                          "source": ["paper"] * (len(v) - 1) + ["computed here"]})
    with tempfile.TemporaryDirectory() as out:  # Figure 2(b) as 02_results draws it
        return draw_figures("02_results", out, lambda ns: {"points": frame, "random_level": (3.4, 50.3)})["fig"]


def _ablation(v):
    frame = pd.DataFrame({"protocol": ["inter-pair"] * 3 + ["intra-pair"] * 3, "aggregate": ["max", "mean", "median"] * 2,
                          "value": 100 * v, "ci_low": 100 * v - 3.3, "ci_high": 100 * v + 2.2, "cache": "c",
                          "source": "s"})
    with tempfile.TemporaryDirectory() as out:  # the bars as 03_ablations draws them
        return draw_figures("03_ablations", out, lambda ns: {"agg_rows": frame}, cache_dir=out)["ax"].figure


def _confusion(v):
    frame = pd.DataFrame({"pair": ["trunk"] * 3 + ["door"] * 3,
                          "action": ["opening trunk", "closing trunk", "all", "opening door", "closing door", "all"],
                          "top-1 opposite (%)": 100 * v, "chance (%)": [50.3] * 6})
    frames = {"confusion": frame, "synthetic": True}
    with tempfile.TemporaryDirectory() as out:  # the bars as 04_errors draws them
        return draw_figures("04_errors", out, lambda ns: frames, figure="confusion")["fig"]


FIGURES = {  # figure -> (draw, shape of its values, decimals it prints)
    "sentence heatmap": (_heatmap, (4, 3), 2),
    "clip heatmaps": (_heatmaps, (4, 4), 2),
    "explorer bars": (_explorer, (4,), 3),
    "Figure 2(b)": (_scatter, (5,), 4),
    "ablation bars": (_ablation, (6,), 3),
    "confusion bars": (_confusion, (6,), 3),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_one_ulp_changes_no_byte(name):
    draw, shape, digits = FIGURES[name]
    values = _values(np.random.default_rng(len(name)), shape, digits, low=0.05, high=0.95)
    first, up, down = _both(draw, values)
    assert first == up == down, name
    # and the figure does show its values: a change of one printed unit changes the bytes
    moved = np.asarray(values, dtype=np.float64).copy()
    moved.flat[1] += 2 * 10.0 ** -digits  # off the diagonal, which the clip heatmaps leave blank
    assert plots.figure_bytes(draw(moved), "png", dpi=100) != first[0], name


def test_save_figure_writes_no_date_or_version(tmp_path):
    import matplotlib

    fig = _heatmap(_values(np.random.default_rng(0), (2, 2), 2))
    png, pdf = (p.read_bytes() for p in plots.save_figure(fig, tmp_path / "h"))
    version = matplotlib.__version__.encode()
    assert version not in png and version not in pdf and b"CreationDate" not in pdf and b"Software" not in png
    again = [p.read_bytes() for p in plots.save_figure(fig, tmp_path / "again")]
    assert again == [png, pdf]


# --------------------------------------------------------------------------- the committed figures, redrawn

def _committed_01(ns):
    """What 01_benchmark's figure cells read, from its committed CSVs and JSON."""
    return {"counts": pd.read_csv(FIGURES_DIR / "01_benchmark_figure3a.csv").set_index("action"),
            "durations": pd.read_csv(FIGURES_DIR / "01_benchmark_figure3b.csv"),
            "sizes": pd.read_csv(FIGURES_DIR / "01_benchmark_figure3c.csv"),
            "source": json.loads((FIGURES_DIR / "01_benchmark.json").read_text())["crops"]["source"],
            "pairs": pd.read_csv(FIGURES_DIR / "01_benchmark_figureA1.csv")}


def _committed_02(ns):
    """Figure 2(b)'s points, from the committed records (``figures/results``) of 02_results' run: its baselines."""
    collected = ns["records"].collect_records(FIGURES_DIR / "results")
    computed = collected[(collected["benchmark"] == "SOVABench") & (collected["kind"] == "baseline")
                         & (collected["bootstrap"] == ns["bootstrap"])]
    return figure2b_points(beside("Table 4", computed), ns["figures_dir"])  # its points cell, then its figure


def _committed_04(ns):
    """What 04_errors' figure cells read, from its committed CSVs and JSON (the synthetic demonstration)."""
    errors = json.loads((FIGURES_DIR / "04_errors.json").read_text())
    modes = pd.read_csv(FIGURES_DIR / "04_errors_modes.csv")
    return {"confusion": pd.read_csv(FIGURES_DIR / "04_errors_confusion.csv").drop(columns="source"),
            "synthetic": errors["synthetic"], "counts": modes[["error mode", "clips"]],
            "paper_counts": dict(zip(modes["error mode"], modes["paper"])),
            "labelled": pd.read_csv(FIGURES_DIR / f"04_errors_labels_{errors['pair']}.csv")}


COMMITTED = {  # notebook -> (what its figure cells read, from the committed files; the figures it writes)
    "01_benchmark": (_committed_01, ["figure3a", "figure3b", "figure3c", "figureA1"]),
    "02_results": (_committed_02, ["figure2b"]),
    "04_errors": (_committed_04, ["confusion", "modes"]),
    "06_vantage": (lambda ns: {}, ["success_curve"]),  # its cell computes its own curve
}


def test_the_quickstarts_figure_cells_redraw_its_committed_figures(tmp_path):
    """The quickstart's cells up to its last figure, run on the committed description cache: the same bytes."""
    shutil.copytree(ROOT / "cache" / "descriptions", tmp_path / "cache" / "descriptions")
    draw_figures("00_quickstart", tmp_path / "figures", upto_figures=True, cache_dir=str(tmp_path / "cache"))
    for stem in ("filmstrips", "sentence_similarity", "clip_similarity"):
        for suffix in (".png", ".pdf"):
            name = f"00_quickstart_{stem}{suffix}"
            assert (tmp_path / "figures" / name).read_bytes() == (FIGURES_DIR / name).read_bytes(), differs(name)


@pytest.mark.parametrize("notebook", list(COMMITTED))
def test_the_notebooks_figure_cells_redraw_the_committed_figures(notebook, tmp_path):
    """The figure cells of each notebook, as a reader edits them, run on the committed data: the same bytes."""
    frames, stems = COMMITTED[notebook]
    draw_figures(notebook, tmp_path, frames)
    for stem in stems:
        for suffix in (".png", ".pdf"):
            name = f"{notebook}_{stem}{suffix}"
            assert (tmp_path / name).read_bytes() == (FIGURES_DIR / name).read_bytes(), differs(name)
