"""A scope's own entries (one community's rulings) searched next to the shared index, without rebuilding it.

The shared index holds the rule documents every scope sees. A scope (an opaque string: the bot derives
it from a Discord server id) adds a few dozen or a few hundred rulings of its own; they change while an
event runs and must be searchable at once. Rebuilding the shared index per change and per scope would
be slow and would mix scopes, so each scope gets an ``Overlay``: an immutable, in-memory snapshot of its
rulings with their analysed text, built in milliseconds and swapped in with one assignment
(``Overlays.put``). Queries pass the overlay to the engine (``Engine.search(..., overlay=...)``), which
merges its entries into the shared results here, in this module; nothing else in ``index`` knows about
scopes.

Merging ranked lists from two indexes needs one yardstick: the shared ranker's scores mean nothing
next to the overlay's. So the shared hits keep their order, and each matching ruling is placed by one
common BM25 score computed over the query terms for both the ruling and the shared hits (document
frequencies from the shared index plus the overlay). A ruling that applies to an entry in the results
is placed right after that entry: a ruling is read after the rule it amends.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from glossary.linking import normalise
from glossary.model import Corpus, Entry
from index.analysis import STEMMED, fold
from index.fulltext import check_date, check_source, highlight
from index.results import ChangeRecord, DefineResult, Hit

#: Ids of scoped entries: ``house:#42`` (a number no slug can produce, so never a shared entry's id).
SCOPED_ID = re.compile(r"^house:#\d+$")
K1, B = 1.2, 0.75  # BM25 constants (the usual ones)
TITLE_WEIGHT = 2.0  # a query word in a ruling's or rule's title counts twice
MIN_SHARE = 0.3  # a ruling scoring under this share of the best common score is noise, not an answer
_MAX_QUERY_CHARS = 2000


def scoped_id(number: int) -> str:
    """The entry id of scoped record ``number`` (e.g. a ruling's database id)."""
    return f"house:#{int(number)}"


def is_scoped(entry_id: str) -> bool:
    """Whether an id names a scope's own entry (not in the shared index, the rulebook or another scope)."""
    return bool(SCOPED_ID.match(entry_id))


def query_stems(text: str) -> list[str]:
    """Distinct stemmed query terms, stop words dropped: the same analysis as the shared index."""
    return list(dict.fromkeys(t.text for t in STEMMED((text or "")[:_MAX_QUERY_CHARS])))


@dataclass(frozen=True)
class _Doc:
    """One entry's term counts (title words counted TITLE_WEIGHT times) and length, for BM25."""

    tf: Mapping[str, float]
    length: float

    @classmethod
    def of(cls, entry: Entry) -> _Doc:
        tf: dict[str, float] = {}
        length = 0.0
        for weight, text in ((TITLE_WEIGHT, entry.title), (1.0, entry.text)):
            for tok in STEMMED(text):
                tf[tok.text] = tf.get(tok.text, 0.0) + weight
                length += weight
        return cls(tf, max(length, 1.0))


@dataclass(frozen=True)
class BaseStats:
    """What the overlay needs from the shared index: its size and a term's document frequency."""

    doc_count: int
    doc_frequency: Callable[[str], int]


@dataclass(frozen=True)
class Overlay:
    """One scope's entries at one revision; read-only once built (share it between threads freely)."""

    scope: str
    revision: int
    entries: tuple[Entry, ...]
    by_id: Mapping[str, Entry]
    by_target: Mapping[str, tuple[Entry, ...]]  # shared entry id -> the scope's entries applying to it
    docs: Mapping[str, _Doc] = field(repr=False)
    df: Mapping[str, int] = field(repr=False)
    postings: Mapping[str, tuple[str, ...]] = field(repr=False)  # term -> ids of the entries holding it
    names: tuple[tuple[str, str], ...] = field(repr=False)  # (folded title, id), in entry order
    total_length: float = 0.0  # of all the scope's entries (for BM25's average length)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, entry_id: str) -> Entry | None:
        return self.by_id.get(entry_id)

    def applying_to(self, entry_id: str) -> tuple[Entry, ...]:
        """The scope's entries that apply to shared entry ``entry_id`` (oldest first)."""
        return self.by_target.get(entry_id, ())

    # -- search ------------------------------------------------------------------------------------
    def _idf(self, stats: BaseStats, term: str) -> float:
        n = stats.doc_count + len(self.entries)
        df = stats.doc_frequency(term) + self.df.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    @staticmethod
    def _bm25(doc: _Doc, idf: Mapping[str, float], avg: float) -> float:
        score = 0.0
        for term, weight in idf.items():
            tf = doc.tf.get(term, 0.0)
            if tf:
                score += weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * doc.length / avg))
        return score

    def merge_search(
        self,
        hits: Sequence[Hit],
        question: str,
        limit: int,
        stats: BaseStats,
        source: str | None = None,
        since: str | None = None,
    ) -> list[Hit]:
        """``hits`` (the shared ranking, order kept) with this scope's matching entries placed among them."""
        limit = max(1, min(int(limit), 100))
        if source:
            check_source(source)
        lo = check_date(since, "since") if since else None
        if not self.entries or (source and source != "house"):
            return list(hits)[:limit]
        terms = query_stems(question)
        if not terms:
            return list(hits)[:limit]
        idf = {t: self._idf(stats, t) for t in terms}
        base_docs = [_base_doc(h.entry) for h in hits]
        avg = (sum(d.length for d in base_docs) + self.total_length) / max(1, len(base_docs) + len(self.docs))
        base_scores = [self._bm25(d, idf, avg) for d in base_docs]
        matching = dict.fromkeys(i for t in terms for i in self.postings.get(t, ()))  # only these can score
        candidates = []
        for entry_id in matching:
            entry = self.by_id[entry_id]
            if lo and not any((c.date or "") >= lo for c in entry.changes):
                continue
            score = self._bm25(self.docs[entry_id], idf, avg)
            if score > 0:
                candidates.append((score, entry))
        if not candidates:
            return list(hits)[:limit]
        best = max([s for s, _ in candidates] + base_scores)
        positions = {h.entry.id: i for i, h in enumerate(hits)}
        slots: dict[int, list[tuple[float, Entry]]] = {}
        for score, entry in sorted(candidates, key=lambda c: -c[0]):
            targets = [positions[t] for t in entry.overrides if t in positions]
            if targets:
                at = min(targets) + 1  # read right after the rule it applies to
            elif score >= MIN_SHARE * best:
                at = next((i for i, s in enumerate(base_scores) if s < score), len(hits))
            else:
                continue
            slots.setdefault(at, []).append((score, entry))
        merged: list[Hit] = []
        for i in range(len(hits) + 1):
            for score, entry in slots.get(i, []):
                merged.append(self._hit(entry, score, idf))
            if i < len(hits):
                merged.append(hits[i])
        return merged[:limit]

    def _hit(self, entry: Entry, score: float, idf: Mapping[str, float]) -> Hit:
        """The entry's best paragraph (idf-weighted query terms), query words in bold."""
        best, best_score, best_spans = 0, -1.0, []
        for n, paragraph in enumerate(entry.paragraphs):
            # Whoosh reuses one Token object while analysing: copy what is needed as it goes.
            toks = [(t.text, t.startchar, t.endchar) for t in STEMMED(paragraph, chars=True)]
            spans = [(a, b) for t, a, b in toks if t in idf]
            s = sum(idf[t] for t in {t for t, _a, _b in toks if t in idf})
            if s > best_score + 1e-9:
                best, best_score, best_spans = n, s, spans
        snippet = highlight(entry.paragraphs[best], best_spans) if entry.paragraphs else ""
        changes = [c for c in entry.changes if c.paragraph is None or c.paragraph == best]
        return Hit(entry, score, snippet, best if entry.paragraphs else None, changes)

    # -- names -------------------------------------------------------------------------------------
    def merge_define(self, term: str, result: DefineResult, limit: int = 5) -> DefineResult:
        """A ruling named exactly is the answer unless a shared entry is named exactly too (then it is
        offered beside it); a ruling whose title starts with ``term`` is offered when nothing else fits."""
        key = fold(term or "")
        if not key or not self.entries:
            return result
        exact = [self.by_id[i] for name, i in self.names if name == key]
        starts = [self.by_id[i] for name, i in self.names if name.startswith(key) and name != key]
        if exact and not (result.entry is not None and result.how in ("exact", "alias")):
            others = [e for e in [*exact[1:], *([result.entry] if result.entry else []), *result.candidates]]
            return DefineResult(exact[0], others[:limit], "exact")
        if exact:
            return DefineResult(result.entry, [*result.candidates, *exact][:limit], result.how)
        if starts and result.entry is None and result.how in ("none", "fulltext", "fuzzy"):
            if len(starts) == 1 and not result.candidates:
                return DefineResult(starts[0], [], "prefix")
            return DefineResult(None, [*starts, *result.candidates][:limit], "prefix")
        return result

    def complete(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        """(title, id) of the scope's entries whose title, or a word of it, starts with ``prefix``."""
        key = fold(prefix or "")
        if not key:
            found = [i for _n, i in self.names]
        else:
            starts = [i for name, i in self.names if name.startswith(key)]
            inner = [i for name, i in self.names if f" {key}" in f" {name}" and i not in starts]
            found = starts + inner
        return [(_clip(self.by_id[i].title), i) for i in found[: max(0, limit)]]

    def merge_complete(self, prefix: str, base: Sequence[tuple[str, str]], limit: int = 25) -> list[tuple[str, str]]:
        """The scope's matching names first (they are what a judge of this scope is most likely after)."""
        own = self.complete(prefix, limit) if fold(prefix or "") else []
        seen = {i for _n, i in own}
        return [*own, *((n, i) for n, i in base if i not in seen)][:limit]

    # -- history -----------------------------------------------------------------------------------
    def merge_changes(
        self,
        records: Sequence[ChangeRecord],
        since: str | None = None,
        until: str | None = None,
        source: str | None = None,
    ) -> list[ChangeRecord]:
        """Shared change records plus the scope's, newest first (the same filters as ``Engine.changes``)."""
        lo = check_date(since, "since") if since else None
        hi = check_date(until, "until") if until else None
        if source:
            check_source(source)
        if source and source != "house":
            return list(records)
        own = []
        for entry in self.entries:
            for change in entry.changes:
                d = change.date
                if (lo or hi) and (not d or (lo and d < lo) or (hi and d[: len(hi)] > hi)):
                    continue
                own.append(ChangeRecord(change, entry))
        if not own:
            return list(records)
        merged = [*records, *own]
        merged.sort(key=lambda r: _effective(r) or "", reverse=True)
        dated = [r for r in merged if _effective(r)]
        return dated + [r for r in merged if not _effective(r)]


_BASE_DOCS: dict[int, tuple[Entry, _Doc]] = {}  # shared entries' term counts, analysed once per entry object
_BASE_DOCS_MAX = 20_000


def _base_doc(entry: Entry) -> _Doc:
    found = _BASE_DOCS.get(id(entry))
    if found is not None and found[0] is entry:
        return found[1]
    if len(_BASE_DOCS) >= _BASE_DOCS_MAX:  # a reload left the old entries behind: start over
        _BASE_DOCS.clear()
    doc = _Doc.of(entry)
    _BASE_DOCS[id(entry)] = (entry, doc)
    return doc


def _effective(record: ChangeRecord) -> str | None:
    change = record.change
    return change.probable_date if change.anomaly and change.probable_date else change.date


def _clip(text: str, n: int = 100) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def build_overlay(scope: str, entries: Iterable[Entry], revision: int = 0, base: Corpus | None = None) -> Overlay:
    """Snapshot ``entries`` (source "house", ids from ``scoped_id``) for ``scope``.

    Each entry's ``overrides`` lists the shared entries it applies to: its ``see_also`` targets that
    exist in ``base`` (when given). Shared entries are never modified: another scope sees them too.
    """
    known = base.by_id() if base is not None else None
    kept: list[Entry] = []
    by_target: dict[str, list[Entry]] = {}
    for entry in entries:
        if not is_scoped(entry.id):
            raise ValueError(f"{entry.id!r} is not a scoped entry id (use scoped_id())")
        targets = [r.target for r in entry.see_also if r.target and (known is None or r.target in known)]
        entry.overrides = list(dict.fromkeys(targets))
        kept.append(entry)
        for target in entry.overrides:
            by_target.setdefault(target, []).append(entry)
    docs = {e.id: _Doc.of(e) for e in kept}
    postings: dict[str, list[str]] = {}
    for entry_id, doc in docs.items():
        for term in doc.tf:
            postings.setdefault(term, []).append(entry_id)
    df = {term: len(ids) for term, ids in postings.items()}
    return Overlay(
        scope=scope,
        revision=revision,
        entries=tuple(kept),
        by_id={e.id: e for e in kept},
        by_target={k: tuple(v) for k, v in by_target.items()},
        docs=docs,
        df=df,
        postings={t: tuple(ids) for t, ids in postings.items()},
        total_length=sum(d.length for d in docs.values()),
        names=tuple((fold(e.title), e.id) for e in kept),
    )


class Overlays:
    """The overlays a process holds, by scope; replacing one is a single assignment (thread-safe)."""

    def __init__(self) -> None:
        self._by_scope: dict[str, Overlay] = {}
        self._lock = threading.Lock()

    def get(self, scope: str | None) -> Overlay | None:
        return self._by_scope.get(scope) if scope else None

    def put(self, overlay: Overlay) -> None:
        """Publish ``overlay`` unless a newer revision of its scope is already there."""
        with self._lock:
            current = self._by_scope.get(overlay.scope)
            if current is None or current.revision <= overlay.revision:
                self._by_scope[overlay.scope] = overlay

    def drop(self, scope: str) -> None:
        with self._lock:
            self._by_scope.pop(scope, None)

    def scopes(self) -> list[str]:
        return list(self._by_scope)

    def revisions(self) -> dict[str, int]:
        return {scope: o.revision for scope, o in list(self._by_scope.items())}


class NameResolver:
    """Entry names as a judge types them -> shared entry ids, exactly as house-rulings files link them
    (case, accent and punctuation insensitive; titles before aliases; an entry id is accepted as is)."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.by_id = corpus.by_id()
        self.names: dict[str, list[str]] = {}
        for entry in corpus.entries:
            self.names.setdefault(normalise(entry.title), []).append(entry.id)
        for entry in corpus.entries:
            for alias in entry.aliases:
                key = normalise(alias)
                if key not in self.names:
                    self.names.setdefault(key, []).append(entry.id)

    def resolve(self, name: str) -> list[str]:
        """Every shared entry ``name`` names (several when titles are shared), or [] when none."""
        name = name.strip()
        if name in self.by_id and not is_scoped(name):
            return [name]
        ids = self.names.get(normalise(name), [])
        return [i for i in ids if not is_scoped(i)]

    def label(self, entry_id: str) -> str:
        """How to write ``entry_id`` in an "Applies to" line so it reads back as the same entry: its
        title when that title names only it, else the id itself."""
        entry = self.by_id.get(entry_id)
        if entry is None:
            return entry_id
        return entry.title if self.resolve(entry.title) == [entry_id] and ";" not in entry.title else entry_id
