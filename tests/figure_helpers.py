"""Shared helpers of the figure tests: the Agg backend, text boxes and overlap."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from sova_lib.paper.label_placement import _text_box  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    """Close every figure a test made."""
    yield
    plt.close("all")


def boxes(fig, annotations):
    """Display-space bounding boxes of ``annotations`` once ``fig`` is drawn."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [_text_box(a, renderer) for a in annotations]


def overlap(a, b) -> bool:
    return a.x0 < b.x1 and a.x1 > b.x0 and a.y0 < b.y1 and a.y1 > b.y0
