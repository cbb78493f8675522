"""Text analysis for rule text: one tokenizer used for indexing, querying and highlighting.

Rules are written by people and asked about by people, so the same word appears as
``face-down``, ``face down``, ``facedown``, ``Face‑Down`` or with curly quotes. The
tokenizer folds typography (curly quotes, dashes, accents) and emits a hyphenated word
both as its parts and joined, so every spelling meets in the index. Question words and
English stop words are dropped so they cannot drown the rule words.
"""

from __future__ import annotations

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

# A word: letters/digits, possibly joined by hyphens or apostrophes (straight or typographic).
_WORD = re.compile(r"[^\W_]+(?:['\u2019\u2018\-\u2010\u2011\u2012\u2013\u2014][^\W_]+)*")
_JOINERS = re.compile(r"['\-]")

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
        pos = start_pos
        for m in _WORD.finditer(value):
            raw = m.group(0).translate(_TYPO)
            base = m.start()
            parts = [(p.start(), p.end()) for p in re.finditer(r"[^'\-]+", raw)]
            # Possessive / contraction tail: "player's" -> "player" (keep "o'clock"-like words joined).
            if len(parts) == 2 and "'" in raw and raw[parts[1][0] : parts[1][1]].lower() in ("s", "t", "ll", "re"):
                if raw[parts[1][0] : parts[1][1]].lower() == "s":
                    parts = parts[:1]
                else:  # "can't" -> "cant"
                    parts = [(0, len(raw))]
                    raw = raw.replace("'", "")
                    base_end = m.end()
                    yield from self._emit(t, raw, pos, base, base_end, positions, chars, start_char, keeporiginal)
                    pos += 1
                    continue
            if len(parts) == 1:
                s, e = parts[0]
                yield from self._emit(t, raw[s:e], pos, base + s, base + e, positions, chars, start_char, keeporiginal)
                pos += 1
                continue
            first_pos = pos
            for s, e in parts:
                yield from self._emit(t, raw[s:e], pos, base + s, base + e, positions, chars, start_char, keeporiginal)
                pos += 1
            joined = _JOINERS.sub("", raw)
            yield from self._emit(t, joined, first_pos, base, m.end(), positions, chars, start_char, keeporiginal)

    @staticmethod
    def _emit(
        t: Token,
        text: str,
        pos: int,
        start: int,
        end: int,
        positions: bool,
        chars: bool,
        start_char: int,
        keeporiginal: bool,
    ) -> Iterator[Token]:
        t.text = text
        t.boost = 1.0
        t.stopped = False
        if keeporiginal:
            t.original = text
        if positions:
            t.pos = pos
        if chars:
            t.startchar = start_char + start
            t.endchar = start_char + end
        yield t


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


def stem(word: str) -> str:
    """Porter2 stem of one already-folded word (same stemmer as the index)."""
    return porter2_stem(word)


def fold(text: str) -> str:
    """Case, accent and typography folding for name matching: ``“Face‑Down”`` -> ``face down``."""
    text = unicodedata.normalize("NFKD", text.translate(_TYPO))
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"'s\b", "", text)
    text = text.replace("'", "")
    return " ".join(re.findall(r"[^\W_]+", text))


def compact(text: str) -> str:
    """``fold`` without spaces, so ``face down`` / ``face-down`` / ``facedown`` share one key."""
    return fold(text).replace(" ", "")
