"""Where the sentences of a paragraph stand: ``(start, end)`` offsets into the verbatim text.

A build embeds each sentence of a paragraph of two or more (``index.build.vectors``), and a hit points at the
sentence that answers (``index.query.sentences``): both must cut a paragraph the same way, so the cutting lives
here, below both. ``VERSION`` is part of the build's fingerprint: a change to the cutting rebuilds.
"""

from __future__ import annotations

import re

VERSION = 1

# Words ending in "." that do not end a sentence ("e.g.", "i.e.", "vs.", "etc." mid-sentence, "cf.").
ABBREVIATIONS = frozenset({"e.g", "i.e", "vs", "cf", "etc", "approx", "no", "nos", "p", "pp", "st", "mr", "mrs", "dr"})

# A sentence ends at ".", "!", "?" or an ellipsis, then any closing quotes or brackets, then white space;
# a line break ends one too (list items and lines of a table stand apart).
_END = re.compile(r"(?:\.\.\.|…|[.!?])[\"'”’)\]]*(?=\s)|\n")
# The next sentence starts with a capital, a digit, a quote or bracket, a list marker.
_STARTS = re.compile(r"\s*[\"'“‘(\[]*[A-Z0-9•\-–—*]")

# A bracketed note standing alone: a change stamp, closed with "]" (or "}" as one copy has it).
STAMP_ONLY = re.compile(r"\[[^\[\]{}]*[\]}]\s*$")


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


def worded(text: str) -> list[tuple[int, int]]:
    """``split`` without the change stamps that stand as sentences of their own ("[ADDED Sept 20 2007]"): the
    sentences a judge could be pointed to. A one-sentence rule with its stamp is still one sentence."""
    return [(a, b) for a, b in split(text) if not STAMP_ONLY.match(text, a, b)]


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
