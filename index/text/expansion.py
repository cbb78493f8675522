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
# are "bonus" and "penalty", as for "buff" and "debuff" in the table. A signed number is read so when a stat follows
# it, or when the question names a stat and the number is not a score ("at -10", "drops to -20"), a date or range
# ("10-20-2015", "1-3"), or Honor, gold or cards ("+2 gold" is a cost, "-2 honor" a loss).
_STAT = (r"(?:f|force|c|chi|ph|personal\s+honor|hr|honor\s+requirement|gp|gold\s+production|ps|province\s+strength|"
         r"focus|fv|str|strength)")
SIGNED = re.compile(r"(?<![\w+\-/.])([+\-\u2212])\s?\d+\s?" + _STAT + r"\b", re.IGNORECASE)
_BARE = re.compile(
    r"(?<![\w+\-/.])(?<!\bat\s)(?<!\bto\s)(?<!\bis\s)(?<!\bof\s)(?<!\bon\s)([+\-\u2212])\d+\b"
    r"(?![/\-.]?\d)(?!\s*(?:honor|fh|family|gold|g\b|cards?|provinces?|%))",
    re.IGNORECASE,
)
_NAMES_STAT = re.compile(r"\b(?:\d+\s?)?" + _STAT + r"\b", re.IGNORECASE)


def signed_changes(question: str) -> list[str]:
    """"bonus" / "penalty" for each signed number in ``question`` that changes a stat (see ``SIGNED``)."""
    signs = SIGNED.findall(question)
    if not signs and _NAMES_STAT.search(question):
        signs = _BARE.findall(question)
    return ["bonus" if sign == "+" else "penalty" for sign in signs]


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
    for word in signed_changes(question[:MAX_CHARS]):
        found.setdefault(word, None)
        recognised += 1
    return list(found), recognised
