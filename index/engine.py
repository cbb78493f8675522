"""The judge's search engine: define, complete, search, section, changes, banned over one corpus.

Entries stay in memory (the corpus is loaded anyway, and answers quote them verbatim);
Whoosh ranks them. Name lookups (define, complete, banned, section) run over in-memory
tables; free-text questions go to Whoosh with a query built from our own tokens, so no
user text ever reaches a query parser. All per-build state lives in one ``_State`` object
that ``reload`` replaces atomically; a query grabs a reference once and keeps using it.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, process
from rapidfuzz.distance import JaroWinkler, Levenshtein
from whoosh import query as wq
from whoosh.searching import Searcher

from glossary.model import SOURCE_LABELS, Corpus, Entry
from index import store
from index.analysis import STEMMED, STOPS, WORDS, compact, fold, stem
from index.results import BannedResult, ChangeRecord, DefineResult, Hit

log = logging.getLogger("index")

OR_SCALE = 0.9  # coordination bonus, as qparser.OrGroup.factory(0.9) would build
SMALL_INDEX = 1000  # below this many documents, per-term unions beat Whoosh's preloaded arrays
MAX_QUERY_WORDS = 48  # a 5,000-character paste is cut to its first words, not searched whole
FIELD_BOOSTS = {"body": 1.0, "title": 1.0, "aliases": 1.0, "section": 0.4}
EXACT_BOOST = 4.0
PAIR_BOOST = 0.8
FUZZY_WEIGHT = 0.7
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
_ROMAN = re.compile(r"^\s*([IVXLC]+)\s*[.)]\s+", re.IGNORECASE)
_LETTER = re.compile(r"^\s*([A-Z])\s*[.)]\s+")
_MD_SPECIAL = re.compile(r"([\\*_~`|>])")
_CODE = re.compile(r"^[IVXLC]+(?:\.[A-Z])?$")
_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def _clip(text: str, n: int = 100) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


@dataclass
class _Name:
    key: str  # folded name
    entry_id: str
    how: str  # "exact" (title) or "alias"


@dataclass
class _State:
    """Everything one build serves from; immutable once published."""

    corpus: Corpus
    by_id: dict[str, Entry]
    order: dict[str, int]
    searcher: Searcher
    ids: list[str]  # docnum -> entry id
    meta: dict[str, Any]
    index_path: Path | None
    lock: threading.Lock = field(default_factory=threading.Lock)
    vocab: set[str] = field(default_factory=set)  # stemmed terms in any scored field
    words: list[str] = field(default_factory=list)  # unstemmed vocabulary (typo correction)
    words_set: set[str] = field(default_factory=set)
    idf: dict[str, float] = field(default_factory=dict)
    exact: dict[str, list[_Name]] = field(default_factory=dict)  # folded or compact name -> entries
    stemmed: dict[str, list[str]] = field(default_factory=dict)  # stemmed name -> ids
    name_keys: list[str] = field(default_factory=list)  # sorted folded names (prefix lookups)
    name_ids: list[list[str]] = field(default_factory=list)
    complete_keys: list[tuple[str, int, int, str]] = field(default_factory=list)  # (key, rank, order, id)
    display: dict[str, str] = field(default_factory=dict)
    importance: dict[str, float] = field(default_factory=dict)
    section_keys: dict[str, list[str]] = field(default_factory=dict)
    section_complete: list[tuple[str, int, int, str]] = field(default_factory=list)
    section_display: dict[str, str] = field(default_factory=dict)
    banned_names: list[str] = field(default_factory=list)
    banned_ids: list[str] = field(default_factory=list)
    changes: list[ChangeRecord] = field(default_factory=list)
    para_tokens: dict[str, list[list[tuple[str, int, int]]]] = field(default_factory=dict)


def _strip_numbering(text: str) -> str:
    """Drop heading numbers: 'II. THE PLAYER – F. Deck Constructions' -> 'Deck Constructions'."""
    last = re.split(r"\s+[–—-]\s+", text)[-1]
    return _LETTER.sub("", _ROMAN.sub("", last))


class Engine:
    """Search engine over one corpus; see the module docstring. Thread-safe for readers."""

    def __init__(self, sources: list[Path] | None, index_dir: Path, corpus: Corpus | None = None) -> None:
        self.sources = sources
        self.index_dir = index_dir
        self._fixed_corpus = corpus
        self._swap_lock = threading.Lock()
        self._state: _State | None = None
        self._last_build_seconds: float | None = None
        self._rebuilt = False

    # ---------------------------------------------------------------- lifecycle
    @classmethod
    def open(cls, sources: list[Path] | None = None, index_dir: Path | None = None) -> Engine:
        """Load the corpus and open its index, building it if missing, stale or corrupt."""
        engine = cls(sources, Path(index_dir).expanduser() if index_dir else store.default_index_dir())
        engine._load(force=False)
        return engine

    @classmethod
    def from_corpus(cls, corpus: Corpus, index_dir: Path) -> Engine:
        """An engine over entries built in memory (tests, synthetic benchmark corpora), not read from files."""
        engine = cls(None, Path(index_dir), corpus)
        engine._load(force=False)
        return engine

    @property
    def corpus(self) -> Corpus:
        return self._st.corpus

    @property
    def _st(self) -> _State:
        st = self._state
        if st is None:  # pragma: no cover - open() always loads
            raise RuntimeError("engine not loaded")
        return st

    def reload(self) -> dict:
        """Re-read the sources and rebuild; the new index is swapped in only once complete."""
        self._load(force=True)
        return self.stats()

    def _files(self) -> list[Path]:
        from glossary.loader import default_sources, expand

        files, _ = expand(default_sources() if self.sources is None else [Path(p) for p in self.sources])
        return files

    def _load(self, force: bool) -> None:
        from glossary.loader import load_corpus

        if self._fixed_corpus is not None:
            corpus = self._fixed_corpus
            digest = store.corpus_digest(corpus)
            fp = "corpus:" + digest
        else:
            fp = store.fingerprint(self._files())
            corpus = load_corpus(self.sources)
            digest = store.corpus_digest(corpus)
        opened = None if force else store.open_current(self.index_dir, fp, digest)
        rebuilt = opened is None
        if opened is None:
            try:
                opened = store.build(corpus, self.index_dir, fp, digest)
            except store.BuildError as exc:
                log.error("%s; serving an in-memory index instead", exc)
                opened = store.build_in_memory(corpus, fp, digest)
        state = self._make_state(corpus, opened)
        with self._swap_lock:
            old, self._state = self._state, state
            self._rebuilt = rebuilt
        if old is not None:
            # Readers that grabbed the old state may still be mid-query; close it once they are done.
            timer = threading.Timer(30.0, _close_quietly, args=(old,))
            timer.daemon = True
            timer.start()

    def close(self) -> None:
        """Release the searcher (tests and short-lived CLIs)."""
        st = self._state
        if st is not None:
            _close_quietly(st)

    # ---------------------------------------------------------------- state
    def _make_state(self, corpus: Corpus, opened: store.Opened) -> _State:
        searcher = opened.index.searcher()
        reader = searcher.reader()
        ids = [""] * reader.doc_count_all()
        for docnum, fields in reader.iter_docs():
            ids[docnum] = fields.get("id", "")
        by_id = corpus.by_id()
        st = _State(
            corpus=corpus,
            by_id=by_id,
            order={e.id: n for n, e in enumerate(corpus.entries)},
            searcher=searcher,
            ids=ids,
            meta=dict(opened.meta),
            index_path=opened.path,
        )
        for fname in FIELD_BOOSTS:
            st.vocab.update(t.decode("utf-8") if isinstance(t, bytes) else t for t in reader.lexicon(fname))
        st.words = sorted(t.decode("utf-8") if isinstance(t, bytes) else t for t in reader.lexicon("words"))
        st.words_set = set(st.words)
        n_docs = max(1, reader.doc_count())
        for term in st.vocab:
            df = reader.doc_frequency("body", term)
            st.idf[term] = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
        self._build_names(st)
        self._build_sections(st)
        self._build_banned(st)
        self._build_changes(st)
        return st

    def _build_names(self, st: _State) -> None:
        title_counts = Counter(fold(e.title) for e in st.corpus.entries)
        body_df: Counter[str] = Counter()
        for e in st.corpus.entries:
            body_df.update(set(w for w in (stem(x) for x in fold(e.text).split())))
        keys: dict[str, set[str]] = {}
        complete: list[tuple[str, int, int, str]] = []
        for n, e in enumerate(st.corpus.entries):
            names = [(v, "exact") for v in store.name_variants(e.title)]
            names += [(v, "alias") for a in e.aliases for v in store.name_variants(a)]
            for key, how in names:
                for k in {key, key.replace(" ", "")}:
                    st.exact.setdefault(k, []).append(_Name(k, e.id, how))
                keys.setdefault(key, set()).add(e.id)
                st.stemmed.setdefault(" ".join(stem(w) for w in key.split()), []).append(e.id)
                words = key.split()
                for i in range(len(words)):
                    complete.append((" ".join(words[i:]), 0 if i == 0 else 1, n, e.id))
            # importance: how often the entry's name words occur across the corpus (a general popularity prior)
            stems = [stem(w) for w in fold(e.title).split() if w not in STOPS]
            st.importance[e.id] = sum(body_df.get(s, 0) for s in stems) / max(1, len(stems))
            st.display[e.id] = self._display(e, title_counts[fold(e.title)] > 1)
        for lst in st.exact.values():
            _dedupe_names(lst)
        for k in st.stemmed:
            st.stemmed[k] = list(dict.fromkeys(st.stemmed[k]))
        st.name_keys = sorted(keys)
        st.name_ids = [sorted(keys[k], key=st.order.__getitem__) for k in st.name_keys]
        complete.sort()
        st.complete_keys = complete

    @staticmethod
    def _display(e: Entry, duplicated: bool) -> str:
        """Name shown in autocomplete: the title, plus where it lives when the title alone is ambiguous."""
        if e.kind == "banned":
            return _clip(f"{e.title} (banned {e.group})" if e.group else f"{e.title} (banned)")
        if not duplicated:
            return _clip(e.title)
        if e.source == "glossary":
            context = "Glossary"
        else:
            context = e.group or next((p for p in reversed(e.section) if p != e.title), None) or ""
            context = _strip_numbering(context).strip().title() if context.isupper() else _strip_numbering(context)
        return _clip(f"{e.title} ({context})" if context else e.title)

    def _build_sections(self, st: _State) -> None:
        complete: list[tuple[str, int, int, str]] = []
        for n, e in enumerate(st.corpus.entries):
            if e.kind not in SECTION_KINDS:
                continue
            plain = _strip_numbering(e.title)
            codes = [a for a in e.aliases if _CODE.match(a)]
            m = _ROMAN.match(e.title)
            if m and not codes:
                codes.append(m.group(1).upper())
            keys = {fold(e.title), fold(plain), *store.name_variants(plain)}
            keys.update(fold(a) for a in e.aliases)
            keys.update(compact(c) for c in codes)
            for k in keys:
                if k:
                    st.section_keys.setdefault(k, []).append(e.id)
            display = f"{codes[0]} {plain}" if codes and not plain.lower().startswith("cardinal") else plain
            if e.kind == "guideline":
                display = f"{plain} (Initial Guidelines)"
            elif not codes and e.section and len(e.section) > 1:
                parent = next((p for p in reversed(e.section) if p != e.title), "")
                if parent and not plain.lower().startswith("cardinal"):
                    display = f"{plain} ({_strip_numbering(parent)})"
            st.section_display[e.id] = _clip(display.title() if display.isupper() else display)
            for k in keys:
                words = k.split()
                for i in range(len(words)):
                    complete.append((" ".join(words[i:]), 0 if i == 0 else 1, n, e.id))
        complete.sort()
        st.section_complete = complete

    def _build_banned(self, st: _State) -> None:
        for e in st.corpus.entries:
            if e.kind != "banned":
                continue
            for name in [e.title, *e.aliases]:
                for v in store.name_variants(name):
                    st.banned_names.append(v)
                    st.banned_ids.append(e.id)

    def _build_changes(self, st: _State) -> None:
        rows = [ChangeRecord(c, e) for e in st.corpus.entries for c in e.changes]

        def key(r: ChangeRecord) -> tuple[int, str, int]:
            d = store.effective_date(r.change)
            return (1 if d else 0, d or "", -st.order[r.entry.id])

        rows.sort(key=key, reverse=True)
        st.changes = rows

    # ---------------------------------------------------------------- lookups
    def get(self, entry_id: str) -> Entry | None:
        return self._st.by_id.get(entry_id)

    def _rank(self, st: _State, ids: Iterable[str], how: dict[str, int] | None = None) -> list[str]:
        """Definitions before mentions, titles before aliases, then the more widely referenced, then corpus order."""
        how = how or {}
        uniq = list(dict.fromkeys(ids))
        return sorted(uniq, key=lambda i: self._rank_key(st, i, how))

    @staticmethod
    def _rank_key(st: _State, i: str, how: dict[str, int]) -> tuple[int, int, float, int]:
        return (KIND_PRIORITY.get(st.by_id[i].kind, 9), how.get(i, 0), -st.importance.get(i, 0), st.order[i])

    def _confident(
        self, st: _State, ranked: list[str], how: str, limit: int, how_rank: dict[str, int] | None = None
    ) -> DefineResult:
        """One clear winner -> entry; a tie between equally good candidates -> None + candidates."""
        how_rank = how_rank or {}
        entries = [st.by_id[i] for i in ranked]
        if len(entries) == 1:
            return DefineResult(entries[0], [], how)
        ka = self._rank_key(st, entries[0].id, how_rank)
        kb = self._rank_key(st, entries[1].id, how_rank)
        tie = ka[:2] == kb[:2] and (
            how in ("exact", "alias") or st.importance.get(entries[0].id, 0) < 2 * st.importance.get(entries[1].id, 0)
        )
        if tie:
            return DefineResult(None, entries[:limit], how)
        return DefineResult(entries[0], entries[1:limit], how)

    def define(self, term: str, limit: int = 5) -> DefineResult:
        """Exact title/alias, then prefix, then plural/typo tolerant, then full text."""
        st = self._st
        key = fold(term or "")[:200]
        if not key:
            return DefineResult(None, [], "none")
        names = st.exact.get(key) or st.exact.get(key.replace(" ", ""))
        if names:
            how_rank: dict[str, int] = {}
            for n in names:
                how_rank[n.entry_id] = min(how_rank.get(n.entry_id, 1), 0 if n.how == "exact" else 1)
            ranked = self._rank(st, how_rank, how_rank)
            how = "exact" if how_rank[ranked[0]] == 0 else "alias"
            return self._confident(st, ranked, how, limit, how_rank)
        if len(key) >= 2:
            i = bisect.bisect_left(st.name_keys, key)
            found: list[str] = []
            while i < len(st.name_keys) and st.name_keys[i].startswith(key) and len(found) < 200:
                found.extend(st.name_ids[i])
                i += 1
            if found:
                return self._confident(st, self._rank(st, found), "prefix", limit)
        stem_key = " ".join(stem(w) for w in key.split())
        if stem_key in st.stemmed:
            return self._confident(st, self._rank(st, st.stemmed[stem_key]), "fuzzy", limit)
        fuzzy = self._fuzzy_names(st, key, limit)
        if fuzzy:
            return fuzzy
        hits = self.search(term, limit=limit)
        if not hits:
            return DefineResult(None, [], "none")
        if len(hits) == 1 or hits[0].score >= 1.5 * hits[1].score:
            return DefineResult(hits[0].entry, [h.entry for h in hits[1:]], "fulltext")
        return DefineResult(None, [h.entry for h in hits], "fulltext")

    def _fuzzy_names(self, st: _State, key: str, limit: int = 5) -> DefineResult | None:
        """Typo-tolerant name match: edit similarity, with Jaro-Winkler for dropped/swapped letters."""
        if len(key) < 3:
            return None
        pool = {idx for _n, _s, idx in process.extract(key, st.name_keys, scorer=fuzz.ratio, limit=12, score_cutoff=65)}
        pool |= {
            idx
            for _n, _s, idx in process.extract(
                key, st.name_keys, scorer=JaroWinkler.similarity, limit=12, score_cutoff=0.85
            )
        }
        if not pool:
            return None
        scored = sorted(
            (
                (
                    max(fuzz.ratio(key, st.name_keys[i]), 100 * JaroWinkler.similarity(key, st.name_keys[i]) - 5),
                    fuzz.WRatio(key, st.name_keys[i]),
                    i,
                )
                for i in pool
            ),
            key=lambda x: (-x[0], -x[1]),
        )
        best = scored[0]
        if best[0] < 70:
            return None
        ids: list[str] = []
        for sim, _w, idx in scored:
            if sim >= 75 or idx == best[2]:
                ids.extend(self._rank(st, st.name_ids[idx]))
        ids = list(dict.fromkeys(ids))
        top = self._rank(st, st.name_ids[best[2]])
        runner_up = next((r for r, _w, idx in scored[1:] if set(st.name_ids[idx]) - set(top)), 0)
        clear = len(top) == 1 or self._rank_key(st, top[0], {})[0] < self._rank_key(st, top[1], {})[0]
        if best[0] >= 80 and best[0] - runner_up >= 4 and clear:
            return DefineResult(st.by_id[top[0]], [st.by_id[i] for i in ids if i != top[0]][:limit], "fuzzy")
        return DefineResult(None, [st.by_id[i] for i in ids][:limit], "fuzzy")

    def complete(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        """Autocomplete over titles and aliases (in memory): name starts first, then word starts."""
        st = self._st
        return _complete(st.complete_keys, st.display, fold(prefix or "")[:100], limit, st)

    # ---------------------------------------------------------------- full text
    def _query_terms(self, st: _State, text: str) -> tuple[dict[str, float], list[str], list[tuple[str, str]]]:
        """Stemmed terms with weights (typos corrected against the words field), the raw words, and pairs."""
        raw_words: list[str] = []
        distinct: dict[str, None] = {}
        for tok in WORDS(text[:20000]):
            if len(tok.text) >= 40:
                continue
            raw_words.append(tok.text)
            if tok.text not in STOPS:
                distinct.setdefault(tok.text, None)
            if len(distinct) >= MAX_QUERY_WORDS:
                break
        raw_words = raw_words[: MAX_QUERY_WORDS * 4]
        weights: dict[str, float] = {}
        content = list(distinct)
        for w in content:
            s = stem(w)
            if s in st.vocab:
                weights[s] = max(weights.get(s, 0), 1.0)
                continue
            if not w.isalpha() or len(w) < 4:
                continue
            if w not in st.words_set:
                corrected = self._correct(st, w)
                for c in corrected:
                    cs = stem(c)
                    if cs in st.vocab:
                        weights[cs] = max(weights.get(cs, 0), FUZZY_WEIGHT)
        pairs: list[tuple[str, str]] = []
        for a, b in zip(content, content[1:], strict=False):
            joined = stem(a + b)
            if joined in st.vocab:
                pairs.append((a, b))
                weights[joined] = max(weights.get(joined, 0), PAIR_BOOST)
        return weights, raw_words, pairs

    def _correct(self, st: _State, word: str) -> list[str]:
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

    def _build_query(self, st: _State, weights: dict[str, float], raw_words: list[str]) -> wq.Query | None:
        subs: list[wq.Query] = []
        for term, w in weights.items():
            per_field = wq.Or([wq.Term(f, term, boost=b * w) for f, b in FIELD_BOOSTS.items()])
            if len(st.ids) < SMALL_INDEX:
                # Whoosh preloads each Or into doc-count-sized arrays on indexes under 5,000 documents;
                # on the shipped corpus a plain union of four term matchers is 2-3x faster (measured).
                per_field.matcher_type = wq.Or.DEFAULT_MATCHER
            subs.append(per_field)
        # Whole titles said inside a question ("is a terrain an enemy card") count as strong evidence.
        spans: set[str] = set()
        for n in range(1, 5):
            for i in range(len(raw_words) - n + 1):
                span = raw_words[i : i + n]
                if span[0] in STOPS or span[-1] in STOPS:
                    continue
                spans.add(" ".join(span))
                spans.add("".join(span))
        for span in spans:
            if span in st.exact:
                subs.append(wq.Term("exact", span, boost=EXACT_BOOST))
        if not subs:
            return None
        return wq.Or(subs, scale=OR_SCALE)

    def _filter(self, source: str | None, since: str | None) -> wq.Query | None:
        parts: list[wq.Query] = []
        if source:
            if source not in SOURCE_LABELS:
                raise ValueError(f"unknown source {source!r} (use one of: {', '.join(SOURCE_LABELS)})")
            parts.append(wq.Term("source", source))
        if since:
            parts.append(wq.TermRange("dates", _check_date(since, "since"), None))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else wq.And(parts)

    def search(self, question: str, limit: int = 5, source: str | None = None, since: str | None = None) -> list[Hit]:
        """Rank all entries for a natural-language question; never raises on odd text."""
        st = self._st
        limit = max(1, min(int(limit), 100))
        filt = self._filter(source, since)
        weights, raw_words, _pairs = self._query_terms(st, question or "")
        q = self._build_query(st, weights, raw_words)
        if q is None:
            return []
        with st.lock:
            # optimize=False: block-quality skipping costs more than it saves on an index this size
            results = st.searcher.search(q, limit=limit, filter=filt, optimize=False)
            rows = [(hit.docnum, hit.score) for hit in results]
        hits: list[Hit] = []
        for docnum, score in rows:
            entry = st.by_id.get(st.ids[docnum])
            if entry is not None:
                hits.append(self._hit(st, entry, score, weights))
        return hits

    def _hit(self, st: _State, entry: Entry, score: float, weights: dict[str, float]) -> Hit:
        """Pick the paragraph that best answers (idf-weighted query terms), bold the query words."""
        best, best_score, best_spans = 0, -1.0, []
        for n, toks in enumerate(_paragraph_tokens(st, entry)):
            spans = [(a, b) for t, a, b in toks if t in weights]
            matched = {t for t, _a, _b in toks if t in weights}
            s = sum(st.idf.get(t, 1.0) * weights[t] for t in matched)
            if s > best_score + 1e-9:
                best, best_score, best_spans = n, s, spans
        if not entry.paragraphs:
            return Hit(entry, score, "", None, list(entry.changes))
        snippet = _highlight(entry.paragraphs[best], best_spans)
        changes = [c for c in entry.changes if c.paragraph is None or c.paragraph == best]
        return Hit(entry, score, snippet, best, changes)

    # ---------------------------------------------------------------- sections
    def section(self, ref: str, limit: int = 5) -> list[Hit]:
        """A ruleset section by number ("II.F", "Cardinal Rule 2") or name ("deck construction")."""
        st = self._st
        key = fold(ref or "")[:200]
        if not key:
            return []
        ranked: list[str] = []
        ranked += st.section_keys.get(key, []) + st.section_keys.get(key.replace(" ", ""), [])
        # word-boundary prefixes: "cardinal rule 2" -> "cardinal rule 2 cards vs cards"
        for k, ids in st.section_keys.items():
            if k.startswith(key + " "):
                ranked += ids
        ref_stems = {stem(w) for w in key.split() if w not in STOPS}
        if ref_stems:
            covering = []
            for k, ids in st.section_keys.items():
                kst = {stem(w) for w in k.split()}
                if ref_stems <= kst:
                    covering.append((len(kst), ids))
            for _n, ids in sorted(covering, key=lambda x: x[0]):
                ranked += ids
        weights, raw_words, _ = self._query_terms(st, ref)
        ranked = list(dict.fromkeys(ranked))
        code = re.sub(r"\s+", "", (ref or "").strip().upper().removeprefix("SECTION").strip())
        if not ranked and _CODE.match(code):
            # A section number that names no section: its sub-sections ("II" -> II.A ... II.F), else nothing,
            # rather than whatever merely mentions the numeral.
            subs = [
                e.id
                for e in st.corpus.entries
                if e.kind in SECTION_KINDS
                and any(a.upper() == code or a.upper().startswith(code + ".") for a in e.aliases)
            ]
            ranked = subs
            if not ranked:
                return []
        if ranked:
            # A heading is answered by its contents: the matched section's sub-sections follow it.
            head = st.by_id[ranked[0]]
            path = head.section if head.section and head.section[-1] == head.title else [*head.section, head.title]
            children = [
                e.id
                for e in st.corpus.entries
                if e.id != head.id and len(e.section) > len(path) - 1 and e.section[: len(path)] == path
            ]
            ranked = list(dict.fromkeys([ranked[0], *children, *ranked[1:]]))
        hits = [self._hit(st, st.by_id[i], 100.0 - n, weights) for n, i in enumerate(ranked[:limit])]
        if len(hits) < limit:
            seen = {h.entry.id for h in hits}
            extra = [h for h in self.search(ref, limit=limit * 3) if h.entry.id not in seen]
            extra.sort(key=lambda h: 0 if h.entry.kind in SECTION_KINDS else 1)
            hits += extra[: limit - len(hits)]
        return hits

    def complete_section(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        st = self._st
        return _complete(st.section_complete, st.section_display, fold(prefix or "")[:100], limit, st)

    # ---------------------------------------------------------------- history
    def changes(
        self, since: str | None = None, until: str | None = None, source: str | None = None
    ) -> list[ChangeRecord]:
        """Every dated change, newest first (impossible dates placed by their probable date)."""
        st = self._st
        lo = _check_date(since, "since") if since else None
        hi = _check_date(until, "until") if until else None
        if source and source not in SOURCE_LABELS:
            raise ValueError(f"unknown source {source!r} (use one of: {', '.join(SOURCE_LABELS)})")
        out = []
        for rec in st.changes:
            if source and rec.entry.source != source:
                continue
            d = store.effective_date(rec.change)
            if (lo or hi) and not d:
                continue
            if lo and d < lo:
                continue
            if hi and d[: len(hi)] > hi:
                continue
            out.append(rec)
        return out

    # ---------------------------------------------------------------- banned list
    def banned(self, card: str) -> BannedResult:
        """Is this card on the banned list? Exact or close spelling counts; near misses are offered."""
        st = self._st
        key = fold(card or "")[:200]
        if not key or not st.banned_names:
            return BannedResult(card, None)
        record_id: str | None = None
        for name, eid in zip(st.banned_names, st.banned_ids, strict=True):
            if name == key or name.replace(" ", "") == key.replace(" ", ""):
                record_id = eid
                break
        if record_id is None:
            best = process.extractOne(key, st.banned_names, scorer=fuzz.ratio, score_cutoff=85)
            tsr = process.extractOne(key, st.banned_names, scorer=fuzz.token_sort_ratio, score_cutoff=88)
            pick = best or tsr
            if pick:
                record_id = st.banned_ids[pick[2]]
        near_ids: list[str] = []
        for _name, _score, idx in process.extract(key, st.banned_names, scorer=fuzz.WRatio, limit=10, score_cutoff=60):
            eid = st.banned_ids[idx]
            if eid != record_id and eid not in near_ids:
                near_ids.append(eid)
        near = [st.by_id[i] for i in near_ids[:5]]
        if record_id is None:
            return BannedResult(card, None, None, near)
        record = st.by_id[record_id]
        added = [c for c in record.changes if c.kind == "added"] or list(record.changes)
        dates = sorted(d for d in (store.effective_date(c) for c in added) if d)
        return BannedResult(card, record, dates[0] if dates else None, near)

    def complete_banned(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        st = self._st
        key = fold(prefix or "")[:100]
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        ranked = []
        for name, eid in zip(st.banned_names, st.banned_ids, strict=True):
            if not key or name.startswith(key):
                ranked.append((0, st.order[eid], eid))
            elif f" {key}" in f" {name}":
                ranked.append((1, st.order[eid], eid))
            elif len(key) >= 4 and (
                fuzz.ratio(key, name[: len(key) + 1]) >= FUZZY_COMPLETE_CUTOFF
                or (" " in key and fuzz.token_set_ratio(key, name) >= 90)
            ):
                ranked.append((2, st.order[eid], eid))  # one typo or word away: "moshi eihme", "house of black"
        for _r, _o, eid in sorted(ranked):
            if eid not in seen:
                seen.add(eid)
                out.append((_clip(st.by_id[eid].title), eid))
            if len(out) >= limit:
                break
        return out

    # ---------------------------------------------------------------- stats
    def stats(self) -> dict:
        st = self._st
        by_source = Counter(e.source for e in st.corpus.entries)
        by_kind = Counter(e.kind for e in st.corpus.entries)
        return {
            "files": list(st.corpus.files),
            "entries": len(st.corpus.entries),
            "by_source": dict(sorted(by_source.items())),
            "by_kind": dict(sorted(by_kind.items())),
            "errors": [str(e) for e in st.corpus.errors],
            "anomalies": len(st.corpus.anomalies),
            "build_seconds": st.meta.get("build_seconds"),
            "built_at": st.meta.get("built_at"),
            "rebuilt": self._rebuilt,
            "index_dir": str(self.index_dir),
            "index_path": str(st.index_path) if st.index_path else None,
            "fingerprint": st.meta.get("fingerprint"),
        }


def _paragraph_tokens(st: _State, entry: Entry) -> list[list[tuple[str, int, int]]]:
    """Analyzed paragraphs of an entry (stem, start, end), computed once per build and reused."""
    cached = st.para_tokens.get(entry.id)
    if cached is None:
        cached = [[(t.text, t.startchar, t.endchar) for t in STEMMED(p, chars=True)] for p in entry.paragraphs]
        st.para_tokens[entry.id] = cached
    return cached


def _dedupe_names(lst: list[_Name]) -> None:
    seen: set[tuple[str, str]] = set()
    keep = []
    for n in lst:
        if (n.entry_id, n.how) not in seen:
            seen.add((n.entry_id, n.how))
            keep.append(n)
    lst[:] = keep


def _complete(
    keys: list[tuple[str, int, int, str]], display: dict[str, str], key: str, limit: int, st: _State
) -> list[tuple[str, str]]:
    """Prefix lookup by bisection over (word-start suffix, rank, order, id); name starts before word starts."""
    limit = max(1, min(int(limit), 25))
    if not key:
        seen_ids: dict[str, None] = {}
        for _k, rank, _o, eid in sorted(keys, key=lambda x: (x[1], x[2])):
            if rank == 0:
                seen_ids.setdefault(eid, None)
            if len(seen_ids) >= limit:
                break
        return [(display[i], i) for i in seen_ids]
    lo = bisect.bisect_left(keys, (key,))
    found: list[tuple[int, int, int, str]] = []
    i = lo
    while i < len(keys) and keys[i][0].startswith(key) and len(found) < 400:
        k, rank, order, eid = keys[i]
        found.append((rank, len(k), order, eid))
        i += 1
    found.sort()
    out: dict[str, None] = {}
    for _r, _l, _o, eid in found:
        out.setdefault(eid, None)
        if len(out) >= limit:
            break
    if len(out) < limit and len(key) >= 4:
        # A judge typing "targt" still deserves suggestions: names whose start (or whole) is one typo away.
        n = len(key) + 1
        scored = []
        for eid, name in _folded_names(display).items():
            score = max(fuzz.ratio(key, name[:n]), fuzz.ratio(key, name))
            if score >= FUZZY_COMPLETE_CUTOFF and eid not in out:
                scored.append((-score, len(name), eid))
        for _s, _l, eid in sorted(scored)[: limit - len(out)]:
            out.setdefault(eid, None)
    return [(display[i], i) for i in out]


FUZZY_COMPLETE_CUTOFF = 80
_FOLDED_CACHE: dict[int, tuple[dict[str, str], dict[str, str]]] = {}


def _folded_names(display: dict[str, str]) -> dict[str, str]:
    """Folded display names by id, computed once per index state (display dicts never change once built)."""
    cached = _FOLDED_CACHE.get(id(display))
    if cached is None or cached[0] is not display:
        cached = (display, {eid: fold(name) for eid, name in display.items()})
        _FOLDED_CACHE.clear()  # one live state at a time is the norm; never grow without bound
        _FOLDED_CACHE[id(display)] = cached
    return cached[1]


def _highlight(text: str, spans: list[tuple[int, int]]) -> str:
    """Wrap spans in **bold** (merged when they overlap); Markdown in the rule text itself is escaped."""
    if not spans:
        return _md_escape(text)
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    out, pos = [], 0
    for s, e in merged:
        out.append(_md_escape(text[pos:s]))
        out.append(f"**{_md_escape(text[s:e])}**")
        pos = e
    out.append(_md_escape(text[pos:]))
    return "".join(out)


def _check_date(value: str, name: str) -> str:
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


def _close_quietly(st: _State) -> None:
    try:
        with st.lock:
            st.searcher.close()
    except Exception:  # pragma: no cover - closing must never take the bot down
        log.debug("closing old searcher failed", exc_info=True)


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """(result, milliseconds) of one call; used by the benchmark."""
    t = time.perf_counter()
    r = fn(*args, **kwargs)
    return r, (time.perf_counter() - t) * 1000
