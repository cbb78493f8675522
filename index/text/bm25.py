"""The BM25 formula, once: the build's word arrays (``index.build.lexical``, vectorised over every posting)
and a server's own rulings (``index.query.overlay``, scored one entry at a time beside the shared hits) both
score through these two functions, so a ruling and a rule matching the same words are weighed alike.

Both accept numpy arrays or plain floats.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

K1, B = 1.2, 0.75  # saturation and length normalisation (Whoosh's BM25F defaults)

N = TypeVar("N", float, np.ndarray)


def idf(df: N, n: float) -> N:
    """How rare a term is among ``n`` documents when ``df`` of them hold it (never negative)."""
    return np.log1p((n - df + 0.5) / (df + 0.5))


def saturate(tf: N, length: N, avg: float) -> N:
    """The term-frequency part: ``tf`` occurrences in a document of ``length`` words, average ``avg``."""
    avg = avg if avg > 0 else 1.0
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
