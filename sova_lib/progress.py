"""Progress bars that leave a readable last line wherever they are drawn: a terminal or a notebook.

``progress_bar(**kwargs)`` takes tqdm's keyword arguments and returns a tqdm
bar drawn as tqdm's plain text bar: on stderr in a terminal; in a Jupyter
kernel as one display output whose text is replaced in place (IPython's
``display(..., display_id=True)`` and ``update``), at most twice a second
and once more when the bar closes. A saved notebook, ``nbconvert``, nbviewer
and GitHub then show the bar's last line (``encoding sentences: 100%|...|
32/32 [00:01<00:00, 25.1sentence/s]``), where tqdm's widget bar would leave
the text of its first draw ("0%") and nothing that a viewer without widgets
can draw.

``library_bars_off()`` silences, while a command runs, the bars that
huggingface_hub and transformers draw themselves (downloads, transformers'
"Loading weights"): ``--no-progress`` means no bar at all.
"""
from __future__ import annotations

import contextlib
import sys

__all__ = ["in_kernel", "library_bars_off", "progress_bar"]

#: Width of a bar drawn in a notebook, in characters (a notebook has no terminal to measure).
NOTEBOOK_COLUMNS = 100


def in_kernel() -> bool:
    """Whether this code runs in a Jupyter kernel (an IPython shell with a kernel behind it)."""
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


class _DisplayLine:
    """A file for tqdm in a kernel: each status line tqdm writes becomes the text of one display output."""

    def __init__(self):
        self.handle = None

    def write(self, text: str) -> None:
        line = text.replace("\r", "").strip()
        if not line:
            return
        from IPython.display import display

        if self.handle is None:
            self.handle = display({"text/plain": line}, raw=True, display_id=True)
        else:
            self.handle.update({"text/plain": line}, raw=True)

    def flush(self) -> None:
        pass


def progress_bar(**kwargs):
    """A ``tqdm`` bar (``kwargs`` as ``tqdm.tqdm``'s), drawn as one updated display line inside a kernel."""
    from tqdm import tqdm

    if kwargs.get("disable") or not in_kernel():
        return tqdm(**kwargs)
    kwargs.pop("dynamic_ncols", None)
    return tqdm(**{"mininterval": 0.5, "ncols": NOTEBOOK_COLUMNS, **kwargs, "file": _DisplayLine()})


def _transformers_bars(enabled: bool) -> None:
    """Switch transformers' own bars, when transformers is loaded (it reads huggingface_hub's state when it loads)."""
    if "transformers.utils.logging" in sys.modules:
        from transformers.utils import logging

        (logging.enable_progress_bar if enabled else logging.disable_progress_bar)()


@contextlib.contextmanager
def library_bars_off(off: bool = True):
    """Within: with ``off``, no progress bar of huggingface_hub or transformers (downloads, "Loading weights"),
    however late either is loaded; their earlier state comes back after. With ``off`` false: nothing changes."""
    if not off:
        yield
        return
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    was_off = are_progress_bars_disabled()
    disable_progress_bars()
    _transformers_bars(False)
    try:
        yield
    finally:
        if not was_off:
            enable_progress_bars()
            _transformers_bars(True)
