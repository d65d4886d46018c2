"""Progress bars: tqdm's text bar in a terminal, one display line replaced in place inside a kernel."""
import pytest

from sova_lib import progress


def test_outside_a_kernel_the_bar_is_tqdms_own(capsys):
    assert not progress.in_kernel()
    with progress.progress_bar(total=3, desc="work", unit="item", mininterval=0) as bar:
        bar.update(3)
    err = capsys.readouterr().err
    assert "work: 100%" in err and "3/3" in err


def test_inside_a_kernel_the_last_display_is_the_final_line(monkeypatch):
    """What a saved notebook keeps: one output, its text the bar's last state, not its first."""
    import IPython.display

    shown = []

    class Handle:
        def update(self, data, raw):
            shown.append(("update", data, raw))

    def display(data, raw, display_id):
        shown.append(("display", data, raw))
        assert display_id is True
        return Handle()

    monkeypatch.setattr(progress, "in_kernel", lambda: True)
    monkeypatch.setattr(IPython.display, "display", display)
    with progress.progress_bar(total=5, desc="encoding sentences", unit="sentence", mininterval=0,
                               dynamic_ncols=True) as bar:
        for _ in range(5):
            bar.update(1)
    assert [kind for kind, _, _ in shown[:2]] == ["display", "update"] and all(raw for _, _, raw in shown)
    assert sum(kind == "display" for kind, _, _ in shown) == 1
    first, last = shown[0][1]["text/plain"], shown[-1][1]["text/plain"]
    assert first.startswith("encoding sentences:   0%") and "0/5" in first
    assert last.startswith("encoding sentences: 100%|") and "5/5" in last and "\r" not in last
    assert len(last) <= progress.NOTEBOOK_COLUMNS


def test_a_disabled_bar_draws_nothing(monkeypatch):
    import IPython.display

    monkeypatch.setattr(progress, "in_kernel", lambda: True)
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: pytest.fail("drawn"))
    with progress.progress_bar(total=2, disable=True) as bar:
        bar.update(2)


def test_library_bars_off_silences_transformers_and_the_hub_then_restores_them(capsys):
    """transformers' own bars (its "Loading weights") and huggingface_hub's are off inside, as they were after."""
    from huggingface_hub.utils import are_progress_bars_disabled
    from transformers.utils import logging

    assert logging.is_progress_bar_enabled() and not are_progress_bars_disabled()
    with progress.library_bars_off():
        assert not logging.is_progress_bar_enabled() and are_progress_bars_disabled()
        assert list(logging.tqdm(range(3), desc="Loading weights")) == [0, 1, 2]
    assert "Loading weights" not in capsys.readouterr().err
    assert logging.is_progress_bar_enabled() and not are_progress_bars_disabled()
    with progress.library_bars_off(False):
        list(logging.tqdm(range(3), desc="Loading weights", mininterval=0))
    assert "Loading weights: 100%" in capsys.readouterr().err
