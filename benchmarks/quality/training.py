"""Learning how much each kind of evidence counts (``ranking.Weights``) from questions with known answers.

A grid over a handful of mixing weights (what ranked before) can only try a few values per weight, and
its picks sat on the grid's edges. Here the weights are fitted: each question's paragraphs are scored
as ``features @ w``, an entry scores as its best paragraph (as the engine ranks), and ``w`` maximises the
likelihood of the expected entry under a softmax over entries, with a small L2 penalty and every weight
kept >= 0 (so evidence only ever adds, and the cut-off "a fraction of the best" keeps its meaning).

It is used only by ``python -m benchmarks.quality eval``: k-fold cross-validation fits on k-1 folds and scores the
held-out fold, so the figures it prints were never fitted to the questions they score; the fit on all
questions is what ``ranking.DEFAULT`` ships.
"""

from __future__ import annotations

import numpy as np

from index.query.ranking import FEATURES, SHARPNESS

L2 = 0.01  # pulls weights towards 0: with ~200 questions, ten free weights must not chase single questions
STEPS = 300
RATE = 0.5


def _best_units(scores: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per question and entry: the best paragraph's score and its index ([questions, entries] each)."""
    per_entry = np.maximum.reduceat(scores, starts, axis=1)
    n_units = scores.shape[1]
    entry_of = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n_units]))
    is_best = scores >= per_entry[:, entry_of]
    index = np.where(is_best, np.arange(n_units)[None, :], n_units)
    return per_entry, np.minimum.reduceat(index, starts, axis=1)


def fit(
    feats: np.ndarray,
    expected: np.ndarray,
    starts: np.ndarray,
    use: tuple[str, ...] = FEATURES,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Weights (one per ``FEATURES``; 0 for features not in ``use``) fitted to ``feats`` [question, paragraph,
    feature] with the expected entry index per question. Deterministic: same input, same weights."""
    mask = np.array([f in use for f in FEATURES], dtype=np.float32)
    w = (start if start is not None else np.ones(len(FEATURES), dtype=np.float32)) * mask
    rows = np.arange(len(expected))
    for _ in range(STEPS):
        per_entry, best = _best_units(feats @ w, starts)
        chosen = feats[rows[:, None], best]  # [question, entry, feature] at each entry's best paragraph
        z = SHARPNESS * (per_entry - per_entry.max(axis=1, keepdims=True))
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        grad = SHARPNESS * (chosen[rows, expected] - np.einsum("qe,qef->qf", p, chosen)).mean(axis=0)
        w = np.maximum(w + RATE * (grad - L2 * w), 0.0) * mask
    return w.astype(np.float32)


def ranks(feats: np.ndarray, w: np.ndarray, expected: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The rank (1 = first) of each question's expected entry under weights ``w`` (ties count against it)."""
    per_entry, _best = _best_units(feats @ w, starts)
    target = per_entry[np.arange(len(expected)), expected]
    found = target > 0
    return np.where(found, (per_entry >= target[:, None]).sum(axis=1), per_entry.shape[1])


def folds_of(n: int, folds: int, seed: int) -> np.ndarray:
    """A fold number per question, shuffled by ``seed`` and balanced."""
    order = np.random.default_rng(seed).permutation(n)
    out = np.empty(n, dtype=int)
    out[order] = np.arange(n) % folds
    return out


CHOICE_FEATURES = ("para", "meaning", "asked", "expand_para")  # the columns that differ within one entry


def fit_choice(feats: np.ndarray, spans: list[tuple[int, int]], answers: list[tuple[int, ...]]) -> np.ndarray:
    """Weights that choose the answering paragraph within the right entry: a softmax over that entry's
    paragraphs (``spans``: first and end unit per question), maximising the chance of any acceptable one
    (``answers``: unit indices). Only ``CHOICE_FEATURES`` are used: the rest are equal within an entry."""
    mask = np.array([f in CHOICE_FEATURES for f in FEATURES], dtype=np.float32)
    w = np.ones(len(FEATURES), dtype=np.float32) * mask
    for _ in range(STEPS):
        grad = np.zeros(len(FEATURES), dtype=np.float64)
        for q, ((a, b), ok) in enumerate(zip(spans, answers, strict=True)):
            f = feats[q, a:b]
            z = SHARPNESS * (f @ w)
            p = np.exp(z - z.max())
            p /= p.sum()
            good = np.array([a + i in ok for i in range(b - a)])
            p_good = p[good].sum()
            if p_good <= 0:
                continue
            grad += SHARPNESS * ((p[good] / p_good) @ f[good] - p @ f)
        w = np.maximum(w + RATE * (grad / max(1, len(spans)) - L2 * w), 0.0) * mask
    return w.astype(np.float32)
