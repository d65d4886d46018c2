"""The retrieval explorer: its data on a hand-built cache with known answers, the widget without a browser."""
import numpy as np
import pytest

from sova_lib.benchmarks.excerpts import DIRECTION_PROTOCOL, example_clips
from sova_lib.report import explore
from sova_lib.similarity import ItemVectors

CLIPS = example_clips()
FWD = [c.index for c in CLIPS if c.direction == "forward"]
REV = [c.index for c in CLIPS if c.direction == "reversed"]
QUERY = FWD[0]

# id -> [(sentence, vector)]: the query has two sentences, every other clip one. Cosines with the query's
# sentences (e1, e3), worked by hand: FWD[1] 1.0 (pair 0,0); REV[1] 0.8 (pair 0,0); FWD[2] 0.6 (pair 1,0);
# REV[0] 0 and REV[2] 0 (max over -1 and 0). Ranking: FWD[1] (relevant), REV[1], FWD[2] (relevant), then the two
# tied irrelevant ones, so AP = (1/1 + 2/3) / 2 = 5/6.
SENTENCES = {
    QUERY: [("A man walks to the right.", [1, 0, 0]), ("A dog sits on the lawn.", [0, 0, 1])],
    FWD[1]: [("A man walks to the right.", [1, 0, 0])],
    FWD[2]: [("A bicycle passes by quickly.", [0, 0.8, 0.6])],
    REV[0]: [("Nothing moves.", [0, 1, 0])],
    REV[1]: [("A man walks to the left.", [0.8, 0.6, 0])],
    REV[2]: [("A woman runs away.", [-1, 0, 0])],
}


def _cache():
    ids = [c.index for c in CLIPS]
    owner, vectors = [], []
    for n, i in enumerate(ids):
        for _, v in SENTENCES[i]:
            owner.append(n)
            vectors.append(v)
    texts = {i: " ".join(s for s, _ in SENTENCES[i]) for i in ids}
    return ItemVectors(np.array(ids), np.array(owner), np.array(vectors, dtype=np.float32)), texts


def test_query_view_known_answers():
    items, texts = _cache()
    view = explore.query_view(DIRECTION_PROTOCOL, items, QUERY, texts=texts, k=3)
    assert view.ap == pytest.approx(5 / 6) and view.n_relevant == 2 and view.n_gallery == 5
    assert view.query_class == "forward"
    hits = view.hits
    assert hits["id"].tolist() == [FWD[1], REV[1], FWD[2]]
    assert hits["relevant"].tolist() == [True, False, True]
    assert hits["similarity"].to_numpy() == pytest.approx([1.0, 0.8, 0.6], abs=1e-6)
    assert hits["sentence pair"].tolist() == [(0, 0), (0, 0), (1, 0)]
    assert hits["query sentence"].tolist() == ["A man walks to the right.", "A man walks to the right.",
                                               "A dog sits on the lawn."]
    assert hits["item sentence"].tolist() == ["A man walks to the right.", "A man walks to the left.",
                                              "A bicycle passes by quickly."]
    page = explore.view_html(view)
    assert "AP = 83.3" in page and "<mark>A man walks to the left.</mark>" in page
    # the same AP as the evaluation of the whole protocol gives for this query
    worst = explore.worst_queries(DIRECTION_PROTOCOL, items, n=6)
    assert worst.loc[worst["id"] == QUERY, "AP"].item() == pytest.approx(500 / 6)
    assert worst["AP"].is_monotonic_increasing


def test_vectors_without_text_and_bad_input():
    items, _ = _cache()
    view = explore.query_view(DIRECTION_PROTOCOL, items, QUERY, k=2)
    assert view.hits["item sentence"].isna().all() and view.hits["sentence pair"].tolist() == [(0, 0), (0, 0)]
    with pytest.raises(ValueError, match="not a clip of protocol"):
        explore.query_view(DIRECTION_PROTOCOL, items, "no-such-clip")
    partial = ItemVectors(items.ids[:5], items.owner[items.owner < 5], items.vectors[items.owner < 5])
    with pytest.raises(ValueError, match="have no vectors"):
        explore.query_view(DIRECTION_PROTOCOL, partial, QUERY)


def test_widget_builds_and_updates_without_a_browser():
    items, texts = _cache()
    ex = explore.Explorer({"hand-built": (items, texts)}, [DIRECTION_PROTOCOL], query=QUERY, k=3)
    assert ex.view.query == QUERY and "AP = 83.3" in ex.html.value
    assert ex.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    first = ex.html.value
    ex.query.value = REV[1]
    assert ex.view.query == REV[1] and ex.html.value != first
    ex.k.value = 5
    assert len(ex.view.hits) == 5
    worst_id = ex.worst_list.options[1][1]
    ex.worst_list.value = worst_id
    assert ex.query.value == worst_id == ex.view.query


def test_static_view_with_frames(tmp_path):
    items, texts = _cache()
    view = explore.query_view(DIRECTION_PROTOCOL, items, QUERY, texts=texts, k=2)
    videos = {clip.index: clip.item() for clip in example_clips()}
    table, fig = explore.static_view(view, videos)
    assert table["relevant"].tolist() == ["yes", "no"]
    assert len(fig.axes) == 4  # the query's and two hits' first frames, then the similarity bars
    assert fig.axes[0].images and fig.axes[1].get_title().startswith("#1 relevant")
    shown = explore.show({"hand-built": (items, texts)}, [DIRECTION_PROTOCOL], query=QUERY, k=2, interactive=False)
    assert shown.ap == pytest.approx(5 / 6)


def test_view_bundle_holds_the_widget_and_its_static_forms():
    """One output: JupyterLab takes the widget, any other viewer the HTML (table, AP, figure) or the PNG."""
    import base64

    items, texts = _cache()
    ex = explore.Explorer({"hand-built": (items, texts)}, [DIRECTION_PROTOCOL], query=QUERY, k=3)
    bundle = ex.bundle()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    page = bundle["text/html"]
    assert "AP = 83.3" in page and all(f"<td>{i}</td>" in page for i in [FWD[1], REV[1], FWD[2]])
    png = base64.b64decode(bundle["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == ex.image.value
    assert f'src="data:image/png;base64,{bundle["image/png"]}"' in page
    assert bundle["text/plain"] == (f"{QUERY} on {DIRECTION_PROTOCOL}: AP = 83.3; top 3: #1 {FWD[1]} (relevant), "
                                    f"#2 {REV[1]} (not relevant), #3 {FWD[2]} (relevant)")
    # a change of query replaces the displayed bundle with the new view's
    shown = []
    ex.handle = type("Handle", (), {"update": lambda self, data, raw: shown.append((data, raw))})()
    ex.query.value = REV[1]
    (data, raw), = shown
    assert raw and f"{REV[1]} on {DIRECTION_PROTOCOL}" in data["text/plain"] and "widget-view+json" in str(list(data))
    static = explore.view_bundle(ex.view)
    assert "application/vnd.jupyter.widget-view+json" not in static and static["text/plain"] == data["text/plain"]


def test_static_view_keeps_sentences_whole_and_bars_from_zero():
    items, texts = _cache()
    long = "A man walks to the right, past the fountain and the bench, then along the hedge until he reaches the gate."
    texts = {**texts, QUERY: texts[QUERY].replace("A man walks to the right.", long)}
    view = explore.query_view(DIRECTION_PROTOCOL, items, QUERY, texts={**texts, FWD[1]: long}, k=3)
    table, fig = explore.static_view(view)
    assert table["query sentence"].tolist()[0] == long and table["item sentence"].tolist()[0] == long
    (ax,) = fig.axes
    assert ax.get_xlim() == (0.0, 1.15) and "axis from 0" in ax.get_xlabel()
    assert [t.get_text() for t in ax.texts] == ["1.000", "0.800", "0.600"]


def test_show_outside_jupyter_prints_a_short_text_view(capsys):
    """A plain Python script (no kernel): the query, its AP and its neighbours as text, never the display bundle."""
    items, texts = _cache()
    shown = explore.show({"hand-built": (items, texts)}, [DIRECTION_PROTOCOL], query=QUERY, k=3)  # interactive
    printed = capsys.readouterr().out
    assert shown.ap == pytest.approx(5 / 6)
    assert printed.splitlines() == [
        f"{QUERY} (forward) on {DIRECTION_PROTOCOL}: AP = 83.3 (2 relevant of 5)",
        f'  #1 {FWD[1]}  relevant  similarity 1.000  "A man walks to the right."',
        f'  #2 {REV[1]}  not relevant  similarity 0.800  "A man walks to the left."',
        f'  #3 {FWD[2]}  relevant  similarity 0.600  "A bicycle passes by quickly."',
    ]
    assert printed == explore.view_text(shown) + "\n" and "image/png" not in printed and len(printed) < 1000
