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

Rulings are found by meaning too, when the engine has its sentence-embedding model: each ruling paragraph
is embedded at build time the way shared paragraphs are (``vectors.embed_text``: title and section as
context), and the question's vector from the shared ranking (``Meaning``) is compared with it. The common
yardstick there is the cosine: a ruling is placed before the first shared hit whose quoted paragraph is
less like the question than the ruling is, and only when it is as close to the question as the closest
1% of all shared paragraphs (``MEANING_QUANTILE``, never under ``MEANING_FLOOR``), so an unrelated ruling
stays out. A ruling that qualifies by words and by meaning takes the better of the two places.

A scope also keeps questions its judges confirmed are answered by one shared paragraph (``Kept``: a player's
"Not the answer?" report, reviewed; ``bot.rulings.feedback``). They are that scope's own kept questions, like
the shipped ones (``index.build.asked``): embedded alone with the same model, and compared with the question
asked. Being vouched for by the scope's judges, one that is as close as a paraphrase (``KEPT_FLOOR``), or the
same words, puts its paragraph first (``Overlay.confirmed_first``), before the rulings are placed. A pair whose
paragraph text has changed since it was confirmed is dropped, as a shipped kept question is.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from glossary.linking import normalise
from glossary.model import Corpus, Entry, clip
from index.build.asked import digest as paragraph_digest
from index.build.vectors import embed_text
from index.query import passages
from index.query.parsing import check_date, check_source
from index.results import ChangeRecord, DefineResult, Hit
from index.text import bm25
from index.text.analysis import STEMMED, fold
from index.text.embedding import Embedder

#: Ids of scoped entries: ``house:#42`` (a number no slug can produce, so never a shared entry's id).
SCOPED_ID = re.compile(r"^house:#\d+$")
TITLE_WEIGHT = 2.0  # a query word in a ruling's or rule's title counts twice
MIN_SHARE = 0.3  # a ruling scoring under this share of the best common score is noise, not an answer
_MAX_QUERY_CHARS = 2000
# Meaning (see the module docstring): a ruling must be as close to the question as this share of the shared
# paragraphs at most is (0.99: the closest 1%), and never under MEANING_FLOOR. Judgements checked on a handful
# of questions (docs/DEVELOPMENT-NOTES.md), not fitted: there is no evaluation set of server-ruling questions.
# The floor was 0.2 with the stock model; the tuned one (index/models/tune_minilm.py) puts unrelated texts much
# further apart (a kept question against other entries' paragraphs: median cosine 0.14 -> 0.04; the stock 0.2
# is passed by as many such pairs as 0.09 now), so it is 0.15: an off-topic ruling asked about plainly ("when do
# we eat" / "Lunch break") came at 0.19, the unrelated rulings of tests/index/test_overlay.py at 0.11 at most.
MEANING_QUANTILE = 0.99
MEANING_FLOOR = 0.15
# A question this close to one of the scope's confirmed questions is taken as that question asked again. Checked
# on two reported questions (tests/index/test_overlay_kept.py), not fitted: paraphrases ("max hand size" / "hand
# size limit", "maximum hand size") came at 0.88-0.98, related but different questions ("starting hand size",
# "can my hand size go above 8") at 0.75-0.79, unrelated ones under 0.65. That was the stock model, at 0.85; the
# tuned one (index/models/tune_minilm.py) brings questions of one paragraph less close to each other: the same
# paraphrases at 0.88-0.98 and 0.83 (tests/index/test_overlay_kept.py), the related ones at 0.71-0.74. Over the
# 1,880 shipped kept questions, 0.80 now matches as many pairs of one paragraph (4.5% against 4.2%) and fewer of
# two paragraphs of one entry (8% of matches against 10%) as 0.85 did with the stock model. Tuned again with the
# folded questions (2026-11-27, night): 4.7% and 7% on the same 1,880, the paraphrases at 0.90 and 0.98, the
# related ones at 0.71-0.73; the floor holds.
KEPT_FLOOR = 0.80
_KEPT_KEY = "\x00kept:"  # prefix of a kept question's key in ``Overlay.embedded`` (never a paragraph's text)


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
class Kept:
    """A question a scope's judges confirmed is answered by paragraph ``paragraph`` (0-based) of shared entry
    ``entry_id``; ``digest`` (``index.build.asked.digest``) is that paragraph's text when it was confirmed.
    With no entry and no paragraph, they confirmed that the loaded rules do not answer it (``not_covered``)."""

    question: str
    entry_id: str | None
    paragraph: int | None
    digest: str | None = None

    @property
    def not_covered(self) -> bool:
        return self.entry_id is None or self.paragraph is None


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
class Meaning:
    """The question's meaning as the shared ranking saw it (``Engine.search`` makes it): the model that embedded
    it, its unit vector, the cosine of each shared hit's quoted paragraph (hit order), and the cosine a ruling
    must reach to be shown by meaning."""

    model: str  # the embedder's digest: vectors from another model are not comparable
    query: np.ndarray
    hit_cosines: tuple[float, ...]
    floor: float

    @classmethod
    def of(cls, model: str, query: np.ndarray, paragraph_cosines: np.ndarray, hit_units: Sequence[int]) -> Meaning:
        """From the question's cosine with every shared paragraph and the paragraph each hit quotes."""
        k = int(MEANING_QUANTILE * (len(paragraph_cosines) - 1)) if len(paragraph_cosines) else 0
        near = float(np.partition(paragraph_cosines, k)[k]) if len(paragraph_cosines) else 1.0
        cosines = tuple(float(paragraph_cosines[u]) for u in hit_units)
        return cls(model, query, cosines, max(MEANING_FLOOR, near))


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
    # Meaning: the model's digest (None: words only), one row per embedded paragraph and whose it is
    model: str | None = None
    vectors: np.ndarray | None = field(default=None, repr=False)
    vector_units: tuple[tuple[str, int], ...] = field(default=(), repr=False)  # (entry id, paragraph or -1) per row
    embedded: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)  # embed_text -> vector (reuse)
    unembedded: int = 0  # paragraphs still without a vector (``build_overlay``'s ``embed_at_most``)
    # the scope's confirmed questions that still apply (their paragraph unchanged), their shared entries and vectors
    kept: tuple[Kept, ...] = ()
    kept_entries: Mapping[str, Entry] = field(default_factory=dict, repr=False)
    kept_vectors: np.ndarray | None = field(default=None, repr=False)  # one row per ``kept_units`` item
    kept_units: tuple[int, ...] = field(default=(), repr=False)  # index into ``kept`` of each row
    # The formats the scope plays, by format id (``glossary.formats``); None: it chose nothing, all are shown. The
    # application leaves the others' rules, bans and amendments out of its answers (``bot.app.formats``).
    formats: frozenset[str] | None = None

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, entry_id: str) -> Entry | None:
        return self.by_id.get(entry_id)

    def applying_to(self, entry_id: str) -> tuple[Entry, ...]:
        """The scope's entries that apply to shared entry ``entry_id`` (oldest first)."""
        return self.by_target.get(entry_id, ())

    # -- search ------------------------------------------------------------------------------------
    def confirmed_first(
        self, hits: Sequence[Hit], question: str, limit: int, query: np.ndarray | None, model: str | None
    ) -> list[Hit]:
        """``hits`` with the paragraphs of the scope's confirmed questions that ``question`` asks again put first:
        the same words, or (given the question's unit vector ``query`` from a ``model`` that embedded the kept
        ones) a cosine of ``KEPT_FLOOR`` or more; closest first, one per entry. A hit already showing that entry
        is moved up and quotes that paragraph; the others keep their order.

        When the closest such question is one the judges confirmed the loaded rules do not answer, nothing moves:
        the ranked hits say they are like it (``Hit.like_unanswered``), so the answer says no rule stands out."""
        if not self.kept:
            return list(hits)[:limit]
        said = fold(" ".join((question or "").split()))
        close: dict[int, float] = {i: 2.0 for i, k in enumerate(self.kept) if fold(k.question) == said}
        if query is not None and self.kept_vectors is not None and len(self.kept_vectors) and model == self.model:
            for i, cosine in zip(self.kept_units, (self.kept_vectors @ query).tolist(), strict=True):
                if cosine >= KEPT_FLOOR and cosine > close.get(i, -1.0):
                    close[i] = cosine
        if not close:
            return list(hits)[:limit]
        order = sorted(close, key=lambda i: -close[i])
        if self.kept[order[0]].not_covered:
            like = self.kept[order[0]].question
            return [replace(h, like_unanswered=like) if h.confidence is not None else h for h in hits][:limit]
        first: dict[str, Hit] = {}
        for i in order:
            kept = self.kept[i]
            entry = self.kept_entries.get(kept.entry_id) if kept.entry_id is not None else None
            if entry is None or kept.paragraph is None or entry.id in first:
                continue
            shown = next((h for h in hits if h.entry.id == entry.id), None)
            first[entry.id] = _at_paragraph(entry, kept.paragraph, question, shown)
        return [*first.values(), *(h for h in hits if h.entry.id not in first)][: max(1, limit)]

    def _idf(self, stats: BaseStats, term: str) -> float:
        n = stats.doc_count + len(self.entries)
        df = stats.doc_frequency(term) + self.df.get(term, 0)
        return float(bm25.idf(float(df), float(n)))

    @staticmethod
    def _bm25(doc: _Doc, idf: Mapping[str, float], avg: float) -> float:
        score = 0.0
        for term, weight in idf.items():
            tf = doc.tf.get(term, 0.0)
            if tf:
                score += weight * float(bm25.saturate(tf, doc.length, avg))
        return score

    def merge_search(
        self,
        hits: Sequence[Hit],
        question: str,
        limit: int,
        stats: BaseStats,
        source: str | None = None,
        since: str | None = None,
        meaning: Meaning | None = None,
    ) -> list[Hit]:
        """``hits`` (the shared ranking, order kept) with this scope's matching entries placed among them, by
        words and, given the question's ``meaning``, by meaning (see the module docstring)."""
        limit = max(1, min(int(limit), 100))
        if source:
            check_source(source)
        lo = check_date(since, "since") if since else None
        if not self.entries or (source and source != "house"):
            return list(hits)[:limit]
        terms = query_stems(question)
        close = self._close_by_meaning(meaning, len(hits))
        if not terms and not close:
            return list(hits)[:limit]
        idf = {t: self._idf(stats, t) for t in terms}
        base_scores: list[float] = []
        scores: dict[str, float] = {}
        if terms:
            base_docs = [_base_doc(h.entry) for h in hits]
            avg = (sum(d.length for d in base_docs) + self.total_length) / max(1, len(base_docs) + len(self.docs))
            base_scores = [self._bm25(d, idf, avg) for d in base_docs]
            for entry_id in dict.fromkeys(i for t in terms for i in self.postings.get(t, ())):  # only these score
                if (score := self._bm25(self.docs[entry_id], idf, avg)) > 0:
                    scores[entry_id] = score
        candidates = [
            self.by_id[i]
            for i in dict.fromkeys([*scores, *close])
            if not lo or any((c.date or "") >= lo for c in self.by_id[i].changes)
        ]
        if not candidates:
            return list(hits)[:limit]
        best = max([scores.get(e.id, 0.0) for e in candidates] + base_scores)
        positions = {h.entry.id: i for i, h in enumerate(hits)}
        slots: dict[int, list[tuple[float, Entry, float, int | None]]] = {}
        for entry in candidates:
            score, (cosine, paragraph) = scores.get(entry.id, 0.0), close.get(entry.id, (0.0, None))
            targets = [positions[t] for t in entry.overrides if t in positions]
            places = []
            if targets:
                places.append(min(targets) + 1)  # read right after the rule it applies to
            else:
                if score > 0 and score >= MIN_SHARE * best:
                    places.append(next((i for i, s in enumerate(base_scores) if s < score), len(hits)))
                if entry.id in close and meaning is not None:
                    places.append(next((i for i, c in enumerate(meaning.hit_cosines) if c < cosine), len(hits)))
            if not places:
                continue
            share = score / best if best > 0 else 0.0
            # the score shown is the common BM25 where words matched, else the cosine
            slots.setdefault(min(places), []).append((share + cosine, entry, score if score > 0 else cosine, paragraph))
        merged: list[Hit] = []
        for i in range(len(hits) + 1):
            for _key, entry, score, paragraph in sorted(slots.get(i, []), key=lambda c: -c[0]):
                if len(merged) >= limit:
                    break
                merged.append(self._hit(entry, score, idf, paragraph))  # snippets only for what is shown
            if i < len(hits):
                merged.append(hits[i])
        return merged[:limit]

    def _close_by_meaning(self, meaning: Meaning | None, n_hits: int) -> dict[str, tuple[float, int | None]]:
        """Entry id -> (best paragraph cosine with the question, that paragraph) for the entries that reach
        ``meaning.floor``; empty without a usable meaning (no model, another model, nothing embedded)."""
        if (
            meaning is None
            or self.vectors is None
            or not len(self.vectors)
            or meaning.model != self.model
            or len(meaning.hit_cosines) != n_hits
        ):
            return {}
        cosines = self.vectors @ meaning.query
        found: dict[str, tuple[float, int | None]] = {}
        for (entry_id, paragraph), cosine in zip(self.vector_units, cosines.tolist(), strict=True):
            if cosine >= meaning.floor and cosine > found.get(entry_id, (-2.0, None))[0]:
                found[entry_id] = (cosine, paragraph if paragraph >= 0 else None)
        return found

    def _hit(self, entry: Entry, score: float, idf: Mapping[str, float], closest: int | None = None) -> Hit:
        """The entry's best paragraph (idf-weighted query terms; else ``closest``, the one nearest by meaning),
        with the offsets of the question's words."""
        # Whoosh reuses one Token object while analysing: copy what is needed as it goes.
        numbered = (
            (n, [(t.text, t.startchar, t.endchar) for t in STEMMED(paragraph, chars=True)])
            for n, paragraph in enumerate(entry.paragraphs)
        )
        best, best_score, best_spans = passages.choose(numbered, idf)
        if best_score <= 0 and closest is not None and 0 <= closest < len(entry.paragraphs):
            best, best_spans = closest, []
        if not entry.paragraphs:
            return Hit(entry, score, [], None, list(entry.changes))
        return Hit(entry, score, best_spans, best, entry.paragraph_changes(best))

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
        return [(clip(self.by_id[i].title), i) for i in found[: max(0, limit)]]

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


def _at_paragraph(entry: Entry, paragraph: int, question: str, shown: Hit | None) -> Hit:
    """Shared ``entry`` as a hit quoting ``paragraph``, the question's words marked; ``shown``: the hit the ranking
    made of it, whose score and confidence it keeps."""
    weights = dict.fromkeys(query_stems(question), 1.0)
    tokens = [(t.text, t.startchar, t.endchar) for t in STEMMED(entry.paragraphs[paragraph], chars=True)]
    _best, _score, spans = passages.choose([(paragraph, tokens)], weights)
    hit = Hit(entry, shown.score if shown else 1.0, spans, paragraph, entry.paragraph_changes(paragraph))
    hit.confidence = shown.confidence if shown else None
    return hit


def _applying(kept: Iterable[Kept], base: Corpus | None) -> tuple[tuple[Kept, ...], dict[str, Entry]]:
    """The confirmed questions whose paragraph is in ``base`` with the text it had when confirmed, and those the
    loaded rules do not answer."""
    known = base.by_id() if base is not None else {}
    out: list[Kept] = []
    for k in kept:
        if k.not_covered:
            out.append(k)
            continue
        entry = known.get(k.entry_id or "")
        if entry is None or is_scoped(k.entry_id) or not 0 <= k.paragraph < len(entry.paragraphs):
            continue
        if k.digest is not None and paragraph_digest(entry.paragraphs[k.paragraph]) != k.digest:
            continue  # the rule text changed since: it may no longer answer (as index.build.asked drops them)
        out.append(k)
    return tuple(out), {k.entry_id: known[k.entry_id] for k in out if k.entry_id is not None}


def build_overlay(
    scope: str,
    entries: Iterable[Entry],
    revision: int = 0,
    base: Corpus | None = None,
    *,
    embedder: Embedder | None = None,
    previous: Overlay | Sequence[Overlay] | None = None,
    embed_at_most: int | None = None,
    kept: Iterable[Kept] = (),
    formats: Iterable[str] | None = None,
) -> Overlay:
    """Snapshot ``entries`` (source "house", ids from ``scoped_id``) for ``scope``.

    Each entry's ``overrides`` lists the shared entries it applies to: its ``see_also`` targets that
    exist in ``base`` (when given). Shared entries are never modified: another scope sees them too.

    With an ``embedder`` (the engine's, ``Engine.build_overlay``), each paragraph is embedded for search by
    meaning; a text ``previous`` (an older overlay, or several) already embedded with the same model is reused, so a
    change embeds only what it changed. ``embed_at_most``: embed nothing new when more than that many
    paragraphs need it (``unembedded`` says how many; build again later to fill them in).

    ``kept``: the scope's confirmed questions (``Kept``); those whose paragraph is in ``base`` unchanged are kept
    and, with an ``embedder``, embedded alone like the shipped kept questions (counted in ``embed_at_most``).

    ``formats``: the format ids the scope plays (``Overlay.formats``; None: it chose nothing).
    """
    known = base.by_id() if base is not None else None
    kept_list: list[Entry] = []
    by_target: dict[str, list[Entry]] = {}
    for entry in entries:
        if not is_scoped(entry.id):
            raise ValueError(f"{entry.id!r} is not a scoped entry id (use scoped_id())")
        targets = [r.target for r in entry.see_also if r.target and (known is None or r.target in known)]
        entry.overrides = list(dict.fromkeys(targets))
        kept_list.append(entry)
        for target in entry.overrides:
            by_target.setdefault(target, []).append(entry)
    docs = {e.id: _Doc.of(e) for e in kept_list}
    postings: dict[str, list[str]] = {}
    for entry_id, doc in docs.items():
        for term in doc.tf:
            postings.setdefault(term, []).append(entry_id)
    df = {term: len(ids) for term, ids in postings.items()}
    questions, kept_entries = _applying(kept, base)
    model, vectors, vector_units, embedded, unembedded, kept_vectors, kept_units = _embed(
        kept_list, embedder, previous, embed_at_most, questions
    )
    return Overlay(
        scope=scope,
        revision=revision,
        entries=tuple(kept_list),
        by_id={e.id: e for e in kept_list},
        by_target={k: tuple(v) for k, v in by_target.items()},
        docs=docs,
        df=df,
        postings={t: tuple(ids) for t, ids in postings.items()},
        total_length=sum(d.length for d in docs.values()),
        names=tuple((fold(e.title), e.id) for e in kept_list),
        model=model,
        vectors=vectors,
        vector_units=vector_units,
        embedded=embedded,
        unembedded=unembedded,
        kept=questions,
        kept_entries=kept_entries,
        kept_vectors=kept_vectors,
        kept_units=kept_units,
        formats=None if formats is None else frozenset(formats),
    )


def _embed(
    entries: Sequence[Entry],
    embedder: Embedder | None,
    previous: Overlay | Sequence[Overlay] | None,
    at_most: int | None,
    questions: Sequence[Kept] = (),
) -> tuple[
    str | None, np.ndarray | None, tuple[tuple[str, int], ...], dict[str, np.ndarray], int, np.ndarray | None,
    tuple[int, ...],
]:
    """The overlay's meaning fields (see ``build_overlay``): model digest, vector rows, their (id, paragraph),
    the text -> vector table kept for the next build, how many texts are left without a vector, and the kept
    questions' vector rows with the index in ``questions`` of each."""
    if embedder is None:
        return None, None, (), {}, 0, None, ()
    units = [(e.id, p) for e in entries for p in (range(len(e.paragraphs)) if e.paragraphs else [-1])]
    texts = [embed_text(e, p) for e in entries for p in (range(len(e.paragraphs)) if e.paragraphs else [-1])]
    asked = [_KEPT_KEY + k.question for k in questions]  # embedded as the question alone, like a player's
    known: dict[str, np.ndarray] = {}
    for older in [previous] if isinstance(previous, Overlay) else previous or []:
        if older.model == embedder.digest:
            known.update(older.embedded)
    missing = list(dict.fromkeys(t for t in [*texts, *asked] if t not in known))
    if missing and (at_most is None or len(missing) <= at_most):
        said = [t.removeprefix(_KEPT_KEY) for t in missing]
        for text, vector in zip(missing, embedder.embed(said), strict=True):
            known[text] = vector
    rows = [i for i, t in enumerate(texts) if t in known]
    vectors = np.stack([known[texts[i]] for i in rows]) if rows else np.zeros((0, embedder.dim), np.float32)
    asked_rows = [i for i, t in enumerate(asked) if t in known]
    asked_vectors = (
        np.stack([known[asked[i]] for i in asked_rows]) if asked_rows else np.zeros((0, embedder.dim), np.float32)
    )
    # only the current texts: the table never grows stale
    embedded = {t: known[t] for t in [*texts, *asked] if t in known}
    left = len(texts) - len(rows) + len(asked) - len(asked_rows)
    return (
        embedder.digest, vectors, tuple(units[i] for i in rows), embedded, left, asked_vectors, tuple(asked_rows)
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
