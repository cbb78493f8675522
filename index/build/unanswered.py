"""Questions the loaded rules do not answer, kept: a question like one of these gets "no rule stands out".

The ranking always has a best entry, and on an in-domain question the sources do not answer ("how many
provinces do I start with") that entry is often confidently wrong: the words and the meaning sit next to a
rule that states a neighbouring point (the provinces' starting *strength*). No score of the ranking tells the
two apart. What does, measured across three question sets written apart (docs/search.md, "Questions kept as
not covered"), is whether the question is closer to a question someone checked the sources do not answer than
to every question kept as answered by a paragraph (``index.build.asked``).

So ``unanswered.json`` keeps such questions, each checked by reading and searching the loaded texts, together
with the digests (``asked.digest``) of every paragraph they were checked against. Text loaded later may answer
one: a kept question whose closest paragraph (by the model) is not among those checked is left unused
(``usable``), so a page added to the sources can take it over; the rest keep working. A malformed file logs one
line and is left out (the rules still answer, as without the file).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from glossary.model import Corpus
from index.build import asked
from index.build.asked import DIGEST_CHARS, digest
from index.build.lexical import units

log = logging.getLogger("index")

DATA = Path(__file__).resolve().parent.parent / "unanswered.json"


class UnansweredError(ValueError):
    """The file is malformed (the message names the file and the record)."""


@dataclass(frozen=True)
class Unanswered:
    """Kept questions the sources were checked not to answer, and the paragraphs they were checked against."""

    texts: tuple[str, ...]
    checked: frozenset[str]  # paragraph digests


NONE = Unanswered((), frozenset())


def read(path: Path | None = None) -> Unanswered:
    """The file's questions (default ``DATA``); ``NONE`` when there is no file; ``UnansweredError`` when malformed."""
    path = path or DATA
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return NONE
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnansweredError(f"{path.name}: not JSON ({exc})") from None
    return check(data, path.name)


def check(data: object, name: str = "unanswered.json") -> Unanswered:
    """Validate {"checked": [paragraph digest, ...], "questions": [{"q": str, ...}, ...]}."""
    if not isinstance(data, dict):
        raise UnansweredError(f"{name}: expected an object with 'checked' and 'questions'")
    checked, questions = data.get("checked"), data.get("questions")
    if not isinstance(checked, list) or not all(isinstance(d, str) and len(d) == DIGEST_CHARS for d in checked):
        raise UnansweredError(f"{name}: 'checked' must list {DIGEST_CHARS}-character paragraph digests")
    if not isinstance(questions, list):
        raise UnansweredError(f"{name}: 'questions' must be a list")
    texts: list[str] = []
    for n, rec in enumerate(questions, 1):
        q = rec.get("q") if isinstance(rec, dict) else None
        if not isinstance(q, str) or not q.strip():
            raise UnansweredError(f"{name}: question {n} has no text ('q')")
        texts.append(" ".join(q.split()))
    return Unanswered(tuple(dict.fromkeys(texts)), frozenset(checked))


def shipped(path: Path | None = None) -> Unanswered:
    """The shipped questions; a malformed file logs one line and is left out."""
    try:
        return read(path)
    except UnansweredError as exc:
        log.warning("%s; ranking without the questions kept as not covered", exc)
        return NONE


def fingerprint(path: Path | None = None) -> str:
    """What the build fingerprint must cover: the file's bytes (a changed file rebuilds the index)."""
    return asked.fingerprint(path or DATA)


def paragraph_digests(corpus: Corpus) -> list[str]:
    """The digest of every answer unit's text, in unit order (what ``checked`` lists for the corpus checked)."""
    ent, par = units(corpus)
    out = []
    for n, p in zip(ent.tolist(), par.tolist(), strict=True):
        entry = corpus.entries[n]
        out.append(digest(entry.paragraphs[p] if p >= 0 else ""))
    return out


def usable(kept: Unanswered, corpus: Corpus, unit_vectors: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Per kept question, whether it still holds: its closest paragraph by the model (``unit_vectors``, one
    row per unit; ``vectors``, one per kept question) is one it was checked against. A paragraph added or
    changed since is unchecked, and may answer it."""
    if not len(kept.texts):
        return np.zeros(0, dtype=bool)
    fresh = np.asarray([d not in kept.checked for d in paragraph_digests(corpus)], dtype=bool)
    if not fresh.any() or not len(unit_vectors):
        return np.ones(len(kept.texts), dtype=bool)
    if fresh.all():
        ok = np.zeros(len(kept.texts), dtype=bool)
    else:
        cos = vectors @ unit_vectors.T
        ok = cos[:, ~fresh].max(axis=1) > cos[:, fresh].max(axis=1)
    if not ok.all():
        log.info("%d question(s) kept as not covered are closest to a paragraph they were not checked against; "
                 "unused", int((~ok).sum()))
    return ok


def write_checked(path: Path | None = None) -> int:
    """Record the shipped sources' paragraphs as the ones the questions were checked against (after reading
    every question against them again); the number of digests written."""
    from glossary.loader import load_corpus

    path = path or DATA
    data = json.loads(path.read_text("utf-8"))
    data["checked"] = sorted(set(paragraph_digests(load_corpus())))
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return len(data["checked"])


if __name__ == "__main__":  # python -m index.build.unanswered --write-checked
    import sys

    if sys.argv[1:] != ["--write-checked"]:
        sys.exit("usage: python -m index.build.unanswered --write-checked  (after checking every question again)")
    print(f"{DATA.name}: {write_checked()} paragraph digests recorded as checked")
