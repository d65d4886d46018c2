"""General plot primitives for the notebooks' figures (matplotlib); each figure is drawn in its notebook.

The notebooks draw every figure with plain matplotlib in their own cells
(marks, colours, labels, legends); this module keeps what any figure needs:
``pyplot`` (matplotlib with the figures' font sizes), ``printed`` (values
rounded as a figure prints them), ``save_figure`` and ``figure_bytes``
(files that are the same bytes on every run), axis limits
(``padded_limits``), label text (``middle_cut``, ``numbered_list``), a
grid of sampled frames (``filmstrips``), and ``place_labels``
(``label_placement``), which labels scatter points so that no two labels
overlap.

The same data gives the same bytes on every machine: a figure drawn from
``printed`` values (rounded to the decimals of its labels, its colours and
axis limits computed from those) moves no pixel when another CPU differs in
the last float bits; ``save_figure`` and ``figure_bytes`` write no date and
no software version into the files (``FILE_METADATA``).

matplotlib is imported inside the functions; outside a kernel it draws with
the non-interactive Agg backend (inside one, the kernel's backend is kept).
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from sova_lib.report.label_placement import place_labels
from sova_lib.storage import write_bytes

__all__ = ["FILE_METADATA", "figure_bytes", "save_figure", "printed", "pyplot", "middle_cut", "numbered_list",
           "padded_limits", "place_labels", "filmstrips"]


def pyplot():
    """matplotlib.pyplot with the figures' font sizes; Agg outside a kernel (no display needed)."""
    import matplotlib

    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = type(None)
    if get_ipython() is None:  # outside a kernel (inside one, its backend stays); a no-op when Agg already
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11,
                         "legend.fontsize": 9, "xtick.labelsize": 10, "ytick.labelsize": 10,
                         "pdf.fonttype": 42})
    return plt


class SavedFiles(list):
    """The paths ``save_figure`` wrote; a notebook cell ending with it prints one line, not a list of paths."""

    def __repr__(self) -> str:
        return "saved " + ", ".join(str(p) for p in self)


#: What ``save_figure`` writes into each file's metadata: nothing that varies with the day or the software version
#: (matplotlib would add its version to both and the date to the PDF; ``None`` leaves an entry out).
FILE_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


def printed(values, digits: int) -> np.ndarray:
    """``values`` (any array-like of numbers) rounded to the ``digits`` decimals a figure prints, as float64.

    A figure drawn from these (bar lengths, cell colours, limits) is the same
    on every machine: two CPUs that disagree in the last bits of a value still
    agree on its rounding, unless it lies within those bits of a rounding
    boundary.
    """
    return np.round(np.asarray(values, dtype=np.float64), digits)


def figure_bytes(fig, fmt: str = "png", *, dpi: int = 150) -> bytes:
    """``fig`` as the bytes of a ``fmt`` file (``png`` or ``pdf``), cropped to its content, without varying metadata."""
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=dpi, bbox_inches="tight", metadata=FILE_METADATA[fmt])
    return buffer.getvalue()


def save_figure(fig, stem, *, dpi: int = 150) -> list[Path]:
    """Write ``fig`` as ``<stem>.png`` (``dpi`` dots per inch) and ``<stem>.pdf``; returns both paths.

    The same figure gives the same bytes on every run and machine (``FILE_METADATA``).
    The figure stays open (a notebook shows it inline at the end of the cell).
    The list prints as one line (``SavedFiles``).
    """
    stem = Path(stem)
    return SavedFiles(write_bytes(stem.with_suffix(f".{fmt}"), figure_bytes(fig, fmt, dpi=dpi)) for fmt in ("png", "pdf"))


# --------------------------------------------------------------------------- text

def middle_cut(label: str, limit: int) -> str:
    """``label`` cut in its middle to ``limit`` characters: both ends of an id are what tell clips apart."""
    if len(label) <= limit:
        return label
    head = (limit - 1) // 2
    return label[:head] + "…" + label[len(label) - (limit - 1 - head):]


def numbered_list(heading: str, items, width: int) -> str:
    """``heading:`` then each item numbered ``#k`` on its own lines, wrapped at ``width`` characters (never cut)."""
    numbered = (textwrap.fill(f"#{k}  {item}", width=width, initial_indent="  ", subsequent_indent="       ")
                for k, item in enumerate(items, start=1))
    return "\n".join([f"{heading}:", *numbered])


# --------------------------------------------------------------------------- drawing

def padded_limits(values, pad_low: float, pad_high: float, floor=None) -> tuple[float, float]:
    """Axis limits around ``values``: their range widened by ``pad_low`` and ``pad_high`` times its span.

    The span counts as at least 1 (values close together still get room);
    the low limit is raised to ``floor`` when given.
    """
    low, high = float(np.min(values)), float(np.max(values))
    span = max(high - low, 1.0)
    low, high = low - pad_low * span, high + pad_high * span
    return (max(low, floor) if floor is not None else low), high


def filmstrips(strips, *, title: str = "", max_frames: int = 8, height: float = 1.25, max_pixels: int = 160):
    """Several filmstrips, one row each: ``strips`` is a list of ``(label, frames, timestamps)``.

    Each row shows at most ``max_frames`` evenly spaced frames, each
    captioned with its time in seconds from the clip start; the row's label
    is written on its left. Frames are shrunk to at most ``max_pixels`` rows
    first (the size they are shown at), which keeps the saved files small.
    A grid of axes, so it returns the figure.
    """
    plt = pyplot()
    from PIL import Image

    cols = max(min(len(f), max_frames) for _, f, _ in strips)
    first = np.asarray(strips[0][1][0])
    aspect = first.shape[1] / first.shape[0]
    fig, axes = plt.subplots(len(strips), cols, squeeze=False,
                             figsize=(cols * height * aspect + 1.6, len(strips) * (height + 0.35) + 0.5))
    for row, (label, frames, times) in zip(axes, strips):
        keep = np.unique(np.rint(np.linspace(0, len(frames) - 1, min(len(frames), max_frames))).astype(int))
        for ax in row[len(keep):]:
            ax.axis("off")
        for ax, k in zip(row, keep):
            ax.set(xticks=[], yticks=[])
            img = Image.fromarray(np.asarray(frames[k]))
            img.thumbnail((10 * max_pixels, max_pixels))
            ax.imshow(np.asarray(img))
            ax.set_xlabel(f"{float(times[k]):.1f} s", fontsize=8, labelpad=2)
        row[0].set_ylabel(label, fontsize=8, rotation=0, ha="right", va="center", labelpad=6)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout(h_pad=0.4, w_pad=0.2)
    return fig
