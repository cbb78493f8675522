"""Sentences of a quoted paragraph, and the one (or two) that answer: a hit points at the sentence, not only
at the paragraph.

Offsets only (``(start, end)`` into the verbatim paragraph): the index knows no Markdown, a renderer marks
them. With the model, the answering sentence is the one whose meaning is closest to the question
(``closest``: each sentence of a paragraph of two or more has its own vector, embedded at build time); without
it, the one with the most question terms, each weighed as the paragraph chooser weighs it (``answering``).
On the labelled blind sets (docs/search.md) the closest sentence was the answering one far more often than
the one with the most question words, which marks the sentence that restates the question's situation. Where a
paragraph states one rule for two cases in two parallel sentences, the question's own words pick the case
(``case_asked``): meaning alone put "... due to a maximum, the lost portion remains" on a "cannot rise" question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from index.query.phrases import words
from index.text.sentence_spans import split, worded

__all__ = ["answering", "closest", "split"]

# The closest sentence is marked alone when it is this much closer (cosine) than the next one; when it is not,
# the sentences that close to it are marked together if there are at most two, else none stands out. Set on the
# labelled sentences of the read blind sets (docs/search.md, "The sentence that answers").
CLEAR = 0.04
# A sentence that rules ("may", "must", "cannot", "only", "unless", "if" ...) is preferred by this much (cosine)
# over one that only describes: the sentence closest to a question often restates its situation ("'This' before a
# keyword refers to the Personality ... if he has that keyword"), and the ruling is the next one ("If he does not,
# then the reference fails"). On the read blind sets: marks on the answer 203 -> 236 of 312, wrong 41 -> 26;
# anywhere from 0.1 to 0.3 did about as well.
RULING = 0.15
_RULES = re.compile(r"\b(?:may|must|can|cannot|can't|not|never|only|always|will|won't|unless|if)\b", re.IGNORECASE)

# A sentence that limits the one before it ("Kuon can use his ability while bowed. However, if the effect … is
# applied to Kuon, he cannot"): read without it, the sentence before says the opposite of the ruling.
_QUALIFIES = re.compile(
    r"[\"'“‘(\[]*(?:however|but|unless|except|note that|in that case)\b", re.IGNORECASE
)


def question_terms(
    spans: Sequence[tuple[int, int]], tokens: Sequence[tuple[str, int, int]], weight: Mapping[str, float]
) -> list[set[str]]:
    """Per sentence (``spans``), the distinct question terms it holds (``tokens``: the paragraph's analysed terms
    with offsets; ``weight``: the question's terms)."""
    return [{t for t, s, e in tokens if a <= s and e <= b and t in weight} for a, b in spans]


def answering(
    text: str, tokens: Sequence[tuple[str, int, int]], weight: Mapping[str, float], most: int = 2
) -> list[tuple[int, int]]:
    """The sentence(s) of ``text`` that answer: those whose distinct question terms (``tokens``: the
    paragraph's analysed terms with offsets; ``weight``: as ``passages.choose`` weighs them) weigh at least
    three quarters of the best one's, each with the sentence right after it when that one qualifies it
    ("However, …", "Unless …", "Note that …"). None when the paragraph is one sentence, when no sentence
    holds a question term, when more than ``most`` sentences are that close, or when the marks would cover
    every sentence: nothing stands out.
    """
    # A change stamp standing as its own "sentence" ("[ADDED Sept 20 2007]") is not one a judge would be
    # pointed to, and a one-sentence rule with a stamp is still one sentence: nothing to single out.
    spans = worded(text)
    if len(spans) < 2:
        return []
    scores = [sum(weight[t] for t in terms) for terms in question_terms(spans, tokens, weight)]
    best = max(scores)
    if best <= 0:
        return []
    close = {k for k, s in enumerate(scores) if s >= 0.75 * best}
    if len(close) > most:
        return []
    return _with_qualifiers(text, spans, close)


# Two sentences of a paragraph that share a run of this many words state one rule for two cases ("If part or all of a
# bonus is lost due to a “cannot rise” limit, it does not count against any future penalties ..." / "If part or all
# of a bonus is lost due to a maximum, the lost portion remains ..."): the question's own words say which case it asks.
PARALLEL = 6


def parallel(text: str, spans: Sequence[tuple[int, int]]) -> dict[int, int]:
    """Pairs of sentences (both ways) that share a run of ``PARALLEL`` words: one rule stated for two cases."""
    return dict(_parallel(text, tuple(spans)))


@lru_cache(maxsize=4096)
def _parallel(text: str, spans: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """``parallel``, cached: a fact about the paragraph, read again by every question that quotes it."""
    said = [words(text[a:b]) for a, b in spans]
    runs = [{tuple(w[k : k + PARALLEL]) for k in range(len(w) - PARALLEL + 1)} for w in said]
    pairs: dict[int, int] = {}
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            if runs[i] & runs[j] and i not in pairs and j not in pairs:
                pairs[i], pairs[j] = j, i
    return tuple(pairs.items())


def case_asked(
    text: str, spans: Sequence[tuple[int, int]], marked: set[int], tokens: Sequence[tuple[str, int, int]],
    weight: Mapping[str, float],
) -> set[int]:
    """``marked``, with a sentence of a parallel pair (``parallel``) swapped for its partner when only the partner
    holds question terms the other lacks: the case the question asks about. A question that names both cases ("the
    difference between a maximum and a 'cannot rise' cap") is left to the meaning."""
    pairs = parallel(text, spans) if len(spans) > 1 else {}
    if not pairs:
        return marked
    found = question_terms(spans, tokens, weight)
    out = set(marked)
    for k in marked:
        j = pairs.get(k)
        if j is None or j in marked:
            continue
        mine, theirs = (sum(weight[t] for t in a - b) for a, b in ((found[k], found[j]), (found[j], found[k])))
        if theirs > 0 and not mine:  # a question naming both cases is left to the meaning
            out.discard(k)
            out.add(j)
    return out


def closest(text: str, spans: Sequence[tuple[int, int]], cosines: np.ndarray, most: int = 2,
            tokens: Sequence[tuple[str, int, int]] = (), weight: Mapping[str, float] | None = None,
            ) -> list[tuple[int, int]]:
    """The sentence(s) of ``text`` closest in meaning to the question: ``spans`` are its sentences
    (``sentence_spans.worded``) and ``cosines`` the question's cosine with each, a sentence that rules given
    ``RULING`` more. The closest alone when it is ``CLEAR`` ahead of the next, else those within ``CLEAR`` of it
    if at most ``most``; each with the sentence that qualifies it, as in ``answering``. None for a paragraph of
    one sentence, or when the marks would cover every sentence.
    """
    if len(spans) < 2 or len(cosines) != len(spans):
        return []
    rules = [RULING if _RULES.search(text, a, b) else 0.0 for a, b in spans]
    score = [float(c) + r for c, r in zip(cosines, rules, strict=True)]
    best = max(score)
    close = {k for k, c in enumerate(score) if c >= best - CLEAR}
    if len(close) > most:
        return []
    if weight:
        close = case_asked(text, spans, close, tokens, weight)
    return _with_qualifiers(text, list(spans), close)


def _with_qualifiers(text: str, spans: list[tuple[int, int]], close: set[int]) -> list[tuple[int, int]]:
    """The ``close`` sentences, each with the sentence right after it when that one qualifies it; none when
    that would be every sentence (nothing stands out)."""
    # a marked sentence brings the sentence that qualifies it, whatever words that one holds: a judge who reads
    # only the marks must not read half a ruling
    marked = close | {k + 1 for k in close if k + 1 < len(spans) and _QUALIFIES.match(text, spans[k + 1][0])}
    if len(marked) == len(spans):
        return []
    return [spans[k] for k in sorted(marked)]
