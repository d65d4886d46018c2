"""Placing text labels next to scatter points so that no two overlap (matplotlib).

``place_labels(ax, xs, ys, texts)`` is greedy: the points with the nearest
neighbours are labelled first; each label tries positions around its point
at growing distances and takes the first that is inside the axes, clear of
every label already placed, of every point and of boxes to avoid (a legend),
and closer to its own point than to any other. Labels that cannot meet the
last rule, or that sit away from their point, get a thin leader line.
Distances are in points (1/72 inch), so the result does not depend on the
figure's dpi.

Why not adjustText: adjustText 1.4 (force-directed: labels pushed apart by
repulsion, pulled back to their points) was tried on Figure 2(b) with its
defaults and with stronger repulsion, larger expansion and 500-3000
iterations. In every setting some labels still overlapped (the two
contrastive image models at 51.3, the general VideoChat-R1 and InternVL3.5
rows), leader lines crossed other labels, and a label ran over the axes'
frame; it also has no rule that a label sits nearer its own point than any
other, which this figure needs (its points are a few points apart). The
greedy search below keeps every label clear and attached, so it stays.
"""
from __future__ import annotations

from functools import partial

import numpy as np

__all__ = ["place_labels"]


def _distance(box, x, y) -> float:
    """Distance in pixels from point (x, y) to a box (0 inside)."""
    dx = max(box.x0 - x, 0.0, x - box.x1)
    dy = max(box.y0 - y, 0.0, y - box.y1)
    return float(np.hypot(dx, dy))


def _text_box(ann, renderer):
    """Display box of an annotation's text alone (its leader line left out)."""
    from matplotlib.text import Text

    ann.update_positions(renderer)
    return Text.get_window_extent(ann, renderer)


def _overlaps(box, boxes, pad=1.0) -> bool:
    return any(box.x0 < b.x1 + pad and box.x1 > b.x0 - pad and box.y0 < b.y1 + pad and box.y1 > b.y0 - pad
               for b in boxes)


_DIRECTIONS = [(1, 0.6), (1, -0.6), (-1, 0.6), (-1, -0.6), (0, 1), (0, -1), (1.3, 0), (-1.3, 0)]
_LEADER = {"arrowstyle": "-", "lw": 0.5, "color": "0.4", "shrinkA": 0, "shrinkB": 3}


def _first_free(ax, renderer, text, xy, own_point, others, taken, frame, margin, *, fontsize, radius):
    """First position for one label: inside ``frame``, clear of ``taken``, nearer ``own_point`` by ``margin``.

    Positions are tried at ``radius`` points from the point along each of
    ``_DIRECTIONS``, then 2x, ... 12x. ``margin`` None drops the nearest-point
    rule (``others`` = the other points, display coordinates). Returns
    ``(annotation, box)`` or None.
    """
    for step in range(1, 13):
        for dx, dy in _DIRECTIONS:
            offset = (dx * radius * step, dy * radius * step)
            ha = "left" if dx > 0 else "right" if dx < 0 else "center"
            va = "bottom" if dy > 0 else "top" if dy < 0 else "center"
            ann = ax.annotate(text, xy, xytext=offset, textcoords="offset points", fontsize=fontsize, ha=ha, va=va,
                              arrowprops=_LEADER if step > 1 or margin is None or margin == 0 else None)
            box = _text_box(ann, renderer)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            own = _distance(box, *own_point)
            clear = margin is None or all(_distance(box, *p) > own + margin for p in others)
            if inside and clear and not _overlaps(box, taken):
                return ann, box
            ann.remove()
    return None


def place_labels(ax, xs, ys, texts, *, fontsize=8, radius=7, marker_size=5, clearance=12, avoid=(),
                 obstacles=None):
    """Annotate points ``(xs[i], ys[i])`` with ``texts[i]`` so that no label overlaps another or a point.

    Greedy, most crowded point first: each label tries positions around its
    point at growing distances (``radius`` points, then 2x, 3x, ... up to
    12x) and takes the first whose box is inside the axes, clear of every
    placed label, every point (a square of ``marker_size`` points) and every
    box in ``avoid`` (display-coordinate boxes, or artists such as a legend,
    whose box is taken once the figure is drawn), and nearer to
    its own point than to any other by ``clearance`` points, so that a
    reader cannot attach it to the wrong point. Where no position meets the
    clearance, the nearest-point rule alone is used, then overlap alone. A
    label placed away from its point, or under a relaxed rule, gets a thin
    leader line. ``obstacles`` = ``(x, y)`` arrays of further points to keep
    clear of, without labels. Returns the annotations in input order.
    """
    from matplotlib.transforms import Bbox

    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    pts = ax.transData.transform(np.column_stack([xs, ys])) if len(xs) else np.zeros((0, 2))
    extra = ax.transData.transform(np.column_stack(obstacles)) if obstacles is not None and len(obstacles[0]) else np.zeros((0, 2))
    px = fig.dpi / 72.0
    half = marker_size * px
    taken = [Bbox([[x - half, y - half], [x + half, y + half]]) for x, y in np.vstack([pts, extra])]
    taken += [box if isinstance(box, Bbox) else box.get_window_extent(renderer) for box in avoid]
    frame = ax.get_window_extent(renderer)
    gaps = np.linalg.norm(pts[:, None] - pts[None], axis=-1) + np.eye(len(pts)) * 1e9
    order = np.argsort(gaps.min(axis=1), kind="stable") if len(pts) > 1 else np.arange(len(pts))
    placed = {}
    for i in order:
        others = np.vstack([np.delete(pts, i, axis=0), extra])
        search = partial(_first_free, ax, renderer, texts[i], (xs[i], ys[i]), pts[i], others, taken, frame,
                         fontsize=fontsize, radius=radius)
        chosen = search(clearance * px) or search(0.0) or search(None)
        if chosen is None:  # nowhere free within reach: first position, with a leader line
            ann = ax.annotate(texts[i], (xs[i], ys[i]), xytext=(radius, radius), textcoords="offset points",
                              fontsize=fontsize, arrowprops=_LEADER)
            chosen = (ann, _text_box(ann, renderer))
        taken.append(chosen[1])
        placed[i] = chosen[0]
    return [placed[i] for i in range(len(pts))]
