"""The benchmarks, one sub-package each, over the method of the core.

``sovabench`` (the SOVABench clips, their protocols and the clip cutter),
``excerpts`` (the bundled street excerpts and the quickstart's protocol),
``image_tasks``, ``muvr`` and ``vantage``. The protocols of ``sovabench`` and
``excerpts`` are registered in ``sova_lib.protocols`` by its providers list,
on the registry's first read; importing ``sova_lib`` imports no benchmark.
"""
