"""A retrieval explorer: why a query ranks its gallery the way it does.

The data of a view is ``sova_lib.report.explore_data``'s (``query_view``,
``worst_queries``, ``muvr_view``, ``muvr_worst_queries``, the cache
loaders), importable from here too, so that a notebook needs this one
module. This module draws it: ``view_html`` (the hits with their matched
sentences marked), ``static_view`` (a table and a figure), ``view_bundle``
(both as one display output), ``view_text`` (a few lines for a terminal),
and ``show``, the one call a notebook makes.

``show`` displays one output, a bundle of several forms of the same view:
with ``interactive=True`` the ipywidgets ``Explorer`` (choose a protocol, a
cache, a query by id or among the worst ones, k), which JupyterLab shows,
and beside it, in the same output, the view as HTML (the table with its
figure) and as PNG, which every viewer without the live widget shows
(GitHub, nbviewer, ``nbconvert``, a plain papermill run). The static forms
follow the widget: each change of a control replaces them with the new view,
so a saved notebook holds the view last shown. ``interactive=False`` shows
the static forms alone. Outside a Jupyter kernel (a plain Python script)
``show`` prints ``view_text`` instead. The first sampled frame of each clip is drawn when
its video is given (``videos``: id -> runner ``Item``). The explorer offers
each partition of a MUVR data root as a protocol when ``muvr_root`` is given.
"""
from __future__ import annotations

import base64
import functools
import html

import numpy as np

from sova_lib.benchmarks.muvr.retrieval import rows_of
from sova_lib.progress import in_kernel
from sova_lib.protocols import get_protocol
from sova_lib.report.explore_data import (
    QueryView,
    load_cache,
    load_muvr_cache,
    muvr_caches_of,
    muvr_partitions,
    muvr_view,
    muvr_worst_queries,
    query_view,
    worst_queries,
)
from sova_lib.report.plots import figure_bytes, middle_cut, printed, pyplot

__all__ = ["MUVR_PREFIX", "QueryView", "Explorer", "load_cache", "load_muvr_cache", "muvr_caches_of", "muvr_partitions",
           "muvr_view", "muvr_worst_queries", "query_view", "show", "static_view", "view_bundle", "view_html",
           "view_png", "view_text", "worst_queries"]

#: Prefix of the explorer's protocol value for a MUVR partition (``"muvr/news"``).
MUVR_PREFIX = "muvr/"


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


def _ap_text(view: QueryView) -> str:
    return "AP undefined (no relevant item)" if np.isnan(view.ap) else f"AP = {100 * view.ap:.1f}"


def view_text(view: QueryView) -> str:
    """The view as a few lines of plain text: the query, its AP, then each hit (rank, id, relevant or not,
    similarity, and the sentence of the hit that matched the query)."""
    lines = [f"{view.query} ({view.query_class}) on {view.protocol}: {_ap_text(view)} "
             f"({view.n_relevant} relevant of {view.n_gallery})"]
    for h in view.hits.to_dict("records"):
        matched = f'  "{h["item sentence"]}"' if h.get("item sentence") else ""
        lines.append(f"  #{h['rank']} {h['id']}  {'relevant' if h['relevant'] else 'not relevant'}  "
                     f"similarity {h['similarity']:.3f}{matched}")
    return "\n".join(lines)


def view_html(view: QueryView) -> str:
    """The view as an HTML block: AP, the query's description, then each hit with its matched sentence marked."""
    pair = view.hits["query sentence"].iloc[0] if len(view.hits) else None
    parts = [f"<h4>{html.escape(str(view.query))} ({html.escape(view.query_class)}) on {html.escape(view.protocol)}: "
             f"{_ap_text(view)} ({view.n_relevant} relevant of {view.n_gallery})</h4>",
             f"<p><b>query:</b> {_mark(view.query_description, pair)}</p>",
             *[f"<p><i>note: {html.escape(n)}</i></p>" for n in view.notes], "<table>",
             "<tr><th>rank</th><th>id</th><th>similarity</th><th>relevant</th><th>description (the sentence that "
             "matched the query's marked)</th></tr>"]
    for h in view.hits.itertuples(index=False):
        mark = "&#10003; relevant" if h.relevant else "&#10007; not relevant"
        parts.append(f"<tr><td>{h.rank}</td><td>{html.escape(str(h.id))}</td><td>{h.similarity:.3f}</td>"
                     f"<td>{mark}</td><td>{_mark(h.description, h._5)}<br><small>query sentence: "
                     f"{html.escape(str(h._4))}</small></td></tr>")
    return "\n".join(parts + ["</table>"])


def static_view(view: QueryView, videos: dict | None = None):
    """``(table, figure)`` of one query: the hits as a DataFrame and a figure of their similarities.

    The table keeps every sentence whole. The figure's bars are the top-k
    similarities as printed (3 decimals) on an axis from 0 (from -1 when a
    similarity is negative), green where relevant; with ``videos`` (id ->
    runner ``Item``) a row of first sampled frames (the query, then each
    hit) is drawn above them.
    """

    plt = pyplot()
    table = view.hits.drop(columns=["description", "sentence pair"]).copy()
    table["relevant"] = table["relevant"].map({True: "yes", False: "no"})
    for col in ("similarity", "text score", "video score"):
        if col in table:
            table[col] = printed(table[col], 3)
    shown = [view.query, *view.hits["id"]] if videos else []
    frames = [_first_frame(videos[i]) if i in videos else None for i in shown]
    has_frames = any(f is not None for f in frames)
    n_hits = len(view.hits)
    fig = plt.figure(figsize=(max(7.0, 1.7 * len(shown)), (2.0 if has_frames else 0) + 1.4 + 0.35 * n_hits),
                     constrained_layout=True)
    grid = fig.add_gridspec(2 if has_frames else 1, len(shown) if has_frames else 1,
                            height_ratios=[2.0, 1.0 + 0.35 * n_hits] if has_frames else None)
    if has_frames:
        for n, (i, image) in enumerate(zip(shown, frames)):
            ax = fig.add_subplot(grid[0, n])
            ax.axis("off")
            if image is not None:
                ax.imshow(image)
            hit = view.hits.iloc[n - 1] if n else None
            label = "query" if hit is None else f"#{hit['rank']} {'relevant' if hit['relevant'] else 'not relevant'}"
            ax.set_title(f"{label}\n{middle_cut(str(i), 17)}", fontsize=7,
                         color="black" if hit is None or hit["relevant"] else "#b2182b")
    ax = fig.add_subplot(grid[-1, :])  # the bars: below the frames, if any
    _similarity_bars(ax, view, printed(view.hits["similarity"], 3))
    fig.suptitle(f"{view.query} ({view.query_class}) on {view.protocol}: {_ap_text(view)}, "
                 f"{view.n_relevant} relevant of {view.n_gallery}", fontsize=9)
    return table, fig


def _similarity_bars(ax, view: QueryView, values: np.ndarray) -> None:
    """The hits' similarities as horizontal bars on an axis from 0 (or -1), each labelled with its value."""
    colours = ["#1a9850" if r else "#b2182b" for r in view.hits["relevant"]]
    bars = ax.barh([f"#{r} {middle_cut(str(i), 36)}" for r, i in zip(view.hits["rank"], view.hits["id"])], values,
                   color=colours)
    ax.bar_label(bars, fmt="%.3f", padding=3, fontsize=8)
    ax.invert_yaxis()
    negative = len(values) and float(np.min(values)) < 0
    ax.set_xlim(-1.0 if negative else 0.0, 1.15)
    ax.tick_params(axis="y", labelsize=8)
    what = "MUVR score: S_t, S_v or their mean" if "text score" in view.hits else "maximum sentence cosine"
    ax.set_xlabel(f"similarity to the query ({what}); axis from {-1 if negative else 0}\n"
                  "green: relevant, red: not relevant", fontsize=8)


def view_png(view: QueryView, videos: dict | None = None, *, dpi: int = 80) -> bytes:
    """The figure of ``static_view`` as PNG bytes (the same bytes on every machine)."""
    _, fig = static_view(view, videos)
    try:
        return figure_bytes(fig, "png", dpi=dpi)
    finally:
        pyplot().close(fig)


def view_bundle(view: QueryView, videos: dict | None = None, *, png: bytes | None = None) -> dict:
    """The view as one display bundle: ``text/plain`` (one line), ``text/html`` (the table of ``view_html`` and
    the figure of ``static_view`` as an embedded PNG) and ``image/png`` (that figure; ``png`` if already drawn).

    ``Explorer.bundle`` adds its widget's view to it.
    """
    png = base64.b64encode(view_png(view, videos) if png is None else png).decode("ascii")
    top = ", ".join(f"#{h.rank} {h.id} ({'relevant' if h.relevant else 'not relevant'})"
                    for h in view.hits.itertuples(index=False))
    return {"text/plain": f"{view.query} on {view.protocol}: {_ap_text(view)}; top {len(view.hits)}: {top}",
            "text/html": view_html(view) + f'\n<p><img alt="similarity of each hit to the query" '
                                           f'src="data:image/png;base64,{png}"></p>',
            "image/png": png}


class _Sources:
    """What the explorer can show: protocol value -> (label, kind, protocol), kind -> cache name -> source.

    Kinds: ``"clips"`` (a registered protocol or a ``Protocol``, with
    ``caches``) and ``"muvr"`` (a partition of ``muvr_root``, with
    ``muvr_caches``, by default the release's feature folders). Loaded caches
    and MUVR vectors are kept, so switching back costs nothing.
    """

    def __init__(self, caches, protocols, *, encoder=None, muvr_root=None, muvr_caches=None,
                 muvr_query="text+video"):
        self.encoder, self.muvr_query = encoder, muvr_query
        clips = [get_protocol(p) if isinstance(p, str) else p for p in protocols or ()]
        self.protocols = {p.name: (p.name, "clips", p) for p in clips}
        if muvr_root is not None:
            for name, part in muvr_partitions(muvr_root).items():
                self.protocols[MUVR_PREFIX + name] = (f"MUVR {name} (Base, {muvr_query})", "muvr", part)
            muvr_caches = muvr_caches_of(muvr_root) if muvr_caches is None else muvr_caches
            if not muvr_caches:
                raise ValueError(f"{muvr_root}: no released features under features/VLMs_1_15/; pass muvr_caches "
                                 "(feature folders, .npz files or description caches of windows)")
        self.caches = {"clips": dict(caches or {}), "muvr": dict(muvr_caches or {})}
        if not self.protocols:
            raise ValueError("the explorer needs at least one protocol (or a MUVR data root)")
        if clips and not caches:  # (a MUVR partition always has its caches: checked above)
            raise ValueError(f"protocol {clips[0].name!r} has no cache to explore: pass caches")
        # loaded caches and MUVR vectors are kept, so switching back costs nothing
        self._cache, self._muvr = functools.cache(self._cache), functools.cache(self._muvr)

    def cache_names(self, protocol):
        return list(self.caches[self.protocols[protocol][1]])

    def _cache(self, kind, name):
        """What ``load_cache`` (kind ``clips``) or ``load_muvr_cache`` (``muvr``) gives of cache ``name``."""
        source = self.caches[kind][name]
        return (load_cache(source, self.encoder) if kind == "clips" else
                load_muvr_cache(source, self.encoder, query=self.muvr_query))

    def _muvr(self, protocol, name):
        """The ``(gallery, QueryVectors)`` of MUVR cache ``name`` on the partition of ``protocol``."""
        vectors, _ = self._cache("muvr", name)
        return vectors(self.protocols[protocol][2])

    def queries(self, protocol, name):
        """The query ids of ``protocol`` that cache ``name`` can rank."""
        _, kind, proto = self.protocols[protocol]
        if kind == "muvr":
            return [r[0] for r in rows_of(proto, "base")]
        items, _ = self._cache(kind, name)
        have = set(np.asarray(items.ids).tolist())
        ids = proto.ids().tolist()
        return list(dict.fromkeys(ids[q] for t in proto.tasks() for q in t.queries.tolist() if ids[q] in have))

    def worst(self, protocol, name, n):
        _, kind, proto = self.protocols[protocol]
        if kind == "muvr":
            return muvr_worst_queries(proto, self._muvr(protocol, name), query=self.muvr_query, n=n)
        return worst_queries(proto, self._cache(kind, name)[0], n=n)

    def view(self, protocol, name, query, k):
        _, kind, proto = self.protocols[protocol]
        if kind == "muvr":
            return muvr_view(proto, self._muvr(protocol, name), query, query=self.muvr_query,
                             texts=self._cache("muvr", name)[1], k=k)
        items, texts = self._cache(kind, name)
        return query_view(proto, items, query, texts=texts, k=k)


class Explorer:
    """The interactive explorer (ipywidgets): protocol, cache, query (by id or among the worst), k.

    ``caches``: name -> a cache path or an ``(ItemVectors, texts)`` pair
    (``load_cache``); ``protocols``: protocol names or ``Protocol`` objects.
    With ``muvr_root`` (a MUVR data root, the release's layout) each of its
    partitions is offered too, explored with ``muvr_caches`` (name -> a
    source of ``load_muvr_cache``; default: the release's feature folders
    under the root) and the query mode ``muvr_query``. The cache list
    follows the protocol's kind. The current view is in ``self.view``;
    ``self.widget`` is what a notebook displays. Changing any control
    recomputes the view.
    """

    def __init__(self, caches: dict, protocols, *, encoder=None, videos=None, query=None, k: int = 5,
                 worst: int = 20, muvr_root=None, muvr_caches=None, muvr_query: str = "text+video"):
        import ipywidgets as w

        self.sources = _Sources(caches, protocols, encoder=encoder, muvr_root=muvr_root, muvr_caches=muvr_caches,
                                muvr_query=muvr_query)
        self.videos, self.worst = videos or {}, worst
        self._quiet = False  # True while the explorer sets its own controls: their observers then do nothing
        self.protocol = w.Dropdown(options=[(label, value) for value, (label, _, _) in self.sources.protocols.items()],
                                   description="protocol")
        self.cache = w.Dropdown(options=self.sources.cache_names(self.protocol.value), description="cache")
        self.query = w.Dropdown(description="query")
        self.worst_list = w.Dropdown(description="worst")
        self.k = w.IntSlider(value=k, min=1, max=20, description="top k", continuous_update=False)
        self.html = w.HTML()
        self.image = w.Image(format="png")
        self.view, self.handle = None, None
        self._fill_queries(query)
        for control in (self.protocol, self.cache, self.query, self.k):
            control.observe(self._changed, names="value")
        self.worst_list.observe(self._pick_worst, names="value")
        self.widget = w.VBox([w.HBox([self.protocol, self.cache, self.k]), w.HBox([self.query, self.worst_list]),
                              self.html, self.image])
        self.update()

    def _changed(self, change):
        """A control changed: follow it (a protocol's caches, a cache's queries), then recompute the view once."""
        if self._quiet:
            return
        self._quiet = True
        try:
            names = self.sources.cache_names(self.protocol.value)
            if change.owner is self.protocol and list(self.cache.options) != names:
                self.cache.options = names
                self.cache.value = names[0]
            if change.owner in (self.protocol, self.cache):
                self._fill_queries(None)
        finally:
            self._quiet = False
        self.update()

    def _fill_queries(self, query):
        """The query and worst lists of the current protocol and cache; ``query`` is chosen when listed."""
        queries = self.sources.queries(self.protocol.value, self.cache.value)
        if not queries:
            raise ValueError(f"cache {self.cache.value!r} covers no query of {self.protocol.value!r}")
        worst = self.sources.worst(self.protocol.value, self.cache.value, self.worst)
        self.worst_list.options = [("", None)] + [(f"{r.id} (AP {r.AP:.1f})", r.id) for r in worst.itertuples()]
        self.query.options = queries
        self.query.value = query if query in queries else queries[0]

    def _pick_worst(self, change):
        if change["new"] is not None:
            self.query.value = change["new"]

    def update(self):
        """Recompute the view of the current query; redraw the text, the figure and the displayed bundle."""
        self.view = self.sources.view(self.protocol.value, self.cache.value, self.query.value, self.k.value)
        self.html.value = view_html(self.view)
        self.image.value = view_png(self.view, self.videos)
        if self.handle is not None:
            self.handle.update(self.bundle(), raw=True)
        return self.view

    def bundle(self) -> dict:
        """The current view's static forms (``view_bundle``) and the widget's view as one display bundle.

        JupyterLab shows the live widget (``application/vnd.jupyter.widget-view+json``), every viewer without it
        one of the static forms.
        """
        widget = "application/vnd.jupyter.widget-view+json"
        return {**view_bundle(self.view, self.videos, png=self.image.value),
                widget: self.widget._repr_mimebundle_()[widget]}

    def display(self):
        """Display the bundle (once); later views replace it in place, so a saved notebook holds the last one."""
        from IPython.display import display

        self.handle = display(self.bundle(), raw=True, display_id=True)
        return self.handle


def show(caches: dict, protocols, *, encoder=None, videos=None, query=None, k: int = 5, interactive: bool = True,
         muvr_root=None, muvr_caches=None, muvr_query: str = "text+video"):
    """Display the view of ``query`` as one output (``view_bundle``); returns the ``QueryView`` first shown.

    Interactive: an ``Explorer`` (used with a live kernel and a browser)
    with the static HTML and PNG of its current view in the same output.
    Static: those two alone. Outside a Jupyter kernel (a script, a
    terminal) nothing is displayed: ``view_text`` of the view is printed,
    never the bundle's embedded figure. The view is that of ``query``
    (default: the first query) of the first protocol (the first MUVR
    partition when only ``muvr_root`` is given) in its first cache.
    """
    from IPython.display import display

    kernel = in_kernel()
    if interactive and kernel:
        explorer = Explorer(caches, protocols, encoder=encoder, videos=videos, query=query, k=k,
                            muvr_root=muvr_root, muvr_caches=muvr_caches, muvr_query=muvr_query)
        explorer.display()
        return explorer.view
    sources = _Sources(caches, protocols, encoder=encoder, muvr_root=muvr_root, muvr_caches=muvr_caches,
                       muvr_query=muvr_query)
    protocol = next(iter(sources.protocols))
    cache = sources.cache_names(protocol)[0]
    if query is None:
        query = sources.queries(protocol, cache)[0]
    view = sources.view(protocol, cache, query, k)
    if kernel:
        display(view_bundle(view, videos), raw=True)
    else:
        print(view_text(view))
    return view
