"""Describer backends, each a ``Describer`` (``sova_lib.describe.contract``) registered by name.

``transformers`` (local Hugging Face models; ``transformers_models`` names
families and explains load errors; ``minicpm`` is MiniCPM-V's remote-code chat
path), ``openai`` (any OpenAI-compatible server) and ``motion`` (the classical
OpenCV motion describer, with ``motion_tracking``; not an MLLM). Each module
is imported only when its backend is built.
"""
