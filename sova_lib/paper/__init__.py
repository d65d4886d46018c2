"""The SOVABench paper's tables and figures, regenerated from caches.

``results`` (paper numbers beside computed ones), ``cache_scan`` (finding
description caches), ``ablations``, ``benchmark_stats`` (Table 2, Figure 3),
``error_analysis`` (Appendix E), ``quickstart`` (helpers of the quickstart
notebook), ``plots`` with ``label_placement``, and ``reproduce`` (tables and
notebooks through papermill). ``data/`` holds the paper's reported numbers.
"""
