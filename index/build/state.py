"""Everything one index build serves from, computed once when the build is opened.

A query grabs one ``State`` and uses only it, so a reload that publishes a new one
never mixes two builds inside an answer. The tables here are the per-build work that
would otherwise be repeated on every keystroke: folded names, autocomplete keys,
section keys and their stems, banned names, the sorted change history, term idf.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from whoosh.searching import Searcher

from glossary.model import Corpus, Entry, clip
from glossary.versions import without_subtitle
from index.build import asked, lexical, relations, store, unanswered, vectors
from index.build.progress import ARRAYS, Progress, silent
from index.results import ChangeRecord
from index.text.analysis import STEMMED, STOPS, compact, fold, stem
from index.text.embedding import Embedder
from index.text.english import is_word
from index.text.scan import Scan

log = logging.getLogger("index")

# Fields a query term is scored in, with their weight (section headings count for less).
FIELD_BOOSTS = {"body": 1.0, "title": 1.0, "aliases": 1.0, "section": 0.4}
# Which kind of entry answers "what is X" when several share a name: definitions before mentions.
KIND_PRIORITY = {
    "term": 0,
    "cardinal-rule": 1,
    "ability": 1,
    "section": 2,
    "guideline": 3,
    "ruling": 3,
    "banned": 4,
    "update": 5,
}
SECTION_KINDS = ("section", "cardinal-rule", "guideline")
ROMAN = re.compile(r"^\s*([IVXLC]+)\s*[.)]\s+", re.IGNORECASE)
_LETTER = re.compile(r"^\s*([A-Z])\s*[.)]\s+")
_LOWER_WORD = re.compile(r"(?<![\w'’-])[a-z]+(?![\w'’-])")  # a word written in lower case
CODE = re.compile(r"^[IVXLC]+(?:\.[A-Z])?$")  # a section number: "II", "II.F"

CompleteKey = tuple[str, int, int, str]  # (word-start suffix of a name, 0 = name start / 1 = inner word, order, id)


def strip_numbering(text: str) -> str:
    """Drop heading numbers: 'II. THE PLAYER – F. Deck Constructions' -> 'Deck Constructions'."""
    last = re.split(r"(?<!\s)\s++[–—-]\s++", text)[-1]  # a whitespace run is read once, from its start
    return _LETTER.sub("", ROMAN.sub("", last))


def _suffix_keys(key: str, order: int, entry_id: str) -> list[CompleteKey]:
    """Every word start of a name, so "paradox" completes "Targeting paradoxes" (ranked after name starts)."""
    words = key.split()
    return [(" ".join(words[i:]), 0 if i == 0 else 1, order, entry_id) for i in range(len(words))]


@dataclass
class Completer:
    """Sorted autocomplete keys plus what is shown for each entry; built once per state."""

    keys: list[CompleteKey]
    display: dict[str, str]  # id -> shown name (<= 100 chars)
    folded: dict[str, str] = field(init=False)  # id -> folded shown name (typo-tolerant pass)
    folded_ids: list[str] = field(init=False)  # the same, as parallel lists for rapidfuzz's batch scoring
    folded_names: list[str] = field(init=False)
    default: list[str] = field(init=False)  # ids offered for an empty prefix, in corpus order

    def __post_init__(self) -> None:
        self.keys.sort()
        self.folded = {eid: fold(name) for eid, name in self.display.items()}
        self.folded_ids = list(self.folded)
        self.folded_names = list(self.folded.values())
        starts = {eid: order for _k, rank, order, eid in self.keys if rank == 0}
        self.default = sorted(starts, key=starts.__getitem__)


@dataclass
class Section:
    """One key a section is known by, with its stems precomputed for "all ref words covered" matching."""

    key: str
    stems: frozenset[str]
    ids: list[str]


@dataclass
class State:
    """Everything one build serves from. Read-only once published, except the lazily filled token caches."""

    corpus: Corpus
    searcher: Searcher
    meta: dict[str, Any]
    index_path: Path | None
    rebuilt: bool  # this state's index was (re)built rather than reopened
    failed: bool = False  # a query raised inside this build's index (it was rebuilt once, or could not be)
    recovered: bool = False  # this build replaced one whose query failed: it is never rebuilt for that again
    lock: threading.Lock = field(default_factory=threading.Lock)  # a Whoosh searcher is not thread-safe
    by_id: dict[str, Entry] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)  # docnum -> entry id
    vocab: set[str] = field(default_factory=set)  # stemmed terms in any scored field
    words: list[str] = field(default_factory=list)  # unstemmed vocabulary (typo correction)
    words_set: set[str] = field(default_factory=set)
    idf: dict[str, float] = field(default_factory=dict)
    exact: dict[str, dict[str, int]] = field(default_factory=dict)  # folded/compact name -> {id: 0 title, 1 alias}
    stemmed: dict[str, list[str]] = field(default_factory=dict)  # stemmed name -> ids
    name_keys: list[str] = field(default_factory=list)  # sorted folded names (prefix and fuzzy lookups)
    name_ids: list[list[str]] = field(default_factory=list)  # parallel to name_keys, in corpus order
    importance: dict[str, float] = field(default_factory=dict)
    names: Completer = field(default_factory=lambda: Completer([], {}))
    section_keys: dict[str, list[str]] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)
    section_names: Completer = field(default_factory=lambda: Completer([], {}))
    banned_names: list[str] = field(default_factory=list)
    banned_ids: list[str] = field(default_factory=list)  # parallel to banned_names
    # stems of the words the rules use as words, not names: written in lower case in any text, or in the title of
    # an entry that is not a banned card ("second", "experienced", "personalities"); ``ban_question`` reads a
    # phrase made of these alone as a situation, not a card's name
    rule_words: frozenset[str] = frozenset()
    # stems of the banned names' proper names, words that are not plain English ("nanashi", "koan"): a name asked
    # about that holds one is that card spelt another way (``ban_question``)
    banned_proper: frozenset[str] = frozenset()
    changes: list[ChangeRecord] = field(default_factory=list)  # newest first
    # YYYY-MM-DD -> the update-log records dated that day, corpus order: a day a question names names them
    # (``ranking._dated``)
    records_on: dict[str, tuple[int, ...]] = field(default_factory=dict)
    para_tokens: dict[str, list[list[tuple[str, int, int]]]] = field(default_factory=dict)
    one_para_tokens: dict[tuple[str, int], list[tuple[str, int, int]]] = field(default_factory=dict)
    lex: lexical.Lexical | None = None  # word evidence as arrays (see index/build/lexical.py)
    embedder: Embedder | None = None  # None: the model is off or failed to load; ranking by words only
    vectors: np.ndarray | None = None  # one unit vector per paragraph (lexical.units order)
    question_vectors: np.ndarray | None = None  # one vector per kept player question (``index.build.asked``)
    # ``vectors`` then ``question_vectors`` as the one C-contiguous float32 matrix they are views of: a question
    # is scanned against both with one matrix-vector product (``ranking.evidence``)
    all_vectors: np.ndarray | None = None
    scan: Scan | None = None  # cosines of a question with every row of ``all_vectors`` (``index.text.scan``)
    questions: asked.Asked = asked.NONE  # the kept questions, grouped by paragraph
    # questions kept as not covered by the sources (``index.build.unanswered``) that still hold, and their vectors
    unanswered: tuple[str, ...] = ()
    unanswered_vectors: np.ndarray | None = None
    # one vector per sentence of a paragraph of two or more (``vectors.sentences``), and where a paragraph's are:
    # (entry id, paragraph) -> (first row, its sentences' spans). Read only for the paragraphs a hit quotes.
    sentence_vectors: np.ndarray | None = None
    sentence_rows: dict[tuple[str, int], tuple[int, tuple[tuple[int, int], ...]]] = field(default_factory=dict)
    entry_source: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=str))  # per entry, corpus order
    entry_latest: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=str))  # latest change date or ""
    scopes: relations.Scopes = field(default_factory=dict)  # (rule id, entry id) -> the paragraphs it concerns

    def paragraph_tokens(self, entry: Entry) -> list[list[tuple[str, int, int]]]:
        """Analyzed paragraphs of an entry (stem, start, end), computed on first use and kept.

        Lazy because most entries are never shown; two threads filling the same key store equal values.
        """
        cached = self.para_tokens.get(entry.id)
        if cached is None:
            cached = [[(t.text, t.startchar, t.endchar) for t in STEMMED(p, chars=True)] for p in entry.paragraphs]
            self.para_tokens[entry.id] = cached
        return cached

    def paragraph_tokens_at(self, entry: Entry, n: int) -> list[tuple[str, int, int]]:
        """One analyzed paragraph (stem, start, end), computed on first use and kept.

        A search hit quotes one paragraph, chosen by the ranking: analysing only that one keeps the first
        showing of an entry with twenty paragraphs from costing twenty.
        """
        whole = self.para_tokens.get(entry.id)
        if whole is not None:
            return whole[n]
        cached = self.one_para_tokens.get((entry.id, n))
        if cached is None:
            cached = [(t.text, t.startchar, t.endchar) for t in STEMMED(entry.paragraphs[n], chars=True)]
            self.one_para_tokens[(entry.id, n)] = cached
        return cached

    def close(self) -> None:
        """Close the searcher, waiting for a query that is using it; never raises."""
        try:
            with self.lock:
                self.searcher.close()
        except Exception:  # pragma: no cover - closing must never take the bot down
            log.debug("closing a searcher failed", exc_info=True)


def write_arrays(
    ix: Any,
    folder: Path,
    corpus: Corpus,
    embedder: Embedder | None,
    cache_dir: Path | None,
    progress: Progress = silent,
) -> None:
    """The build hook (``store.build(extra=...)``): search arrays and paragraph vectors into the build folder."""
    progress(ARRAYS, 0, 1)
    lexical.write(lexical.compute(ix, corpus), folder)
    progress(ARRAYS, 1, 1)
    if embedder is not None:
        found = vectors.sentences(corpus)
        vecs = vectors.compute(
            corpus, embedder, cache_dir, asked.shipped(corpus), progress, unanswered.shipped().texts, found
        )
        vectors.write(folder, vecs, embedder)
        vectors.write_sentences(folder, found)


def build_state(
    corpus: Corpus,
    opened: store.Opened,
    rebuilt: bool,
    embedder: Embedder | None = None,
    cache_dir: Path | None = None,
    progress: Progress = silent,
) -> State:
    """Open a searcher on ``opened`` and derive every lookup table from it and the corpus.

    A build on disk must hold its arrays (else ``lexical.Unreadable``: the caller rebuilds); an in-memory
    build gets them computed here.
    """
    arrays = lexical.read(opened.path) if opened.path is not None else lexical.compute(opened.index, corpus)
    lex = lexical.Lexical(arrays, len(corpus.entries))
    vecs = None
    kept = asked.NONE
    unasked = unanswered.NONE
    found: vectors.Sentences = []
    if embedder is not None:
        kept, unasked = asked.shipped(corpus), unanswered.shipped()
        if opened.path is not None:
            found = vectors.read_sentences(opened.path, corpus)
            count = lex.n_units + len(kept.texts) + len(unasked.texts) + sum(len(s) for _n, _p, s in found)
            vecs = vectors.read(opened.path, embedder, count)
        else:
            found = vectors.sentences(corpus)
            vecs = vectors.compute(corpus, embedder, cache_dir, kept, progress, unasked.texts, found)
    searcher = opened.index.searcher()
    reader = searcher.reader()
    st = State(corpus=corpus, searcher=searcher, meta=dict(opened.meta), index_path=opened.path, rebuilt=rebuilt)
    st.lex, st.embedder = lex, embedder
    if vecs is not None:
        scanned = lex.n_units + len(kept.texts)  # paragraphs and kept questions: one scan; the rest apart
        vecs, rest = np.ascontiguousarray(vecs[:scanned], dtype=np.float32), vecs[scanned:]
        st.all_vectors = vecs
        st.scan = Scan(vecs)
        st.vectors, st.question_vectors, st.questions = vecs[: lex.n_units], vecs[lex.n_units :], kept
        rest, on_sentences = rest[: len(unasked.texts)], rest[len(unasked.texts) :]
        live = unanswered.usable(unasked, corpus, st.vectors, rest)
        st.unanswered_vectors = np.ascontiguousarray(rest[live], dtype=np.float32)
        st.unanswered = tuple(t for t, ok in zip(unasked.texts, live.tolist(), strict=True) if ok)
        st.sentence_vectors = np.ascontiguousarray(on_sentences, dtype=np.float32)
        st.sentence_rows = _sentence_rows(corpus, found)
    st.by_id = corpus.by_id()
    st.order = {e.id: n for n, e in enumerate(corpus.entries)}
    st.ids = [e.id for e in corpus.entries]
    st.entry_source = np.asarray([e.source for e in corpus.entries], dtype=str)
    st.entry_latest = np.asarray([_latest(e) for e in corpus.entries], dtype=str)
    terms = arrays["terms"].tolist()
    st.vocab = set(terms)
    st.words = sorted(_text(t) for t in reader.lexicon("words"))
    st.words_set = set(st.words)
    st.idf = dict(zip(terms, lex.idf_body.tolist(), strict=True))
    _build_names(st)
    _build_sections(st)
    _build_banned(st)
    _build_changes(st)
    st.scopes = relations.compute(corpus, st.vectors, (lex.unit_entry, lex.unit_para))
    return st


def _sentence_rows(
    corpus: Corpus, found: vectors.Sentences
) -> dict[tuple[str, int], tuple[int, tuple[tuple[int, int], ...]]]:
    """Where each paragraph's sentence vectors start, with its sentences' spans (``State.sentence_rows``)."""
    rows, at = {}, 0
    for n, p, spans in found:
        rows[(corpus.entries[n].id, p)] = (at, tuple(spans))
        at += len(spans)
    return rows


def _latest(e: Entry) -> str:
    dates = [d for d in (store.effective_date(c) for c in e.changes) if d]
    return max(dates) if dates else ""


def _text(term: str | bytes) -> str:
    return term.decode("utf-8") if isinstance(term, bytes) else term


def _build_names(st: State) -> None:
    entries = st.corpus.entries
    body_df = _body_df(st)
    keys: dict[str, set[str]] = {}
    complete: list[CompleteKey] = []
    display: dict[str, str] = {}
    for n, e in enumerate(entries):
        names = [(v, 0) for v in store.name_variants(e.title)]
        names += [(v, 1) for a in e.aliases for v in store.name_variants(a)]
        for key, how in names:
            for k in (key, key.replace(" ", "")):
                found = st.exact.setdefault(k, {})
                found[e.id] = min(found.get(e.id, how), how)
            keys.setdefault(key, set()).add(e.id)
            st.stemmed.setdefault(" ".join(stem(w) for w in key.split()), []).append(e.id)
            complete += _suffix_keys(key, n, e.id)
        # importance: how often the entry's name words occur across the corpus (a general popularity prior)
        stems = [stem(w) for w in fold(e.title).split() if w not in STOPS]
        st.importance[e.id] = sum(body_df.get(s, 0) for s in stems) / max(1, len(stems))
        display[e.id] = _display(e)
    for k, ids in st.stemmed.items():
        st.stemmed[k] = list(dict.fromkeys(ids))
    st.name_keys = sorted(keys)
    st.name_ids = [sorted(keys[k], key=st.order.__getitem__) for k in st.name_keys]
    st.names = Completer(complete, display)


def _body_df(st: State) -> dict[str, int]:
    """How many entries use each word stem in their text: the index's own document frequency of the body field
    (the same counts as stemming every folded word of every entry, on the shipped corpus, without reading every
    text again: that took about a second at 100 times its size)."""
    lex = st.lex
    assert lex is not None  # ``build_state`` sets it before the name tables
    df = np.diff(lex.ptr["body"])
    return {term: int(df[i]) for term, i in lex.term_id.items() if df[i]}


def _display(e: Entry) -> str:
    """Name shown in autocomplete: the entry's label (its title, told apart from same-titled entries)."""
    if e.kind == "banned":
        return clip(f"{e.title} (banned {e.group})" if e.group else f"{e.title} (banned)")
    return clip(e.label)


def _build_sections(st: State) -> None:
    complete: list[CompleteKey] = []
    display: dict[str, str] = {}
    for n, e in enumerate(st.corpus.entries):
        if e.kind not in SECTION_KINDS:
            continue
        plain = strip_numbering(e.title)
        codes = [a for a in e.aliases if CODE.match(a)]
        m = ROMAN.match(e.title)
        if m and not codes:
            codes.append(m.group(1).upper())
        keys = {fold(e.title), fold(plain), *store.name_variants(plain)}
        keys.update(fold(a) for a in e.aliases)
        keys.update(compact(c) for c in codes)
        keys.discard("")
        for k in keys:
            st.section_keys.setdefault(k, []).append(e.id)
            complete += _suffix_keys(k, n, e.id)
        cardinal = plain.lower().startswith("cardinal")
        shown = f"{codes[0]} {plain}" if codes and not cardinal else plain
        # Unnumbered headings say where they live ("Deck Construction (Initial Guidelines)").
        parent = next((p for p in reversed(e.section) if p != e.title), "")
        if parent and (e.kind == "guideline" or (not codes and len(e.section) > 1 and not cardinal)):
            shown = f"{plain} ({strip_numbering(parent)})"
        display[e.id] = clip(shown.title() if shown.isupper() else shown)
    st.sections = [Section(k, frozenset(stem(w) for w in k.split()), ids) for k, ids in st.section_keys.items()]
    st.section_names = Completer(complete, display)


def _build_banned(st: State) -> None:
    rule_words: set[str] = set()
    for e in st.corpus.entries:
        rule_words.update(stem(w) for p in e.paragraphs for w in _LOWER_WORD.findall(p))
        if e.kind not in ("banned", "update"):
            rule_words.update(stem(w) for w in fold(e.title).split())
    st.rule_words = frozenset(rule_words)
    for e in st.corpus.entries:
        if e.kind != "banned":
            continue
        # a listed version is also named without its subtitle ("Isawa Tadaka Experienced 2CW"), as players name it
        unsubtitled = without_subtitle(e.title)
        for name in [e.title, *e.aliases, *([unsubtitled] if unsubtitled else [])]:
            for v in store.name_variants(name):
                st.banned_names.append(v)
                st.banned_ids.append(e.id)
    st.banned_proper = frozenset(
        stem(w) for name in st.banned_names for w in name.split() if w not in STOPS and not is_word(w)
    )


def _build_changes(st: State) -> None:
    """All change records, newest first; undated ones last; ties in reverse corpus order."""

    def key(r: ChangeRecord) -> tuple[int, str, int]:
        d = store.effective_date(r.change)
        return (1 if d else 0, d or "", -st.order[r.entry.id])

    st.changes = sorted((ChangeRecord(c, e) for e in st.corpus.entries for c in e.changes), key=key, reverse=True)
    days: dict[str, list[int]] = {}
    for n, e in enumerate(st.corpus.entries):
        if e.kind == "update":
            for day in dict.fromkeys(c.date for c in e.changes if c.date):
                days.setdefault(day, []).append(n)
    st.records_on = {day: tuple(ns) for day, ns in days.items()}
