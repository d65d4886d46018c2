"""Description, the first step of the MLLM-to-Embedding framework (SOVABench paper, Section 4).

An MLLM G answers an instruction p about a visual input I (a clip's sampled frames, or an image) with a text
t = G(I, p), which is then split into sentences and embedded (``sova_lib.sentences``, ``sova_lib.encoder``)::

    describer = make_describer("transformers", model="openbmb/MiniCPM-V-4_5")      # G
    describe_items(describer, items, "cache", prompt="task-aware", fps=1.0)        # t = G(I, p) per item

``contract`` (the ``Describer`` contract, the backend registry and ``make_describer``),
``prompts`` (the paper's prompt presets), ``item`` (what is described: a
video, part of one, or an image), ``runner`` (the one loop that drives every
backend, ``describe_items``), ``run_cache`` (a run's outcomes into its cache folder, its options
and summary), ``ray_engine`` (the same run on a pool of Ray actors),
``cache`` (the cache folder, its key and its one manifest writer), ``provenance`` (the read side of a cache
folder: its manifest checked, and what made it) and ``backends/`` (transformers, MiniCPM-V, OpenAI-compatible
servers, the motion describer).

The package imports none of its modules (``make_describer``, ``Item`` and ``describe_items`` are names of
``sova_lib`` itself): a command loads the modules it uses alone, so that scoring a cache folder reads it through
``provenance`` without the runner or the video code.
"""
