"""The general plot primitives: exact values, ``ax=`` honoured, keyword arguments passed on, the axes returned."""
import matplotlib.pyplot as plt
import numpy as np

from sova_lib.report import plots
from tests.figure_helpers import close_figures  # noqa: F401  (the Agg backend; closes every figure a test made)


def test_save_figure_writes_png_and_pdf(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    png, pdf = plots.save_figure(fig, tmp_path / "sub" / "fig")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"


def test_printed_rounds_as_shown():
    assert plots.printed([0.125000001, 2 / 3], 2).tolist() == [0.13, 0.67]
    assert plots.printed(np.float32(0.1), 1).dtype == np.float64


def test_padded_limits_and_numbered_list():
    assert plots.padded_limits([50.0, 54.0], 0.25, 0.5) == (49.0, 56.0)
    assert plots.padded_limits([3.0, 3.5], 0.1, 0.2) == (2.9, 3.7)  # a span under 1 counts as 1
    assert plots.padded_limits([3.0, 40.0], 0.5, 0.0, floor=0) == (0, 40.0)
    assert plots.numbered_list("rows", ["a b c d", "e"], 10) == "rows:\n  #1  a b\n       c d\n  #2  e"


def test_save_figure_lists_its_two_files_in_one_line(tmp_path):
    fig, _ = plt.subplots()
    paths = plots.save_figure(fig, tmp_path / "h")
    assert repr(paths) == f"saved {tmp_path / 'h.png'}, {tmp_path / 'h.pdf'}" and paths[0].exists()


def test_middle_cut_keeps_both_ends():
    assert plots.middle_cut("abcdefghij", 10) == "abcdefghij"
    assert plots.middle_cut("abcdefghijk", 6) == "ab…ijk"


def test_filmstrips_one_row_per_clip_with_times():
    frames = [np.full((4, 6, 3), k, np.uint8) for k in range(10)]
    fig = plots.filmstrips([("clip-a", frames, np.arange(10) / 2), ("clip-b", frames[:3], np.arange(3) / 2)],
                           max_frames=4)
    visible = [a for a in fig.axes if a.axison]
    assert len(visible) == 4 + 3
    assert visible[0].get_ylabel() == "clip-a" and visible[3].get_xlabel() == "4.5 s"
