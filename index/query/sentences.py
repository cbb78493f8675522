"""Sentences of a quoted paragraph, and the one (or two) that answer: a hit points at the sentence, not only
at the paragraph.

Offsets only (``(start, end)`` into the verbatim paragraph): the index knows no Markdown, a renderer marks
them. The answering sentence is chosen by the same evidence that chose the paragraph
(``index.query.passages.choose``): the distinct question terms in it, each weighed as the paragraph chooser
weighs it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

# Words ending in "." that do not end a sentence ("e.g.", "i.e.", "vs.", "etc." mid-sentence, "cf.").
ABBREVIATIONS = frozenset({"e.g", "i.e", "vs", "cf", "etc", "approx", "no", "nos", "p", "pp", "st", "mr", "mrs", "dr"})

# A sentence ends at ".", "!", "?" or an ellipsis, then any closing quotes or brackets, then white space;
# a line break ends one too (list items and lines of a table stand apart).
_END = re.compile(r"(?:\.\.\.|…|[.!?])[\"'”’)\]]*(?=\s)|\n")
# The next sentence starts with a capital, a digit, a quote or bracket, a list marker.
_STARTS = re.compile(r"\s*[\"'“‘(\[]*[A-Z0-9•\-–—*]")


# A sentence that limits the one before it ("Kuon can use his ability while bowed. However, if the effect … is
# applied to Kuon, he cannot"): read without it, the sentence before says the opposite of the ruling.
_QUALIFIES = re.compile(
    r"[\"'“‘(\[]*(?:however|but|unless|except|note that|in that case)\b", re.IGNORECASE
)

# A bracketed note standing alone: a change stamp, closed with "]" (or "}" as one copy has it).
_STAMP_ONLY = re.compile(r"\[[^\[\]{}]*[\]}]\s*$")


def split(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``, in order, trimmed of surrounding white space.

    Not a sentence end: a known abbreviation ("e.g."), an initial ("J."), a numbered item ("3." standing
    first in its line), an ending followed by a lowercase word ("... and then").
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _END.finditer(text):
        end = m.end()
        if m.group() != "\n" and not _ends_sentence(text, start, m.start(), end):
            continue
        _add(spans, text, start, end)
        start = end
    _add(spans, text, start, len(text))
    return spans


def _ends_sentence(text: str, start: int, stop: int, end: int) -> bool:
    """Whether the punctuation at ``stop`` (the sentence began at ``start``) ends a sentence."""
    if not _STARTS.match(text, end):
        return False
    if text[stop] != ".":
        return True
    word = re.search(r"[\w.]*$", text[start:stop])
    w = word.group().lower() if word else ""
    if w in ABBREVIATIONS or (len(w) == 1 and w.isalpha()):
        return False
    line_start = text.rfind("\n", 0, stop) + 1
    return not (w.isdigit() and not text[max(start, line_start):stop - len(w)].strip())  # "3." numbers an item


def _add(spans: list[tuple[int, int]], text: str, a: int, b: int) -> None:
    piece = text[a:b]
    if piece.strip():
        lead = len(piece) - len(piece.lstrip())
        spans.append((a + lead, a + len(piece.rstrip())))


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
    spans = [(a, b) for a, b in split(text) if not _STAMP_ONLY.match(text, a, b)]
    if len(spans) < 2:
        return []
    scores = []
    for a, b in spans:
        terms = {t for t, s, e in tokens if a <= s and e <= b and t in weight}
        scores.append(sum(weight[t] for t in terms))
    best = max(scores)
    if best <= 0:
        return []
    close = {k for k, s in enumerate(scores) if s >= 0.75 * best}
    if len(close) > most:
        return []
    # a marked sentence brings the sentence that qualifies it, whatever words that one holds: a judge who reads
    # only the marks must not read half a ruling
    marked = close | {k + 1 for k in close if k + 1 < len(spans) and _QUALIFIES.match(text, spans[k + 1][0])}
    if len(marked) == len(spans):
        return []
    return [spans[k] for k in sorted(marked)]
