"""Reading results: the work behind ``sova compare`` and ``sova reproduce``, and the retrieval explorer.

``compare`` (two scorers on one protocol, query by query), ``cache_scan``
(finding description caches and naming what made each), ``explore`` (the
explorer a notebook shows) with ``explore_data`` (its views' data),
``reproduce`` (the baselines table of ``baselines``, then every notebook
through papermill), ``tables`` (a table as CSV and Markdown) and ``plots`` (general plot primitives that take
``ax=`` and return the axes, and byte-stable saving; ``label_placement``: labels that do not overlap). The
paper's own tables are put together on the notebooks' side, in their helper
package ``notebooks/paper``, which nothing here imports.
"""
