"""Sentences of a quoted paragraph, and the one (or two) that answer: a hit points at the sentence, not only
at the paragraph.

Offsets only (``(start, end)`` into the verbatim paragraph): the index knows no Markdown, a renderer marks
them. The answering sentence is chosen by the same evidence that chose the paragraph
(``index.query.passages.choose``): the distinct question terms in it, each weighed as the paragraph chooser
weighs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from index.text.sentence_spans import split, worded

__all__ = ["answering", "split", "worded"]


def answering(
    text: str, tokens: Sequence[tuple[str, int, int]], weight: Mapping[str, float], most: int = 2
) -> list[tuple[int, int]]:
    """The sentence(s) of ``text`` that answer: those whose distinct question terms (``tokens``: the
    paragraph's analysed terms with offsets; ``weight``: as ``passages.choose`` weighs them) weigh at least
    three quarters of the best one's. None when the paragraph is one sentence, when no sentence holds a
    question term, or when more than ``most`` sentences (or all of them) are that close: nothing stands out.
    """
    # A change stamp standing as its own "sentence" ("[ADDED Sept 20 2007]") is not one a judge would be
    # pointed to, and a one-sentence rule with a stamp is still one sentence: nothing to single out.
    spans = worded(text)
    if len(spans) < 2:
        return []
    scores = []
    for a, b in spans:
        terms = {t for t, s, e in tokens if a <= s and e <= b and t in weight}
        scores.append(sum(weight[t] for t in terms))
    best = max(scores)
    if best <= 0:
        return []
    chosen = [span for span, s in zip(spans, scores, strict=True) if s >= 0.75 * best]
    if len(chosen) > most or len(chosen) == len(spans):
        return []
    return chosen
