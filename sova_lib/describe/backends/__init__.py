"""Describer backends, each a ``Describer`` (``sova_lib.describe.contract``) registered by name.

``transformers`` (local Hugging Face models; ``transformers_models`` names
families and explains load errors; ``minicpm`` is MiniCPM-V's remote-code chat
path), ``openai`` (any OpenAI-compatible server, its requests through
``transport``) and ``motion`` (the classical OpenCV motion describer, with
``motion_tracking``; not an MLLM). Each backend declares its options as one
frozen class, its ``Options``, which its constructor takes whole. A module is
imported when its backend is built, or when a describing command's parser
reads the backends' options (no model, no GPU library is loaded then).
"""
