"""Query expansion: the rules' words for the players' words a question uses (``index.text.thesaurus``).

Kept apart from the table so the table stays plain data (and its history shows it was
written blind). Matching is on folded whole words, longest phrase first, so "forbidden list"
adds "banned" once and "card name" is not also read as "name".
"""

from __future__ import annotations

import functools
import re

from index.text.analysis import fold
from index.text.thesaurus import PLAYER_TO_RULES

MAX_CHARS = 2000  # a long paste is expanded from its start only
# Players write a stat's bonus or penalty as a signed number ("+3 ph", "-2F", "+1 chi"): the rules' words for them
# are "bonus" and "penalty", as for "buff" and "debuff" in the table. Only before a stat: "-20 family honor" is a
# score, and "1-3" a range.
SIGNED = re.compile(
    r"(?<![\w+\-/])([+\-\u2212])\s?\d+\s?(?:f|force|c|chi|ph|personal honor|hr|honor requirement|gp|gold production|"
    r"ps|province strength|focus|fv|str|strength)\b",
    re.IGNORECASE,
)


@functools.cache
def _table() -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
    """The folded table, and for each word that starts a phrase key, the longest such key's length."""
    keys = {fold(k): v for k, v in PLAYER_TO_RULES.items() if fold(k)}
    starts: dict[str, int] = {}
    for k in keys:
        first, n = k.split()[0], len(k.split())
        starts[first] = max(starts.get(first, 1), n)
    return keys, starts


def rule_phrases(question: str) -> list[str]:
    """The rules' words and phrases for the players' words in ``question``, in order, without repeats."""
    return expand(question)[0]


def expand(question: str) -> tuple[list[str], int]:
    """The rules' words and phrases for ``question`` and how many of its words the thesaurus recognised."""
    table, starts = _table()
    words = fold(question[:MAX_CHARS]).split()
    found: dict[str, None] = {}
    recognised = 0
    i = 0
    while i < len(words):
        longest = starts.get(words[i], 0)  # most words start no key: one lookup and on
        for n in range(min(longest, len(words) - i), 0, -1):
            phrases = table.get(" ".join(words[i : i + n]) if n > 1 else words[i])
            if phrases:
                found.update(dict.fromkeys(phrases))
                recognised += n
                i += n
                break
        else:
            i += 1
    for sign in SIGNED.findall(question[:MAX_CHARS]):
        found.setdefault("bonus" if sign == "+" else "penalty", None)
        recognised += 1
    return list(found), recognised
