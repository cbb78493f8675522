"""Questions players ask, kept per paragraph: a second road from a player's question to the rule.

A rule paragraph and the question it answers rarely share words, or even a way of saying
things: the glossary defines "Remove from the game", the player asks where an exiled card
goes. A sentence model compares two questions far better than a question with a definition.
So for every
paragraph of the shipped sources a few questions in players' words were written down
(``asked.json``, written from the rules alone, never from the evaluation questions); reviewed pairs are folded in
later (``index.build.fold``: judges' confirmed pairs, and blind sets once they had been read), each such record
naming the file it came from. They are
embedded at build time like the paragraphs, and a paragraph's meaning evidence also counts how
close the player's question comes to the questions that paragraph answers (``ranking``).

Each record is keyed by entry id and a digest of the paragraph's text as it was when the
questions were written. A paragraph whose text has changed since loses its questions (they may
no longer be answered by it) instead of keeping them silently; pages added later have none and
rank by their own text as before. A malformed record is reported with the file and record
number (``check``), and a malformed file is left out with one log line: the rules still answer.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from glossary.model import Corpus
from index.build.lexical import units

log = logging.getLogger("index")

DATA = Path(__file__).resolve().parent.parent / "asked.json"
DIGEST_CHARS = 16


class AskedError(ValueError):
    """The questions file is malformed (the message names the file and the record)."""


def digest(text: str) -> str:
    """The paragraph-text digest a record is keyed by (hex sha256, shortened)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


@dataclass(frozen=True)
class Asked:
    """The questions that apply to one corpus, grouped by the unit (paragraph) they belong to, in unit order."""

    texts: tuple[str, ...]
    owner: np.ndarray  # unit index per question, non-decreasing
    stale: int = 0  # records whose paragraph text changed (or whose entry is gone): not used

    @functools.cached_property
    def starts(self) -> np.ndarray:
        """First question of each owning unit (for ``np.maximum.reduceat``); worked out once per build."""
        if not len(self.owner):
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(np.r_[True, self.owner[1:] != self.owner[:-1]])

    @functools.cached_property
    def units(self) -> np.ndarray:
        """The distinct owning units, parallel to ``starts``."""
        return self.owner[self.starts] if len(self.owner) else np.zeros(0, dtype=np.int64)


NONE = Asked((), np.zeros(0, dtype=np.int64))


def read(path: Path | None = None) -> dict[tuple[str, str], tuple[str, ...]]:
    """The records of a questions file (default ``DATA``), keyed by (entry id, paragraph digest); {} when
    there is no file."""
    path = path or DATA
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AskedError(f"{path.name}: not JSON ({exc})") from None
    return check(data, path.name)


def check(data: object, name: str = "asked.json") -> dict[tuple[str, str], tuple[str, ...]]:
    """Validate the file's records: a list of {entry, paragraph, digest, questions: [str, ...]}."""
    if not isinstance(data, list):
        raise AskedError(f"{name}: expected a list of records")
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for n, rec in enumerate(data, 1):
        where = f"{name}: record {n}"
        if not isinstance(rec, dict):
            raise AskedError(f"{where}: not an object")
        entry, dig, questions = rec.get("entry"), rec.get("digest"), rec.get("questions")
        if not isinstance(entry, str) or not entry:
            raise AskedError(f"{where}: no entry id")
        if not isinstance(dig, str) or len(dig) != DIGEST_CHARS:
            raise AskedError(f"{where} ({entry}): no {DIGEST_CHARS}-character digest")
        if not isinstance(questions, list) or not all(isinstance(q, str) and q.strip() for q in questions):
            raise AskedError(f"{where} ({entry}): questions must be a list of non-empty strings")
        key = (entry, dig)
        out[key] = out.get(key, ()) + tuple(" ".join(q.split()) for q in questions)
    return out


def for_corpus(corpus: Corpus, records: dict[tuple[str, str], tuple[str, ...]]) -> Asked:
    """The questions whose paragraph is in ``corpus`` with the same text, grouped by unit."""
    if not records:
        return NONE
    ent, par = units(corpus)
    texts: list[str] = []
    owner: list[int] = []
    used = 0
    for u, (n, p) in enumerate(zip(ent.tolist(), par.tolist(), strict=True)):
        entry = corpus.entries[n]
        found = records.get((entry.id, digest(entry.paragraphs[p] if p >= 0 else "")))
        if found:
            used += 1
            texts.extend(found)
            owner.extend([u] * len(found))
    stale = len(records) - used
    if stale > 0:
        log.info("%d paragraph(s) of the questions file no longer match their text; their questions are unused", stale)
    return Asked(tuple(texts), np.asarray(owner, dtype=np.int64), max(0, stale))


def fingerprint(path: Path | None = None) -> str:
    """What the build fingerprint must cover: the file's bytes (a changed file rebuilds the index)."""
    try:
        return hashlib.sha256((path or DATA).read_bytes()).hexdigest()
    except FileNotFoundError:
        return "none"


def closest(scores: np.ndarray, asked: Asked, n_units: int) -> np.ndarray:
    """Per unit, the best score among its questions (``scores`` is one per question); -1 for units with none."""
    out = np.full(n_units, -1.0, dtype=np.float32)
    if len(asked.owner):
        out[asked.units] = np.maximum.reduceat(scores, asked.starts)
    return out


def shipped(corpus: Corpus, path: Path | None = None) -> Asked:
    """The shipped questions that apply to ``corpus``; a malformed file logs one line and is left out."""
    try:
        records = read(path)
    except AskedError as exc:
        log.warning("%s; ranking without the kept questions", exc)
        return NONE
    return for_corpus(corpus, records)
