"""Independent references for ranking tests: a one-hot stand-in encoder and tie-aware AP group by group."""
from __future__ import annotations

import numpy as np


class OneHotEncoder:
    """A stand-in sentence encoder: each distinct text gets its own axis (cosine 1 if equal, else 0)."""

    name = "one-hot"

    def __init__(self):
        self.axis = {}

    def encode(self, texts):
        for t in texts:
            self.axis.setdefault(t, len(self.axis))
        out = np.zeros((len(texts), 64), np.float32)
        out[np.arange(len(texts)), [self.axis[t] for t in texts]] = 1
        return out


def expected_ap_by_groups(scores: np.ndarray, relevant: np.ndarray) -> float:
    """Tie-aware AP of one ranking, tie group by tie group in plain Python (not the closed form of metrics.py).

    For a tie group at ranks a+1 .. a+n holding r relevant items with b relevant items above it, each of its n
    positions holds a relevant item with probability r/n and then has b + 1 + (k-1)(r-1)/(n-1) relevant items at
    or above it in expectation.
    """
    total, above, rel_above = 0.0, 0, 0
    for value in sorted(set(np.asarray(scores).tolist()), reverse=True):
        members = scores == value
        n, r = int(members.sum()), int(relevant[members].sum())
        for k in range(1, n + 1):
            spread = (k - 1) * (r - 1) / (n - 1) if n > 1 else 0.0
            total += (r / n) * (rel_above + 1 + spread) / (above + k)
        above, rel_above = above + n, rel_above + r
    return total / relevant.sum()
