"""Word evidence as numpy arrays: per-paragraph BM25 and per-entry field matches, without a Python loop per document.

Whoosh stays the index of record: it analyses the text, stores the fields and holds the
postings. Scoring through Whoosh's searcher, though, walks every matching document in
Python (98% of search time, growing with the corpus). So once per build the postings are
copied into term-major arrays (CSR: for each term, the entries or paragraphs holding it and
how often) and saved beside the Whoosh files; a query then adds one precomputed slice per
query word into a score array.

Entry-level fields (title, aliases, section path, whole body) come from Whoosh's postings.
The answer is a paragraph, which Whoosh does not index on its own, so each paragraph is run
through the same analyzer (``STEMMED``) at build time to give paragraph postings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from whoosh.index import Index

from glossary.model import Corpus
from index.text import bm25
from index.text.analysis import STEMMED

FILE = "lexical.npz"
VERSION = 1  # bump when the arrays' layout or meaning changes (part of the index fingerprint)
ENTRY_FIELDS = ("title", "aliases", "section", "body")


class Unreadable(Exception):
    """The arrays of a build are missing or damaged (the build is then redone)."""


def units(corpus: Corpus) -> tuple[np.ndarray, np.ndarray]:
    """The answer units: (entry index, paragraph index) per paragraph, corpus order; -1 for a text-less entry.

    An entry without paragraphs (a bare heading) still gets one unit, so its title can be found.
    """
    ent: list[int] = []
    par: list[int] = []
    for n, e in enumerate(corpus.entries):
        if e.paragraphs:
            ent.extend([n] * len(e.paragraphs))
            par.extend(range(len(e.paragraphs)))
        else:
            ent.append(n)
            par.append(-1)
    return np.asarray(ent, dtype=np.int32), np.asarray(par, dtype=np.int32)


def _text(term: str | bytes) -> str:
    return term.decode("utf-8") if isinstance(term, bytes) else term


def _csr(postings: dict[str, list[tuple[int, float]]], terms: list[str]) -> tuple[np.ndarray, ...]:
    """Term-major arrays over ``terms`` (terms absent from ``postings`` get empty slices)."""
    ptr = np.zeros(len(terms) + 1, dtype=np.int64)
    docs: list[int] = []
    tfs: list[float] = []
    for i, term in enumerate(terms):
        rows = sorted(postings.get(term, ()))
        docs.extend(d for d, _w in rows)
        tfs.extend(w for _d, w in rows)
        ptr[i + 1] = len(docs)
    return ptr, np.asarray(docs, dtype=np.int32), np.asarray(tfs, dtype=np.float32)


def compute(ix: Index, corpus: Corpus) -> dict[str, np.ndarray]:
    """All arrays for one build: entry fields from Whoosh's postings, paragraphs through the analyzer."""
    position = {e.id: n for n, e in enumerate(corpus.entries)}
    field_postings: dict[str, dict[str, list[tuple[int, float]]]] = {f: {} for f in ENTRY_FIELDS}
    lengths = {f: np.zeros(len(corpus.entries), dtype=np.float32) for f in ENTRY_FIELDS}
    with ix.searcher() as s:
        reader = s.reader()
        entry_of = {}
        for docnum, stored in reader.iter_docs():
            n = position.get(stored.get("id", ""))
            if n is not None:
                entry_of[docnum] = n
                for f in ENTRY_FIELDS:
                    lengths[f][n] = reader.doc_field_length(docnum, f, 0)
        for f in ENTRY_FIELDS:
            for raw in reader.lexicon(f):
                term = _text(raw)
                m = reader.postings(f, raw)
                rows = []
                while m.is_active():
                    n = entry_of.get(m.id())
                    if n is not None:
                        rows.append((n, float(m.weight())))
                    m.next()
                field_postings[f][term] = rows
    unit_entry, unit_para = units(corpus)
    para_postings: dict[str, list[tuple[int, float]]] = {}
    unit_len = np.zeros(len(unit_entry), dtype=np.float32)
    for u, (n, p) in enumerate(zip(unit_entry.tolist(), unit_para.tolist(), strict=True)):
        if p < 0:
            continue
        counts = Counter(t.text for t in STEMMED(corpus.entries[n].paragraphs[p]))
        unit_len[u] = sum(counts.values())
        for term, tf in counts.items():
            para_postings.setdefault(term, []).append((u, float(tf)))
    terms = sorted(set(para_postings).union(*(set(p) for p in field_postings.values())))
    out: dict[str, np.ndarray] = {
        "version": np.asarray([VERSION]),
        "terms": np.asarray(terms, dtype=str),
        "unit_entry": unit_entry,
        "unit_para": unit_para,
        "unit_len": unit_len,
    }
    for f in ENTRY_FIELDS:
        out[f"{f}_ptr"], out[f"{f}_doc"], out[f"{f}_tf"] = _csr(field_postings[f], terms)
        out[f"{f}_len"] = lengths[f]
    out["para_ptr"], out["para_doc"], out["para_tf"] = _csr(para_postings, terms)
    return out


def write(arrays: dict[str, np.ndarray], folder: Path) -> None:
    np.savez(folder / FILE, **arrays)


def read(folder: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(folder / FILE, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, KeyError) as exc:
        raise Unreadable(f"{FILE}: {exc}") from None
    if int(arrays.get("version", np.asarray([0]))[0]) != VERSION:
        raise Unreadable(f"{FILE}: layout version differs")
    return arrays


def _idf(df: np.ndarray, n: int) -> np.ndarray:
    return bm25.idf(df, n).astype(np.float32)


def _saturate(tf: np.ndarray, length: np.ndarray) -> np.ndarray:
    """BM25's term-frequency part for each posting, given the length of the posting's document."""
    avg = float(length.mean()) if len(length) and length.mean() > 0 else 1.0
    return bm25.saturate(tf, length, avg).astype(np.float32)


@dataclass
class Components:
    """One question's word evidence: per paragraph, and per entry (title, aliases, section, whole body)."""

    para: np.ndarray  # per unit: BM25 of the paragraph
    body: np.ndarray  # per entry: BM25 of the whole entry text (context for each of its paragraphs)
    title: np.ndarray  # per entry: rarity-weighted share of the title the question covers
    section: np.ndarray  # per entry: idf of question words in its section path
    matched: int  # how many distinct query terms occur anywhere
    para_own: np.ndarray | None = None  # per unit: the part of ``para`` from words of its own entry's title/aliases


class Lexical:
    """The arrays of one build, with the precomputed BM25 parts; ``score`` is a handful of numpy ops per term."""

    def __init__(self, arrays: dict[str, np.ndarray], n_entries: int) -> None:
        try:
            self.term_id = {t: i for i, t in enumerate(arrays["terms"].tolist())}
            self.unit_entry = arrays["unit_entry"]
            self.unit_para = arrays["unit_para"]
            self.n_entries = n_entries
            self.n_units = len(self.unit_entry)
            # first unit of each entry (units are grouped by entry in corpus order): for per-entry reductions
            self.entry_starts = np.flatnonzero(np.r_[True, self.unit_entry[1:] != self.unit_entry[:-1]])
            if self.n_units and int(self.unit_entry.max()) >= n_entries:
                raise Unreadable("paragraph table does not match the corpus")
            self.ptr = {f: arrays[f"{f}_ptr"] for f in (*ENTRY_FIELDS, "para")}
            self.doc = {f: arrays[f"{f}_doc"] for f in (*ENTRY_FIELDS, "para")}
            df_units = np.diff(self.ptr["para"]).astype(np.float32)
            df_body = np.diff(self.ptr["body"]).astype(np.float32)
            # How common a word is, counted over paragraphs: the one rarity used for paragraphs and titles alike.
            self.idf = _idf(df_units, max(1, self.n_units))
            # terms in some entry's title or aliases: only their paragraph matches can be an entry's own title's
            self.titled = (np.diff(self.ptr["title"]) + np.diff(self.ptr["aliases"])) > 0
            self.idf_body = _idf(df_body, max(1, n_entries))
            self.para_val = _saturate(arrays["para_tf"], arrays["unit_len"][arrays["para_doc"]])
            self.body_val = _saturate(arrays["body_tf"], arrays["body_len"][arrays["body_doc"]])
            # Title "mass": the summed rarity of an entry's title words, so a match can say which share it covers.
            self.title_mass = np.zeros(n_entries, dtype=np.float32)
            self.alias_mass = np.zeros(n_entries, dtype=np.float32)
            for f, mass in (("title", self.title_mass), ("aliases", self.alias_mass)):
                per_posting = np.repeat(self.idf, np.diff(self.ptr[f]))
                np.add.at(mass, self.doc[f], per_posting)
        except KeyError as exc:
            raise Unreadable(f"{FILE}: missing {exc}") from None

    def terms_known(self, terms: dict[str, float]) -> dict[int, float]:
        return {self.term_id[t]: w for t, w in terms.items() if t in self.term_id}

    def score(self, terms: dict[str, float]) -> Components:
        """Word evidence for weighted stemmed query terms."""
        para = np.zeros(self.n_units, dtype=np.float32)
        para_own = np.zeros(self.n_units, dtype=np.float32)
        body = np.zeros(self.n_entries, dtype=np.float32)
        title = np.zeros(self.n_entries, dtype=np.float32)
        alias = np.zeros(self.n_entries, dtype=np.float32)
        section = np.zeros(self.n_entries, dtype=np.float32)
        matched = 0
        for t, w in self.terms_known(terms).items():
            idf = float(self.idf[t]) * w
            found = False
            a, b = self.ptr["para"][t], self.ptr["para"][t + 1]
            if b > a:
                units, gain = self.doc["para"][a:b], idf * self.para_val[a:b]
                para[units] += gain
                if self.titled[t]:
                    # Every paragraph of "Ranged Attack" says "ranged attack": in them, those are the title's words.
                    titled = [self.doc[f][self.ptr[f][t] : self.ptr[f][t + 1]] for f in ("title", "aliases")]
                    entries = self.unit_entry[units]
                    named = np.concatenate(titled)
                    if len(named) <= 8:
                        own = (entries[:, None] == named).any(axis=1)
                    else:  # a word in many titles: mark the entries once (``np.isin`` sorts both sides each time)
                        mark = np.zeros(self.n_entries, dtype=bool)
                        mark[named] = True
                        own = mark[entries]
                    para_own[units] += gain * own
                found = True
            a, b = self.ptr["body"][t], self.ptr["body"][t + 1]
            if b > a:
                body[self.doc["body"][a:b]] += float(self.idf_body[t]) * w * self.body_val[a:b]
                found = True
            for f, acc in (("title", title), ("aliases", alias), ("section", section)):
                a, b = self.ptr[f][t], self.ptr[f][t + 1]
                if b > a:
                    acc[self.doc[f][a:b]] += idf
                    found = True
            matched += found
        # Share of the title's rarity the question covers, times the rarity matched: "cards" covers little of
        # "Banned Cards" and is common anyway; "terrain" covers all of "Terrain" and is rare.
        with np.errstate(divide="ignore", invalid="ignore"):
            t_score = np.where(self.title_mass > 0, title * title / self.title_mass, 0.0)
            a_score = np.where(self.alias_mass > 0, alias * alias / self.alias_mass, 0.0)
        title_score = np.maximum(t_score, a_score).astype(np.float32)
        return Components(para, body, title_score, section, matched, para_own)
