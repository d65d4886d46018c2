import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sova_lib.report.label_placement import _distance, place_labels  # noqa: E402
from tests.figure_helpers import boxes as _boxes  # noqa: F401
from tests.figure_helpers import overlap as _overlap


def test_place_labels_no_overlap_inside_axes_nearest_own_point():
    rng = np.random.default_rng(3)
    xs, ys = rng.uniform(0, 10, 15), rng.uniform(0, 10, 15)
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.scatter(xs, ys)
    ax.set_xlim(-1, 11)
    ax.set_ylim(-1, 11)
    texts = [f"label number {k}" for k in range(len(xs))]
    anns = place_labels(ax, xs, ys, texts)
    assert [a.get_text() for a in anns] == texts
    boxes = _boxes(fig, anns)
    frame = ax.get_window_extent()
    pts = ax.transData.transform(np.column_stack([xs, ys]))
    for i, box in enumerate(boxes):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        for j, other in enumerate(boxes):
            assert i == j or not _overlap(box, other), (texts[i], texts[j])
        own = _distance(box, *pts[i])
        assert all(own <= _distance(box, *p) for k, p in enumerate(pts) if k != i), texts[i]


def test_place_labels_keeps_clear_of_obstacles_and_avoid_boxes():
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    legend = ax.text(5.5, 5.5, "LEGEND BOX", fontsize=14)
    fig.canvas.draw()
    avoid = legend.get_window_extent(fig.canvas.get_renderer())
    (ann,) = place_labels(ax, [5.0], [5.0], ["a long label"], avoid=[avoid], obstacles=([6.0], [4.5]))
    (box,) = _boxes(fig, [ann])
    assert not _overlap(box, avoid)
    ox, oy = ax.transData.transform((6.0, 4.5))
    assert _distance(box, ox, oy) > 0


def test_place_labels_takes_an_artist_to_avoid_by_its_drawn_box():
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.scatter([5.0], [5.0])
    legend = ax.legend(handles=[plt.Line2D([], [], label="a legend entry, long")], loc="center", fontsize=14)
    (ann,) = place_labels(ax, [5.0], [5.0], ["a label"], avoid=[legend])
    (box,) = _boxes(fig, [ann])
    assert not _overlap(box, legend.get_window_extent())
