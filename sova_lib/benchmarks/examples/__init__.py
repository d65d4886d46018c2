"""The example excerpts that ship with the package, as a tiny benchmark.

``protocols`` registers ``quickstart-direction`` (the bundled excerpts and
their time-reversed copies; relevant = same playing direction) on import.
"""
from __future__ import annotations

from sova_lib.benchmarks.examples import protocols
from sova_lib.benchmarks.examples.protocols import DIRECTION_PROTOCOL, REVERSED_SUFFIX, ExampleClip, example_clips

__all__ = ["DIRECTION_PROTOCOL", "REVERSED_SUFFIX", "ExampleClip", "example_clips", "protocols"]
