"""What the notebooks' figure cells draw, on small frames: the cells a reader edits, run as the notebook runs them."""
import numpy as np
import pandas as pd

from tests.figure_helpers import boxes, close_figures, draw_figures, overlap  # noqa: F401  (closes every figure)
from tests.paper_tables import beside, figure2b_points

NO_ROWS = pd.DataFrame(columns=["kind", "protocol", "source", "value"])


def _figure2b(tmp_path, computed=NO_ROWS):
    """02_results' cell of the points, then its figure cells, on Table 4 beside ``computed``; returns the figure."""
    def frames(ns):
        return figure2b_points(beside("Table 4", computed), ns["figures_dir"])
    return draw_figures("02_results", tmp_path, frames)["fig"]


def test_figure2b_labels_every_point_and_says_where_an_axis_starts(tmp_path):
    fig = _figure2b(tmp_path)
    (ax,) = fig.axes
    # the x axis starts at 0; the y axis, zoomed on the paper's 50-54, says where it starts
    assert ax.get_xlim()[0] == 0 and ax.get_xlabel() == "inter-pair mAP (%)"
    assert ax.get_ylabel() == f"intra-pair Pair-mAP (%); axis from {ax.get_ylim()[0]:.1f}, not 0"
    labels = [t for t in ax.texts if t.get_text()]
    assert len(labels) == 21 and "Random" in {t.get_text() for t in labels}  # one per row of the paper's Table 4
    placed = boxes(fig, labels)
    assert not any(overlap(a, b) for i, a in enumerate(placed) for b in placed[i + 1:])
    legend = ax.get_legend().get_window_extent()
    assert not any(overlap(b, legend) for b in placed)
    # dashed lines at the paper's Random row (3.4, 50.3)
    dashed = [(line.get_xdata()[0], line.get_ydata()[0]) for line in ax.lines if line.get_linestyle() == "--"]
    assert dashed == [(3.4, 0), (0, 50.3)]
    assert (tmp_path / "02_results_figure2b.png").exists() and (tmp_path / "02_results_figure2b.pdf").exists()


def test_figure2b_zooms_on_the_papers_points_and_shows_a_far_one_in_an_overview(tmp_path):
    far = pd.DataFrame([{"kind": "description cache", "source": "far", "protocol": protocol, "value": value}
                        for protocol, value in (("inter-pair", 90.0), ("intra-pair", 70.0))])
    fig = _figure2b(tmp_path, far)
    main, overview = fig.axes
    assert main.get_xlim()[1] < 90 < overview.get_xlim()[1]  # the paper's range stays readable
    assert [t.get_text() for t in overview.texts] == ["far [here]"]
    assert "far [here]" not in {t.get_text() for t in main.texts}
    assert main.get_title().endswith("stars: computed here") and "(paper's range)" in main.get_title()
    assert [h.get_text() for h in main.get_legend().get_texts()][-1] == "computed here"


def test_figure2b_draws_a_star_only_for_a_row_computed_with_both_protocols(tmp_path):
    computed = pd.DataFrame([
        {"kind": "description cache", "source": "MiniCPM-V 4.5 (task-aware)", "model": "openbmb/MiniCPM-V-4_5",
         "prompt": "task-aware", "cache": "c1", "encoder": "e", "protocol": "inter-pair", "value": 37.0},
        {"kind": "baseline", "baseline": "random-ranking", "source": "random ranking", "protocol": "inter-pair",
         "value": 3.0},
        {"kind": "baseline", "baseline": "random-ranking", "source": "random ranking", "protocol": "intra-pair",
         "value": 50.0}])
    fig = _figure2b(tmp_path, computed)
    (ax,) = fig.axes
    labels = sorted(t.get_text() for t in ax.texts if t.get_text())
    # MiniCPM-V was computed on inter-pair alone: no star; the random ranking on both: one star
    assert len(labels) == 22 and [label for label in labels if label.endswith("[here]")] == ["random ranking [here]"]
    stars = [c for c in ax.collections if c.get_paths() and len(c.get_offsets()) and c.get_sizes()[0] == 150]
    assert [tuple(c.get_offsets()[0]) for c in stars] == [(3.0, 50.0)]


def test_error_figures_name_each_action_and_the_papers_counts(tmp_path):
    confusion = pd.DataFrame([
        {"pair": "trunk", "action": "opening trunk", "top-1 opposite (%)": 10.0, "chance (%)": 50.0},
        {"pair": "trunk", "action": "closing trunk", "top-1 opposite (%)": 30.04, "chance (%)": 50.0},
        {"pair": "trunk", "action": "all", "top-1 opposite (%)": 20.04, "chance (%)": 50.0},
    ])
    ax = draw_figures("04_errors", tmp_path, lambda ns: {"confusion": confusion, "synthetic": False},
                      figure="confusion")["ax"]
    assert "(%)" in ax.get_xlabel() and ax.get_title() == "top-ranked neighbour of the opposite action"
    # each per-action dot carries its action's name, then the pair's value as printed
    assert [t.get_text() for t in ax.texts] == ["opening trunk", "closing trunk", "20.0%"]
    assert ax.patches[0].get_width() == 20.0 and list(ax.collections[0].get_offsets()[:, 0]) == [10.0, 30.0]
    counts = pd.DataFrame({"error mode": ["hallucination", "correct"], "clips": [3, 4]})
    ax = draw_figures("04_errors", tmp_path, lambda ns: {"counts": counts, "paper_counts": {"hallucination": 34},
                                                         "synthetic": False, "labelled": [0] * 7}, figure="modes")["ax"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["labelled here",
                                                                   "paper (Appendix E: MiniCPM-V 4.5, task-aware)"]
    assert [t.get_text() for t in ax.texts] == ["3", "4", "34", ""]  # a mode the paper did not count: no label
    assert ax.get_title() == "error modes, trunk pair, n = 7"
    assert (tmp_path / "04_errors_modes.png").exists() and (tmp_path / "04_errors_confusion.pdf").exists()


def test_ablation_bars_show_the_first_cache_with_room_above_its_intervals(tmp_path):
    rows = pd.DataFrame({"protocol": ["inter-pair", "inter-pair", "inter-pair"], "aggregate": ["max", "mean", "max"],
                         "value": [10.04, 20.0, 99.0], "ci_low": [9.0, 19.0, 98.0], "ci_high": [11.0, 21.06, 99.5],
                         "cache": ["a", "a", "b"], "source": ["model A", "model A", "model B"]})
    ax = draw_figures("03_ablations", tmp_path, lambda ns: {"agg_rows": rows}, cache_dir=tmp_path)["ax"]
    assert ax.get_title() == "Set aggregation: model A" and ax.get_ylim() == (0, 21.1 * 1.2)
    assert [t.get_text() for t in ax.texts] == ["10.0", "20.0"]  # cache b is left out
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["max", "mean"]
    assert (tmp_path / "03_ablations_aggregation.png").exists()


def test_the_sentence_heatmap_writes_each_cosine_boxes_the_largest_and_lists_the_sentences(tmp_path):
    long = "A person walks from the left edge of the square to the fountain, then on to the right edge, slowly."
    frames = {"cosines": np.array([[0.2, 0.9], [0.5, 0.1], [0.6, 0.0]]), "i": 0, "j": 1, "query": "query", "other": "other",
              "texts": {"query": f"A.\n{long}\n{long[:-1]}, very slowly.", "other": "C.\nD."}}
    fig = draw_figures("00_quickstart", tmp_path, lambda ns: frames, figure="sentence_similarity")["fig"]
    ax = fig.axes[0]
    *cells, listed = ax.texts
    assert [(t.get_text(), t.get_color()) for t in cells] == [("0.20", "white"), ("0.90", "black"), ("0.50", "white"),
                                                              ("0.10", "white"), ("0.60", "black"), ("0.00", "white")]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["#1", "#2", "#3"] and ax.get_ylabel() == "rows: query"
    # the sentences are listed whole under the heatmap, wrapped, never cut
    assert listed.get_text().split("\n")[:5] == ["rows, the sentences of query:", "  #1  A.", f"  #2  {long}",
                                                 "  #3  " + long[:-1] + ", very",
                                                 "       slowly."]
    assert listed.get_text().endswith("\n\ncolumns, the sentences of other:\n  #1  C.\n  #2  D.")
    (box,) = ax.patches
    assert box.get_xy() == (0.5, -0.5)  # around cell (0, 1)
    assert ax.images[0].get_clim() == (0.0, 1.0)


def test_the_clip_heatmaps_scale_each_panel_to_the_clip_pairs(tmp_path):
    m = np.array([[1.0, 0.9], [0.5, 1.0]])
    frames = {"max_matrix": m, "mean_matrix": m.T * 0.5, "clip_ids": ["a", "b"], "names": {"long": "describer X"}}
    fig = draw_figures("00_quickstart", tmp_path, lambda ns: frames, figure="clip_similarity")["fig"]
    assert [a.get_title() for a in fig.axes if a.get_title()] == ["maximum cosine (Eq. 3)", "mean cosine"]
    assert fig._suptitle.get_text() == "Clip similarity: descriptions by describer X, sentences by all-MiniLM-L6-v2"
    # each panel's colour scale spans its off-diagonal cells (0.9 and 0.5 in the first), the diagonal marked "self"
    first, second = (a for a in fig.axes if a.images)
    assert first.images[0].get_clim() == (0.5, 0.9) and second.images[0].get_clim() == (0.25, 0.45)
    assert [t.get_text() for t in first.texts] == ["self", "0.90", "0.50", "self"]
    assert [t.get_text() for t in second.get_yticklabels()] == ["", ""]  # the ids once, on the left
