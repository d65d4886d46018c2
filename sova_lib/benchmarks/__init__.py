"""The benchmarks, one sub-package each, over the method of the core.

``sovabench`` (the SOVABench clips, their protocols and the clip cutter) is
registered when ``sova_lib`` is imported; the other benchmarks register what
they offer when imported.
"""
