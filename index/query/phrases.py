"""The longest run of the question's own words that a paragraph repeats: a player who quotes a card or a rule
("'cannot fall below 2'", "gain 1 honor for each samurai I control") points at the paragraph that says it.

Bag-of-words evidence cannot see this: "cannot", "fall" and "below" are in both of Fall's paragraphs, but only
the second says "cannot fall below"; For each's first paragraph quotes "Gain 1 Honor for each Samurai you
control" whole, its second only "gain 1 honor". Used only to choose among one entry's paragraphs
(``index.query.ranking.group``), never to rank entries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from index.text.analysis import STOPS, fold

SHORTEST = 3  # a run of fewer words is common phrasing ("of the", "a personality"), not a quotation
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str, most: int | None = None) -> tuple[str, ...]:
    """Folded words in order (the first ``most``), stop words kept: a quotation is matched word for word."""
    return tuple(_WORD.findall(fold(text))[:most])


@lru_cache(maxsize=8192)
def paragraph_words(text: str) -> tuple[str, ...]:
    """``words`` of a rule paragraph, cached: the chooser reads the same paragraphs for many questions (a
    player's question is not cached: it is read once, and kept nowhere)."""
    return words(text)


def grams(question: Sequence[str]) -> set[tuple[str, ...]]:
    """The question's runs of ``SHORTEST`` words, the seeds a paragraph's runs are grown from."""
    return {tuple(question[i : i + SHORTEST]) for i in range(len(question) - SHORTEST + 1)}


def longest_run(
    question: Sequence[str], seeds: set[tuple[str, ...]], paragraph: Sequence[str], title: frozenset[str] = frozenset()
) -> int:
    """Words in the longest run of ``paragraph`` that is also a run of ``question`` and holds at least two words
    that are not stop words, one of them not a word of the entry's ``title`` (its name repeated is no quotation:
    "what is entering-play honor loss?" points at no paragraph of Entering-play honor loss); 0 when there is
    none of ``SHORTEST`` words or more."""
    if not seeds or len(paragraph) < SHORTEST:
        return 0
    if seeds.isdisjoint(paragraph_grams(tuple(paragraph))):
        return 0  # most paragraphs share no three-word run with the question: no walk through them
    text = " " + " ".join(question) + " "
    best = 0
    for i in range(len(paragraph) - SHORTEST + 1):
        if tuple(paragraph[i : i + SHORTEST]) not in seeds:
            continue
        j = i + SHORTEST
        while j < len(paragraph) and " " + " ".join(paragraph[i : j + 1]) + " " in text:
            j += 1
        telling = [w for w in paragraph[i:j] if w not in STOPS]
        if j - i > best and len(telling) >= 2 and any(w not in title for w in telling):
            best = j - i
    return best


@lru_cache(maxsize=8192)
def paragraph_grams(paragraph: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """A paragraph's runs of ``SHORTEST`` words, cached (rule paragraphs come back question after question)."""
    return frozenset(paragraph[i : i + SHORTEST] for i in range(len(paragraph) - SHORTEST + 1))
