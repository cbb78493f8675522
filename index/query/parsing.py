"""Query analysis: a player's question -> weighted index terms and its raw words; filter checks.

No user text ever reaches a query parser: the question is analysed with the index's own tokenizer and
unknown words are corrected against the index vocabulary, so "OR OR (" or "title:x" are just words.
Ranking (``index.query.ranking``) and hit building (``index.query.passages``) build on this; it imports
neither, so the three form a line, not a circle.
"""

from __future__ import annotations

import re
from datetime import date

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from glossary.kinds import SOURCE_LABELS
from glossary.stamps import MONTH_PATTERN, MONTHS
from index.build.state import State
from index.text import english
from index.text.analysis import STOPS, WORDS, stem

OR_SCALE = 0.9  # coordination bonus of the evaluation baseline (qparser.OrGroup.factory(0.9))
MAX_QUERY_CHARS = 20000  # only the start of a huge paste is even tokenized
MAX_QUERY_WORDS = 48  # a 5,000-character paste is cut to its first words, not searched whole
MAX_WORD = 40  # longer "words" are noise (base64, URLs), never rule vocabulary
PAIR_BOOST = 0.8  # two words that are one indexed word when joined ("face down" -> "facedown")
FUZZY_WEIGHT = 0.7  # a typo-corrected word counts for less than one typed right
_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def check_date(value: str, name: str) -> str:
    """A YYYY, YYYY-MM or YYYY-MM-DD that is a real calendar date, else ValueError with a readable message."""
    v = (value or "").strip()
    ok = bool(_DATE.match(v))
    if ok:  # the shape is right; is it a real calendar date ("2015-13" and "2015-02-30" are not)?
        parts = [int(x) for x in v.split("-")]
        try:
            date(parts[0], *(parts[1:] + [1] * (3 - len(parts))))
        except ValueError:
            ok = False
    if not ok:
        raise ValueError(f"{name} must be a date like 2008-03-16 (or 2008-03, 2008), not {value!r}")
    return v


_MONTH = "(" + MONTH_PATTERN + r")\.?"
_NUMERIC_DAY = re.compile(r"\b(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})\b|\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MONTH_FIRST = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
_DAY_FIRST = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE)


def named_days(text: str) -> frozenset[str]:
    """The whole calendar days a question names, as YYYY-MM-DD: "10/20/2015" (the update log's own form,
    month first; a day-first reading too where it is a date), "2015-10-20", "Oct 20, 2015", "20 October 2015".
    A judge asking about "the 10/20/2015 update" names that record as surely as by its title."""
    found: set[tuple[int, int, int]] = set()
    for m in _NUMERIC_DAY.finditer(text[:MAX_QUERY_CHARS]):
        if m.group(3):
            a, b, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
            found.update({(year, a, b), (year, b, a)})
        else:
            found.add((int(m.group(4)), int(m.group(5)), int(m.group(6))))
    for m in _MONTH_FIRST.finditer(text[:MAX_QUERY_CHARS]):
        found.add((int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2))))
    for m in _DAY_FIRST.finditer(text[:MAX_QUERY_CHARS]):
        found.add((int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1))))
    out = set()
    for year, month, day in found:
        try:
            out.add(date(year, month, day).isoformat())
        except ValueError:
            continue
    return frozenset(out)


_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?(\d{{4}})\b", re.IGNORECASE)
_NUMERIC_MONTH = re.compile(r"(?<![\d/.-])(\d{1,2})/(\d{4})\b")


def named_months(text: str) -> frozenset[str]:
    """The months a question names without a day, as YYYY-MM: "the Dec 2015 update", "January of 2016", "10/2015".
    The update log dates its records by day; a judge names them by month as often ("what did the January 2016
    update change?")."""
    found: set[tuple[int, int]] = set()
    for m in _MONTH_YEAR.finditer(text[:MAX_QUERY_CHARS]):
        found.add((int(m.group(2)), MONTHS[m.group(1).lower()]))
    for m in _NUMERIC_MONTH.finditer(text[:MAX_QUERY_CHARS]):
        found.add((int(m.group(2)), int(m.group(1))))
    return frozenset(f"{year:04d}-{month:02d}" for year, month in found if 1 <= month <= 12)


def check_source(source: str) -> str:
    if source not in SOURCE_LABELS:
        raise ValueError(f"unknown source {source!r} (use one of: {', '.join(SOURCE_LABELS)})")
    return source


# A question naming a document ("in the Obsidian Hand", "per the Comprehensive Rules") names where to look,
# not what about: its words would otherwise match titles ("hand" -> "C. Maximum Hand Size").
DOCUMENT_NAMES = re.compile(
    r"\b(?:obsidian[ -]hand(?: (?:ruleset|rules|format|tournament))?|comprehensive rules|rules wiki)\b",
    re.IGNORECASE,
)


def query_terms(st: State, text: str) -> tuple[dict[str, float], list[str]]:
    """Stemmed terms with weights (typos corrected against the words field) and the raw words in order.

    Document names in the question are left out (``DOCUMENT_NAMES``): they say where, not what. A word
    that is plain English ("good", "weather") is what the player meant, never a typo of a rule word
    ("gold", "water"): it is not corrected (``index.text.english``).
    """
    text = DOCUMENT_NAMES.sub(" ", text[:MAX_QUERY_CHARS])
    raw_words: list[str] = []
    distinct: dict[str, None] = {}
    for tok in WORDS(text[:MAX_QUERY_CHARS]):
        if len(tok.text) >= MAX_WORD:
            continue
        raw_words.append(tok.text)
        if tok.text not in STOPS:
            distinct.setdefault(tok.text, None)
        if len(distinct) >= MAX_QUERY_WORDS:
            break
    raw_words = raw_words[: MAX_QUERY_WORDS * 4]
    weights: dict[str, float] = {}

    def add(term: str, weight: float) -> None:
        weights[term] = max(weights.get(term, 0.0), weight)

    content = list(distinct)
    for w in content:
        s = stem(w)
        if s in st.vocab:
            add(s, 1.0)
        elif same := [t for v in english.american(w) if (t := stem(v)) in st.vocab]:
            add(same[0], 1.0)  # "honour" is the rules' "honor", spelled the British way: not a typo
        elif w.isalpha() and len(w) >= 4 and w not in st.words_set and not english.is_word(w):
            for c in correct(st, w):
                if (cs := stem(c)) in st.vocab:
                    add(cs, FUZZY_WEIGHT)
    for a, b in zip(content, content[1:], strict=False):
        if (joined := stem(a + b)) in st.vocab:
            add(joined, PAIR_BOOST)
    return weights, raw_words


def correct(st: State, word: str) -> list[str]:
    """Nearest vocabulary words by edit distance (1 for short words, 2 for long), or a split in two."""
    maxdist = 1 if len(word) <= 5 else 2
    found = process.extract(word, st.words, scorer=Levenshtein.distance, score_cutoff=maxdist, limit=5)
    if found:
        best = min(d for _w, d, _i in found)
        return [w for w, d, _i in found if d == best and w[0] == word[0]][:3]
    for i in range(2, len(word) - 1):
        if word[:i] in st.words_set and word[i:] in st.words_set:
            return [word[:i], word[i:]]
    return []
