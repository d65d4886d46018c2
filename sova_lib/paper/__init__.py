"""The SOVABench paper's tables and figures, regenerated from caches.

``results`` (paper numbers beside computed ones: Tables 4 and C.1, Figure
2(b)), ``ablations``,
``benchmark_stats`` (Table 2, Figure 3), ``error_analysis`` (Appendix E),
``table3`` (Table 3, the image tasks), ``contrastive`` (contrastive rows of Table 4 and Table C.1),
``quickstart`` (helpers of the quickstart notebook), ``plots`` with ``label_placement``, ``tables``
(writing a table as CSV and Markdown) and ``reproduce`` (tables and
notebooks through papermill). ``data/`` holds the paper's reported numbers.
"""
