"""The benchmarks, one sub-package each, over the method of the core.

``sovabench`` (the SOVABench clips, their protocols and the clip cutter) and
``examples`` (the bundled excerpts and the quickstart's protocol) are
registered when ``sova_lib`` is imported; the other benchmarks register what
they offer when imported.
"""
