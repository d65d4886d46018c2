"""The street excerpts that ship with the package, as a tiny benchmark (the quickstart's).

``protocols`` registers ``quickstart-direction`` (the bundled excerpts and
their time-reversed copies; relevant = same playing direction) when imported,
which the registry of ``sova_lib.protocols`` does on its first read.
"""
from __future__ import annotations

from sova_lib.benchmarks.excerpts.protocols import (
    DIRECTION_PROTOCOL,
    QUICKSTART_INPUT,
    REVERSED_SUFFIX,
    direction_protocol,
    example_clips,
)

__all__ = ["DIRECTION_PROTOCOL", "QUICKSTART_INPUT", "REVERSED_SUFFIX", "direction_protocol", "example_clips", "protocols"]
