"""The SOVABench paper's tables and figures, regenerated from caches.

``results`` (paper numbers beside computed ones: Tables 4 and C.1, Figure
2(b)), ``cache_scan`` (finding description caches), ``ablations``,
``benchmark_stats`` (Table 2, Figure 3), ``error_analysis`` (Appendix E),
``table3`` (Table 3, the image tasks), ``contrastive`` (contrastive rows of Table 4 and Table C.1), ``compare``
(two scorers, query by query), ``explore`` (the retrieval explorer) with
``explore_data`` (its views' data), ``quickstart`` (helpers of the
quickstart notebook), ``plots`` with ``label_placement``, ``tables``
(writing a table as CSV and Markdown) and ``reproduce`` (tables and
notebooks through papermill). ``data/`` holds the paper's reported numbers.
"""
