"""A retrieval explorer: why a query ranks its gallery the way it does.

``query_view(protocol, items, query)`` is the data (pure, no drawing): the
query's AP under the protocol, its top-k gallery items with their relevance,
and for each item the pair of sentences (one of the query, one of the item)
whose cosine is the item's similarity (the maximum of the paper's Eq. 3).
``worst_queries`` lists the queries of lowest AP. ``show`` is the one call a
notebook makes: with ``interactive=True`` an ipywidgets explorer (choose a
protocol, a cache, a query by id or among the worst ones, k), otherwise the
same view for one query as a static table and figure (what a papermill run or
a static render shows). The first sampled frame of each clip is drawn when its
video is given (``videos``: id -> runner ``Item``).
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sova_lib import metrics
from sova_lib.evaluate import evaluate
from sova_lib.items import embed_descriptions, read_descriptions, read_embeddings
from sova_lib.paper.plots import pyplot
from sova_lib.protocols import Protocol, get_protocol
from sova_lib.sentences import split
from sova_lib.similarity import ItemVectors

__all__ = ["QueryView", "Explorer", "load_cache", "query_view", "show", "static_view", "worst_queries"]


@dataclass
class QueryView:
    """One query's ranking. ``ap`` is in [0, 1]; ``hits`` is a DataFrame, best first.

    ``hits`` columns: ``rank``, ``id``, ``similarity`` (maximum cosine),
    ``relevant``, ``query sentence``, ``item sentence`` (the pair that gave
    the similarity; ``None`` for a cache of vectors without text),
    ``sentence pair`` (their 0-based positions), ``description``.
    """

    protocol: str
    query: object
    query_class: str
    ap: float
    n_relevant: int
    n_gallery: int
    query_description: str | None
    hits: object = field(repr=False)


def _task_of(protocol: Protocol, query):
    ids = protocol.ids().tolist()
    if query not in ids:
        raise ValueError(f"{query!r} is not a clip of protocol {protocol.name!r} (e.g. {ids[:3]})")
    pos = ids.index(query)
    for task in protocol.tasks():
        if pos in task.queries.tolist():
            return task, task.queries.tolist().index(pos), ids
    raise ValueError(f"clip {query!r} is not a query of protocol {protocol.name!r}")


def _sentences(texts, key, count):
    """The sentences of ``texts[key]`` when they are the item's vectors (one each, in order), else ``None``."""
    if texts is None or key not in texts:
        return None
    pieces = split(texts[key])
    return pieces if len(pieces) == count else None


def query_view(protocol: str | Protocol, items: ItemVectors, query, *, texts: dict | None = None, k: int = 5,
               ties: str = "expected") -> QueryView:
    """The ranking of ``query`` under ``protocol`` by the maximum sentence cosine of ``items``.

    ``texts`` (id -> description) gives the sentences; the item's vectors
    must be its ``sentences.split`` sentences in order (what
    ``embed_descriptions`` makes), else the sentence columns are ``None``.
    Every gallery clip must be in ``items`` (``ValueError`` otherwise). The
    AP counts the whole gallery under ``ties`` (``metrics.TIE_RULES``); the
    hits are the ``k`` best, ties in gallery order.
    """
    import pandas as pd

    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    task, row, ids = _task_of(protocol, query)
    where = {i: p for p, i in enumerate(np.asarray(items.ids).tolist())}
    gallery = [ids[g] for g in task.gallery.tolist()]
    missing = [g for g in gallery + [query] if g not in where]
    if missing:
        raise ValueError(f"{len(missing)} clip(s) of the gallery of {query!r} have no vectors (e.g. {missing[:3]})")
    owner = np.asarray(items.owner, dtype=np.int64)
    vectors = np.asarray(items.vectors, dtype=np.float64)
    qv = vectors[owner == where[query]]
    scores, pairs = np.empty(len(gallery)), []
    for n, g in enumerate(gallery):
        sims = qv @ vectors[owner == where[g]].T
        a, b = np.unravel_index(int(np.argmax(sims)), sims.shape)
        scores[n] = sims[a, b]
        pairs.append((int(a), int(b)))
    relevant = task.relevance()[row]
    valid = task.valid()[row]
    ap = float(metrics.average_precision_rows(scores[None], relevant[None], valid[None], ties=ties)[0])
    order = [n for n in np.argsort(-scores, kind="stable") if valid[n]][:k]
    q_sentences = _sentences(texts, query, qv.shape[0])
    rows = []
    for rank, n in enumerate(order, start=1):
        g = gallery[n]
        g_sentences = _sentences(texts, g, int((owner == where[g]).sum()))
        a, b = pairs[n]
        rows.append({"rank": rank, "id": g, "similarity": float(scores[n]), "relevant": bool(relevant[n]),
                     "query sentence": q_sentences[a] if q_sentences else None,
                     "item sentence": g_sentences[b] if g_sentences else None, "sentence pair": (a, b),
                     "description": texts.get(g) if texts else None})
    clip = {c.index: c for c in protocol.clips()}[query]
    return QueryView(protocol=protocol.name, query=query, query_class=str(protocol.query_class(clip)), ap=ap,
                     n_relevant=int((relevant & valid).sum()), n_gallery=int(valid.sum()),
                     query_description=texts.get(query) if texts else None,
                     hits=pd.DataFrame(rows, columns=["rank", "id", "similarity", "relevant", "query sentence",
                                                      "item sentence", "sentence pair", "description"]))


def worst_queries(protocol: str, items: ItemVectors, *, n: int = 20, ties: str = "expected"):
    """The ``n`` queries of lowest AP under ``protocol`` (DataFrame ``id, class, AP`` in percent; ties by id order)."""
    import pandas as pd

    proto = get_protocol(protocol)
    result = evaluate(proto, items, ties=ties)
    clips = {c.index: c for c in proto.clips()}
    frame = pd.DataFrame([{"id": i, "class": proto.query_class(clips[i]), "AP": 100 * v}
                          for i, v in result.per_query.items()])
    return frame.sort_values("AP", kind="stable").head(n).reset_index(drop=True)


def load_cache(source, encoder=None):
    """``(ItemVectors, texts or None)`` of a description cache (folder, JSONL, JSON) or an ``.npz`` of vectors.

    ``source`` may also be such a pair already. Descriptions need ``encoder``.
    """
    if isinstance(source, tuple):
        return source
    path = Path(source)
    if path.suffix == ".npz":
        return read_embeddings(path), None
    if encoder is None:
        raise ValueError(f"{path}: descriptions need a sentence encoder to be explored")
    texts = read_descriptions(path)
    return embed_descriptions(texts, encoder), texts


def _first_frame(item):
    from sova_lib.video.frames import sample_frames

    frames = sample_frames(item.path, rate=1.0, window=item.window, crop=item.crop, reverse=item.reverse)
    return frames.images[0] if len(frames.images) else None


def _mark(text: str | None, sentence: str | None) -> str:
    """``text`` as HTML with ``sentence`` marked (its first occurrence)."""
    if not text:
        return "<i>no text (a cache of vectors)</i>"
    safe = html.escape(text).replace("\n", "<br>")
    if sentence:
        s = html.escape(sentence)
        safe = safe.replace(s, f"<mark>{s}</mark>", 1)
    return safe


def view_html(view: QueryView) -> str:
    """The view as an HTML block: AP, the query's description, then each hit with its matched sentence marked."""
    pair = view.hits["query sentence"].iloc[0] if len(view.hits) else None
    parts = [f"<h4>{html.escape(str(view.query))} ({html.escape(view.query_class)}) on {view.protocol}: "
             f"AP = {100 * view.ap:.1f} ({view.n_relevant} relevant of {view.n_gallery})</h4>",
             f"<p><b>query:</b> {_mark(view.query_description, pair)}</p>", "<table>",
             "<tr><th>rank</th><th>id</th><th>similarity</th><th>relevant</th><th>description (the sentence that "
             "matched the query's marked)</th></tr>"]
    for h in view.hits.itertuples(index=False):
        mark = "&#10003; relevant" if h.relevant else "&#10007; not relevant"
        parts.append(f"<tr><td>{h.rank}</td><td>{html.escape(str(h.id))}</td><td>{h.similarity:.3f}</td>"
                     f"<td>{mark}</td><td>{_mark(h.description, h._5)}<br><small>query sentence: "
                     f"{html.escape(str(h._4))}</small></td></tr>")
    return "\n".join(parts + ["</table>"])


def static_view(view: QueryView, videos: dict | None = None, *, max_chars: int = 90):
    """``(table, figure)`` of one query: the hits as a DataFrame and a figure of their similarities.

    The figure's bars are the top-k similarities, green where relevant; with
    ``videos`` (id -> runner ``Item``) a row of first sampled frames (the
    query, then each hit) is drawn above them.
    """

    plt = pyplot()
    table = view.hits.drop(columns=["description", "sentence pair"]).copy()
    for col in ("query sentence", "item sentence"):
        table[col] = [None if s is None else (s if len(s) <= max_chars else s[:max_chars - 1] + "…")
                      for s in table[col]]
    table["relevant"] = table["relevant"].map({True: "yes", False: "no"})
    table["similarity"] = table["similarity"].round(3)
    shown = [view.query, *view.hits["id"]] if videos else []
    frames = [_first_frame(videos[i]) if i in videos else None for i in shown]
    has_frames = any(f is not None for f in frames)
    rows = 2 if has_frames else 1
    fig = plt.figure(figsize=(max(6.0, 1.6 * len(shown)), 2.0 * rows + 1.2), constrained_layout=True)
    grid = fig.add_gridspec(rows, max(1, len(shown)) if has_frames else 1)
    if has_frames:
        for n, (i, image) in enumerate(zip(shown, frames)):
            ax = fig.add_subplot(grid[0, n])
            ax.axis("off")
            if image is not None:
                ax.imshow(image)
            hit = view.hits.iloc[n - 1] if n else None
            label = "query" if hit is None else f"#{hit['rank']} {'relevant' if hit['relevant'] else 'not relevant'}"
            ax.set_title(f"{label}\n{i}", fontsize=7, color="black" if hit is None or hit["relevant"] else "#b2182b")
    ax = fig.add_subplot(grid[rows - 1, :])
    colours = ["#1a9850" if r else "#b2182b" for r in view.hits["relevant"]]
    ax.barh([f"#{r} {i}" for r, i in zip(view.hits["rank"], view.hits["id"])], view.hits["similarity"],
            color=colours)
    ax.invert_yaxis()
    low = float(view.hits["similarity"].min()) if len(view.hits) else 0.0
    ax.set_xlim(max(-1.0, low - 0.05), 1.0)
    ax.set_xlabel("similarity to the query (maximum sentence cosine); green: relevant, red: not")
    ax.set_title(f"{view.query} on {view.protocol}: AP = {100 * view.ap:.1f}", fontsize=10)
    return table, fig


class Explorer:
    """The interactive explorer (ipywidgets): protocol, cache, query (by id or among the worst), k.

    ``caches``: name -> a cache path or an ``(ItemVectors, texts)`` pair
    (``load_cache``); ``protocols``: the protocol names to offer. The
    current view is in ``self.view``; ``self.widget`` is what a notebook
    displays. Changing any control recomputes the view.
    """

    def __init__(self, caches: dict, protocols, *, encoder=None, videos=None, query=None, k: int = 5,
                 worst: int = 20):
        import ipywidgets as w

        if not caches or not protocols:
            raise ValueError("the explorer needs at least one cache and one protocol")
        self._sources, self._loaded, self.encoder, self.videos = dict(caches), {}, encoder, videos or {}
        self.worst = worst
        self.protocol = w.Dropdown(options=list(protocols), description="protocol")
        self.cache = w.Dropdown(options=list(caches), description="cache")
        self.query = w.Dropdown(description="query")
        self.worst_list = w.Dropdown(description="worst")
        self.k = w.IntSlider(value=k, min=1, max=20, description="top k")
        self.html = w.HTML()
        self.image = w.Image(format="png")
        self.view = None
        self._refresh_queries(query)
        for control in (self.protocol, self.cache):
            control.observe(lambda _: self._refresh_queries(None), names="value")
        self.query.observe(lambda _: self.update(), names="value")
        self.k.observe(lambda _: self.update(), names="value")
        self.worst_list.observe(self._pick_worst, names="value")
        self.widget = w.VBox([w.HBox([self.protocol, self.cache, self.k]), w.HBox([self.query, self.worst_list]),
                              self.html, self.image])
        self.update()

    def _items(self):
        name = self.cache.value
        if name not in self._loaded:
            self._loaded[name] = load_cache(self._sources[name], self.encoder)
        return self._loaded[name]

    def _refresh_queries(self, query):
        items, _ = self._items()
        proto = get_protocol(self.protocol.value)
        have = set(np.asarray(items.ids).tolist())
        ids = proto.ids().tolist()
        queries = [ids[q] for t in proto.tasks() for q in t.queries.tolist() if ids[q] in have]
        worst = worst_queries(proto.name, items, n=self.worst)
        self.worst_list.options = [("", None)] + [(f"{r.id} (AP {r.AP:.1f})", r.id) for r in worst.itertuples()]
        self.query.options = queries
        self.query.value = query if query in queries else queries[0]

    def _pick_worst(self, change):
        if change["new"] is not None:
            self.query.value = change["new"]

    def update(self):
        """Recompute the view of the current query and redraw the text and the figure."""

        items, texts = self._items()
        self.view = query_view(self.protocol.value, items, self.query.value, texts=texts, k=self.k.value)
        self.html.value = view_html(self.view)
        _, fig = static_view(self.view, self.videos)
        import io

        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=80)
        pyplot().close(fig)
        self.image.value = buffer.getvalue()
        return self.view


def show(caches: dict, protocols, *, encoder=None, videos=None, query=None, k: int = 5, interactive: bool = True):
    """Display the explorer (``interactive``) or the static view of ``query`` (table and figure).

    Returns the ``QueryView`` first shown.

    Interactive: an ``Explorer`` (needs a live kernel and a browser to be
    used). Static: the view of ``query`` (default: the first query of the
    first protocol) in the first cache, as a table and a figure, which any
    notebook render shows.
    """
    from IPython.display import HTML, display

    if interactive:
        explorer = Explorer(caches, protocols, encoder=encoder, videos=videos, query=query, k=k)
        display(explorer.widget)
        return explorer.view
    protocol = list(protocols)[0]
    items, texts = load_cache(next(iter(caches.values())), encoder)
    if query is None:
        proto = get_protocol(protocol)
        query = proto.ids().tolist()[int(proto.tasks()[0].queries[0])]
    view = query_view(protocol, items, query, texts=texts, k=k)
    table, fig = static_view(view, videos)
    display(HTML(view_html(view)))
    display(fig)

    pyplot().close(fig)
    return view
