"""Text analysis for rule text: one tokenizer used for indexing, querying and highlighting.

Rules are written by people and asked about by people, so the same word appears as
``face-down``, ``face down``, ``facedown``, ``Face‑Down`` or with curly quotes. The
tokenizer folds typography (curly quotes, dashes, accents) and emits a hyphenated word
both as its parts and joined, so every spelling meets in the index. Question words and
English stop words are dropped so they cannot drown the rule words.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from whoosh.analysis import (
    CharsetFilter,
    Composable,
    LowercaseFilter,
    StemFilter,
    StopFilter,
    Token,
    Tokenizer,
)
from whoosh.analysis.filters import STOP_WORDS
from whoosh.lang.porter2 import stem as porter2_stem
from whoosh.support.charset import accent_map

# Typographic variants mapped 1:1 to ASCII so character offsets stay valid for highlighting.
_TYPO = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "`": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2033": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u00ad": "-",
    }
)

# A word (after _TYPO): letters/digits, possibly joined by hyphens or apostrophes; and its parts.
_WORD = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*")
_PART = re.compile(r"[^'\-]+")

# Words that carry no rule meaning in a judge's question ("can I ...", "what happens when ...").
QUESTION_WORDS = frozenset(
    [
        "what",
        "whats",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "why",
        "how",
        "does",
        "do",
        "did",
        "doing",
        "done",
        "i",
        "im",
        "ive",
        "me",
        "my",
        "mine",
        "myself",
        "there",
        "theres",
        "their",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "him",
        "its",
        "was",
        "were",
        "been",
        "being",
        "has",
        "had",
        "so",
        "than",
        "then",
        "some",
        "about",
        "into",
        "out",
        "up",
        "also",
        "just",
        "would",
        "could",
        "should",
        "shall",
        "might",
        "must",
        "happen",
        "happens",
        "happened",
        "mean",
        "means",
        "meaning",
        "work",
        "works",
        "rule",
        "rules",
        "ruling",
        "question",
        "please",
        "anyone",
        "someone",
        "something",
        "thing",
        "things",
        "get",
        "gets",
        "got",
        "let",
        "lets",
        "our",
        "ours",
        "dont",
        "doesnt",
        "didnt",
        "isnt",
        "arent",
        "wasnt",
        "ok",
        "okay",
        "hi",
        "hey",
        "thanks",
    ]
)
STOPS = frozenset(STOP_WORDS) | QUESTION_WORDS


class RuleTokenizer(Tokenizer):
    """Words with typographic folding; hyphenated/apostrophe words also yield parts and the joined form.

    ``face-down`` yields ``face`` (pos n), ``down`` (pos n+1) and ``facedown`` (pos n), so a
    query for any of the three spellings finds it. Possessive ``'s`` is dropped.
    """

    def __eq__(self, other: object) -> bool:
        return self.__class__ is other.__class__

    def __hash__(self) -> int:
        return hash(self.__class__)

    def __call__(  # type: ignore[override]
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)

        def emit(text: str, pos: int, start: int, end: int) -> Token:
            t.text, t.boost, t.stopped = text, 1.0, False
            if keeporiginal:
                t.original = text
            if positions:
                t.pos = pos
            if chars:
                t.startchar, t.endchar = start_char + start, start_char + end
            return t

        pos = start_pos
        # _TYPO maps one character to one, so offsets in the folded text are offsets in ``value``.
        for m in _WORD.finditer(value.translate(_TYPO)):
            raw, base = m.group(0), m.start()
            parts = [(p.start(), p.end()) for p in _PART.finditer(raw)]
            if len(parts) == 2 and "'" in raw:
                tail = raw[parts[1][0] :].lower()
                if tail == "s":  # possessive: "player's" -> "player"
                    parts = parts[:1]
                elif tail in ("t", "ll", "re"):  # contraction: "can't" -> "cant" (not "can" + "t")
                    yield emit(raw.replace("'", ""), pos, base, m.end())
                    pos += 1
                    continue
            first_pos = pos
            for s, e in parts:
                yield emit(raw[s:e], pos, base + s, base + e)
                pos += 1
            if len(parts) > 1:
                yield emit(raw.replace("'", "").replace("-", ""), first_pos, base, m.end())


def rule_analyzer(stem: bool = True, stops: bool = True) -> Composable:
    """The analyzer for rule text (stemmed, stopped) or for the raw-words field (neither)."""
    chain: Composable = RuleTokenizer() | LowercaseFilter() | CharsetFilter(accent_map)
    if stops:
        chain = chain | StopFilter(stoplist=STOPS, minsize=1, renumber=False)
    if stem:
        # Porter2 (Snowball English), not the original Porter: Porter cuts "focus" to "focu" but
        # "focusing" to "focus" (likewise bonus, status) and keeps "transferr", so forms never met.
        chain = chain | StemFilter(stemfn=porter2_stem, cachesize=-1)
    return chain


STEMMED = rule_analyzer()
WORDS = rule_analyzer(stem=False, stops=False)


def terms(text: str) -> list[str]:
    """Distinct stemmed rule terms of ``text``, in order of first appearance."""
    seen: dict[str, None] = {}
    for tok in STEMMED(text):
        seen.setdefault(tok.text, None)
    return list(seen)


def words(text: str) -> list[str]:
    """Folded, unstemmed words of ``text`` (hyphen parts and joined forms included), in order."""
    return [tok.text for tok in WORDS(text)]


@functools.lru_cache(maxsize=1 << 18)
def stem(word: str) -> str:
    """Porter2 stem of one already-folded word (same stemmer as the index).

    Cached: opening an index stems every word of every entry (name importance), and rule text
    repeats a few thousand words, so the cache turns that into dictionary lookups.
    """
    return porter2_stem(word)


def fold(text: str) -> str:
    """Case, accent and typography folding for name matching: ``“Face‑Down”`` -> ``face down``."""
    text = text.translate(_TYPO)
    if not text.isascii():  # NFKD and dropping combining marks change nothing in ASCII (most questions)
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
    text = text.lower()
    text = re.sub(r"'s\b", "", text)
    text = text.replace("'", "")
    return " ".join(re.findall(r"[^\W_]+", text))


def compact(text: str) -> str:
    """``fold`` without spaces, so ``face down`` / ``face-down`` / ``facedown`` share one key."""
    return fold(text).replace(" ", "")
