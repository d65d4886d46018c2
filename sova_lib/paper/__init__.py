"""Figures: ``plots`` (drawing and byte-stable saving) with ``label_placement`` (labels that do not overlap).

The paper's tables are regenerated on the notebooks' side (``notebooks/paper``).
"""
