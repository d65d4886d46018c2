"""The library version, written into every cache manifest and result file."""

__version__ = "0.1.0"
