"""Figures of the SOVABench paper and of the quickstart, drawn with matplotlib.

Every function takes data (DataFrames, arrays, PIL images), returns the
``matplotlib.figure.Figure`` it drew, labels its axes with units, and places
text so that no two labels overlap (``place_labels``). ``save_figure`` writes
a figure as PNG (150 dpi) and PDF.

The same data gives the same bytes on every machine: each function draws its
values as it prints them (``printed``: rounded to the decimals of its labels,
and its colour and axis limits computed from those), so the last float bits
of another CPU move no pixel; ``save_figure`` and ``figure_bytes`` write no
date and no software version into the files (``FILE_METADATA``).

matplotlib is imported inside the functions; outside a kernel it draws with
the non-interactive Agg backend (inside one, the kernel's backend is kept).
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from sova_lib.paper.label_placement import place_labels
from sova_lib.storage import write_bytes

__all__ = ["FILE_METADATA", "figure_bytes", "middle_cut", "printed", "pyplot", "save_figure",
           "place_labels", "filmstrips", "similarity_heatmap", "similarity_heatmaps",
           "padded_limits", "numbered_list", "annotate_cells", "heatmap",
           "stacked_barh", "grouped_bars"]

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


# --------------------------------------------------------------------------- drawing primitives

def _figure_and_axes(ax, **subplots):
    """``(figure, ax)``; with ``ax`` None, a new figure with one axes (``subplots`` go to ``plt.subplots``)."""
    if ax is None:
        return pyplot().subplots(**subplots)
    return ax.figure, ax


def padded_limits(values, pad_low: float, pad_high: float, floor=None) -> tuple[float, float]:
    """Axis limits around ``values``: their range widened by ``pad_low`` and ``pad_high`` times its span.

    The span counts as at least 1 (values close together still get room);
    the low limit is raised to ``floor`` when given.
    """
    low, high = float(np.min(values)), float(np.max(values))
    span = max(high - low, 1.0)
    low, high = low - pad_low * span, high + pad_high * span
    return (max(low, floor) if floor is not None else low), high


def numbered_list(heading: str, items, width: int) -> str:
    """``heading:`` then each item numbered ``#k`` on its own lines, wrapped at ``width`` characters (never cut)."""
    numbered = (textwrap.fill(f"#{k}  {item}", width=width, initial_indent="  ", subsequent_indent="       ")
                for k, item in enumerate(items, start=1))
    return "\n".join([f"{heading}:", *numbered])


def annotate_cells(ax, texts, dark, **kwargs):
    """Write ``texts[i][j]`` at the centre of cell (i, j) of an image: black where ``dark[i, j]``, white elsewhere.

    ``kwargs`` go to ``ax.text`` (font size 7 unless given). Returns ``ax``.
    """
    kwargs = {"ha": "center", "va": "center", "fontsize": 7, **kwargs}
    for (i, j), is_dark in np.ndenumerate(dark):
        ax.text(j, i, texts[i][j], color="black" if is_dark else "white", **kwargs)
    return ax


def heatmap(matrix, *, ax=None, texts=None, dark=None, **kwargs):
    """``matrix`` as an image (``ax.imshow(matrix, **kwargs)``), cell (i, j) written with ``texts[i][j]`` when given.

    The text is black on cells where ``dark`` is True (default: cells at or
    above the middle of the colour scale), white elsewhere
    (``annotate_cells``). Returns the axes (``ax.images[-1]`` is the image,
    for a colour bar).
    """
    _, ax = _figure_and_axes(ax)
    image = ax.imshow(matrix, **kwargs)
    if texts is not None:
        if dark is None:
            low, high = image.get_clim()
            dark = np.ma.getdata(matrix) >= low + 0.5 * (high - low)
        annotate_cells(ax, texts, dark)
    return ax


def stacked_barh(frame, *, ax=None, colors=None, totals: bool = True, **kwargs):
    """Horizontal bars, one per row of ``frame`` (labelled by its index), stacked by its columns in order.

    ``colors`` maps a column to its colour (matplotlib's cycle for the
    others); each column is a legend entry. ``totals`` writes each row's sum
    after its bar (font size 9). ``kwargs`` go to every ``ax.barh``. Returns
    the axes.
    """
    _, ax = _figure_and_axes(ax)
    left = np.zeros(len(frame))
    labels = list(frame.index)
    for col in frame.columns:
        ax.barh(labels, frame[col].to_numpy(), left=left, color=(colors or {}).get(col), label=str(col), **kwargs)
        left += frame[col].to_numpy()
    if totals:
        for y, total in enumerate(left):
            ax.text(total + left.max() * 0.01, y, f"{int(total)}", va="center", fontsize=9)
    return ax


def grouped_bars(frame, *, value: str = "value", category: str = "setting", group: str = "protocol", ax=None,
                 digits: int = 1, **kwargs):
    """Bars of ``frame[value]``: one cluster per ``group``, one bar per ``category`` within it, in order of appearance.

    Bars carry their values (``digits`` decimals) and, when ``frame`` has
    ``ci_low``/``ci_high``, their intervals as error bars; all values are
    drawn as printed (``printed``). Each category is a legend entry; the
    x ticks name the groups. ``kwargs`` go to every ``ax.bar``. Returns the
    axes.
    """
    frame = frame.assign(**{c: printed(frame[c], digits) for c in (value, "ci_low", "ci_high") if c in frame})
    groups = list(dict.fromkeys(frame[group]))
    cats = list(dict.fromkeys(frame[category]))
    width = 0.8 / max(1, len(cats))
    _, ax = _figure_and_axes(ax, figsize=(max(5.0, 1.6 * len(groups) * max(1, len(cats)) / 2 + 2), 4))
    for k, cat in enumerate(cats):
        part = frame[frame[category] == cat].set_index(group).reindex(groups)
        x = np.arange(len(groups)) + (k - (len(cats) - 1) / 2) * width
        err = None
        if "ci_low" in part and part["ci_low"].notna().any():
            err = np.vstack([part[value] - part["ci_low"], part["ci_high"] - part[value]])
        bars = ax.bar(x, part[value], width=width * 0.95, yerr=err, capsize=3, label=str(cat), **kwargs)
        ax.bar_label(bars, fmt=f"%.{digits}f", fontsize=8, padding=6 if err is not None else 2)
    ax.set_xticks(range(len(groups)), groups)
    return ax


# --------------------------------------------------------------------------- quickstart

def filmstrips(strips, *, title: str = "", max_frames: int = 8, height: float = 1.25, max_pixels: int = 160):
    """Several filmstrips, one row each: ``strips`` is a list of ``(label, frames, timestamps)``.

    Each row shows at most ``max_frames`` evenly spaced frames, each
    captioned with its time in seconds from the clip start; the row's label
    is written on its left. Frames are shrunk to at most ``max_pixels`` rows
    first (the size they are shown at), which keeps the saved files small.
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


def middle_cut(label: str, limit: int) -> str:
    """``label`` cut in its middle to ``limit`` characters: both ends of an id are what tell clips apart."""
    if len(label) <= limit:
        return label
    head = (limit - 1) // 2
    return label[:head] + "…" + label[len(label) - (limit - 1 - head):]


def _sentence_key(name: str, sentences, width: int) -> str:
    """``name:`` then each sentence numbered ``#k``, wrapped at ``width`` characters (never cut)."""
    numbered = (textwrap.fill(f"#{k}  {sentence}", width=width, initial_indent="  ", subsequent_indent="       ")
                for k, sentence in enumerate(sentences, start=1))
    return "\n".join([f"{name}:", *numbered])


def _annotate_cells(ax, texts, dark) -> None:
    """Write ``texts[i][j]`` at the centre of cell (i, j) of an image: black where ``dark[i, j]``, white elsewhere."""
    for (i, j), is_dark in np.ndenumerate(dark):
        ax.text(j, i, texts[i][j], ha="center", va="center", fontsize=7, color="black" if is_dark else "white")


def similarity_heatmap(matrix, row_sentences, col_sentences, *, row_name: str = "rows", col_name: str = "columns",
                       title: str = "", value_label: str = "cosine similarity", highlight=None, wrap: int = 110):
    """The cosines between two lists of sentences as a heatmap, each cell annotated with its value (2 decimals).

    Rows and columns are numbered ``#1, #2, ...``; under the heatmap the
    full sentences are listed by number, wrapped at ``wrap`` characters and
    never cut, under the headings ``row_name`` and ``col_name``.
    ``highlight`` = ``(row, column)`` outlines that cell in red (the maximum
    of Eq. 3). Cells are coloured by their printed values, on a scale from
    0 to 1.
    """
    plt = pyplot()
    from matplotlib.patches import Rectangle

    matrix = printed(matrix, 2)
    key = (_sentence_key(f"rows, the sentences of {row_name}", row_sentences, wrap) + "\n\n"
           + _sentence_key(f"columns, the sentences of {col_name}", col_sentences, wrap))
    cell = 0.5
    fig, ax = plt.subplots(figsize=(cell * matrix.shape[1] + 2.2, cell * matrix.shape[0] + 0.8))
    im = ax.imshow(matrix, cmap="viridis", vmin=0.0, vmax=1.0, aspect="equal")
    ax.set_xticks(range(matrix.shape[1]), [f"#{k + 1}" for k in range(matrix.shape[1])], fontsize=8)
    ax.set_yticks(range(matrix.shape[0]), [f"#{k + 1}" for k in range(matrix.shape[0])], fontsize=8)
    ax.set_xlabel(f"columns: {col_name}", fontsize=9)
    ax.set_ylabel(f"rows: {row_name}", fontsize=9)
    _annotate_cells(ax, [[f"{v:.2f}" for v in row] for row in matrix], ~(matrix < 0.6))
    if highlight is not None:
        i, j = highlight
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", lw=2.5))
    fig.colorbar(im, ax=ax, label=value_label, fraction=0.046, pad=0.03)
    if title:
        ax.set_title(textwrap.fill(title, 70), fontsize=10)
    # the sentences, whole, under the x axis's label (a tight save keeps all of it)
    ax.annotate(key, xy=(0, 0), xycoords="axes fraction", xytext=(-40, -48), textcoords="offset points",
                va="top", ha="left", fontsize=8)
    return fig


def similarity_heatmaps(panels, labels, *, value_label="similarity", max_label: int = 40, title: str = ""):
    """Several square similarity matrices over the same ``labels``, side by side: ``panels`` = ``[(matrix, title)]``.

    Each panel has its own colour scale, which spans the panel's
    off-diagonal values (the clip pairs; the diagonal, each clip with
    itself, is drawn grey and marked "self"), so that values close together
    (0.89 to 1.00, say) still get distinct colours. ``title`` goes above all
    panels (name the describer and encoder there).
    """
    plt = pyplot()
    n = len(labels)
    names = [middle_cut(str(label), max_label) for label in labels]
    side = 0.6 * n + 0.075 * max(len(s) for s in names) + 0.8
    fig, axes = plt.subplots(1, len(panels), figsize=(side * len(panels) + 1.6 * len(panels), side + 0.8),
                             squeeze=False)
    self_cells = np.eye(n, dtype=bool)
    cmap = plt.get_cmap("viridis").with_extremes(bad="0.85")
    for k, (ax, (matrix, panel_title)) in enumerate(zip(axes[0], panels)):
        matrix = printed(matrix, 2)
        off = matrix[~self_cells] if n > 1 else matrix.ravel()
        low, high = float(off.min()), float(off.max())
        if high - low < 0.005:
            low, high = low - 0.005, high + 0.005
        im = ax.imshow(np.ma.masked_array(matrix, self_cells), cmap=cmap, vmin=low, vmax=high)
        ax.set_xticks(range(n), names, rotation=50, ha="right", rotation_mode="anchor", fontsize=8)
        ax.set_yticks(range(n), names if k == 0 else [""] * n, fontsize=8)
        texts = [["self" if i == j else f"{v:.2f}" for j, v in enumerate(row)] for i, row in enumerate(matrix)]
        _annotate_cells(ax, texts, self_cells | (matrix >= low + 0.6 * (high - low)))
        ax.set_title(panel_title, fontsize=11)
        fig.colorbar(im, ax=ax, label=f"{value_label}\nscale: the clip pairs' range, not from 0", fraction=0.046, pad=0.03)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig
