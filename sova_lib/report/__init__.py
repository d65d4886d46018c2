"""Reading results: the work behind ``sova compare`` and ``sova reproduce``, and the retrieval explorer.

``compare`` (two scorers on one protocol, query by query), ``cache_scan``
(finding description caches and naming what made each), ``explore`` (the
explorer a notebook shows) with ``explore_data`` (its views' data).
"""
