"""Is a question word plain English rather than a typo of a rule word?

Why: free-text search corrects words the rules never use to the nearest rule word, so "targt" finds
Target. Ordinary English was "corrected" too: "is it good to ..." searched for gold, "weather" for
water. A word that is real English is what the player meant, so it is not corrected.

Which words are English: the whole-word entries of the WordPiece vocabulary of the embedding model
that ships inside this package (``models/all-MiniLM-L6-v2-l5r-int8/tokenizer.json``, BERT's uncased
vocabulary): about 21,700 words picked by frequency, already installed, no download and no new
dependency. Measured on one-letter typos of every rule word (330,000 of them) it leaves 16 non-words
uncorrected, and it recognises 2,831 of the 3,870 common English words (723 of the 724 most common)
that used to be "corrected". The other lists tried let 17 to 64 times more typos through, except
pyspellchecker's most frequent words (35 typos), which left 264 more English words corrected
(docs/DEVELOPMENT-NOTES.md, Search).

The file is read from the shipped folder whatever ``L5R_EMBEDDING_MODEL`` says: the list is about
English, not about the model, so turning the model off (``off``) or swapping it changes nothing here.
When the file is missing or unreadable the list is empty and every unknown word is corrected as it
was before this check (one warning in the log).

British spellings ("honour", "favour", "specialise") are English too, but they are the rule's own
word spelled the other way: ``american`` gives the respellings to look up before giving up.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from pathlib import Path

from index.text.embedding import DEFAULT_MODEL, TOKENIZER_FILE

log = logging.getLogger("index")

SOURCE = DEFAULT_MODEL / TOKENIZER_FILE  # read at call time, so a test can point it elsewhere

# Only the respellings that measurably meet rule words (honour/colour/favour, -ise/-isation); each
# needs what follows it to end the word, so "source", "court" or "rise" are never touched, and "scour",
# "four", "hour" keep their "our" (the letter before it must be one of honour/armour/labour/vigour/...).
_AMERICAN = (
    (re.compile(r"(?<=[bdgilmnrv])our(?=(?:s|ed|ing|able|ably|ite|ites)?$)"), "or"),
    (re.compile(r"(?<=.{3})is(?=(?:e|es|ed|ing|ation|ations)$)"), "iz"),
)


def is_word(word: str) -> bool:
    """True when ``word`` (lower-case, as the analyzer gives it) is a whole word of the English list."""
    return word in vocabulary(SOURCE)


@functools.lru_cache(maxsize=4)
def vocabulary(path: Path) -> frozenset[str]:
    """The whole words of a WordPiece ``tokenizer.json`` (no ``##`` pieces, letters only), read once.

    Any failure (missing file, bad JSON, another tokenizer layout) gives an empty set and one warning:
    search then corrects unknown words as it did before, rather than failing.
    """
    try:
        vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
        words = frozenset(w for w in vocab if w.isascii() and w.isalpha() and w.islower())
    except Exception as exc:  # any failure: typo correction without the English check
        log.warning(
            "English word list %s unavailable (%s); every unknown query word is typo-corrected",
            path,
            type(exc).__name__,
        )
        return frozenset()
    return words


def american(word: str) -> list[str]:
    """The American spellings of a British ``word`` ("honoured" -> "honored"), or none."""
    out = []
    for pattern, repl in _AMERICAN:
        respelled = pattern.sub(repl, word, count=1)
        if respelled != word:
            out.append(respelled)
    return out
