"""The judge's search engine: define, complete, search, section, changes, banned over one corpus.

Entries stay in memory (the corpus is loaded anyway, and answers quote them verbatim);
Whoosh ranks them. Name lookups (``names``) run over in-memory tables; free-text questions
(``parsing`` analyses them, ``ranking`` ranks, ``passages`` builds the hits) go to Whoosh with a query built
from our own tokens; ``history`` answers
changes and the banned list. All per-build tables live in one ``State`` (``state``) that
``reload`` replaces with a single assignment; each call reads ``self._state`` once and
uses only that object, so a reload never mixes two builds inside one answer.

A reload parses and builds in a child process (``rebuild``) and is refused, keeping the serving
build, when it would lose a source file or most entries. A query that fails inside Whoosh (a
damaged segment) rebuilds the index once and is answered from the new build.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from glossary.model import Corpus, Entry
from index.build import rebuild, store, vectors
from index.build.progress import Progress, silent
from index.build.rebuild import ReloadFailed, ReloadRefused, with_model
from index.build.state import State, build_state
from index.query import ban_question, history, names, passages, ranking
from index.query.overlay import BaseStats, Kept, Meaning, Overlay, build_overlay
from index.results import BannedResult, ChangeRecord, DefineResult, Hit
from index.text import embedding

__all__ = ["Engine", "ReloadFailed", "ReloadRefused"]

T = TypeVar("T")

log = logging.getLogger("index")

RETIRE_SECONDS = 30.0  # how long a replaced state stays open for queries that grabbed it before a reload


class Engine:
    """Search engine over one corpus; see the module docstring. Thread-safe for readers and reloads."""

    def __init__(
        self,
        sources: list[Path] | None,
        index_dir: Path,
        corpus: Corpus | None = None,
        *,
        memory_fallback: bool = True,
        model: Path | None = embedding.CONFIGURED,
        progress: Progress | None = None,
    ) -> None:
        self.sources = sources
        self.index_dir = index_dir
        # The embedding model folder (None: words only), decided once here: the caller's settings, else the
        # environment's (``L5R_EMBEDDING_MODEL``) for the command lines. Every reload and its child use it.
        self.model = embedding.configured_model() if model is embedding.CONFIGURED else model
        self._fixed_corpus = corpus
        # An index folder that cannot be written: serve from memory (the bot), or raise store.BuildError (a build).
        self.memory_fallback = memory_fallback
        self._reload_lock = threading.Lock()  # one build at a time; readers never take it
        self._state: State | None = None
        self._build_error: str | None = None  # why the serving index could not be written to disk, if so
        self._reload_seconds: float | None = None  # the whole of the last reload, parse to swap
        # Told of each stage of a build made in this process (index.build.progress); a reload's child is not heard.
        self.progress: Progress = progress or silent

    # ---------------------------------------------------------------- lifecycle
    @classmethod
    def open(
        cls,
        sources: list[Path] | None = None,
        index_dir: Path | None = None,
        *,
        memory_fallback: bool = True,
        model: Path | None = embedding.CONFIGURED,
        progress: Progress | None = None,
    ) -> Engine:
        """Load the corpus and open its index, building it if missing, stale or corrupt.

        When the index folder cannot be written the engine serves from memory, or with ``memory_fallback``
        False raises ``store.BuildError`` (``python -m index build`` must fail, not pass without an index).
        ``progress`` hears of each stage of a build (``index.build.progress``); the engine prints nothing.
        """
        index_dir = Path(index_dir).expanduser() if index_dir else store.default_index_dir()
        engine = cls(sources, index_dir, memory_fallback=memory_fallback, model=model, progress=progress)
        engine._load(force=False)
        return engine

    @classmethod
    def from_corpus(cls, corpus: Corpus, index_dir: Path, *, model: Path | None = embedding.CONFIGURED) -> Engine:
        """An engine over entries built in memory (tests, synthetic benchmark corpora), not read from files."""
        engine = cls(None, Path(index_dir), corpus, model=model)
        engine._load(force=False)
        return engine

    @property
    def corpus(self) -> Corpus:
        return self._st.corpus

    @property
    def _st(self) -> State:
        st = self._state
        if st is None:  # pragma: no cover - open() always loads
            raise RuntimeError("engine not loaded")
        return st

    def reload(self, *, isolated: bool = True) -> dict[str, Any]:
        """Re-read the sources and rebuild; the new index is swapped in only once complete.

        ``isolated`` (the default) parses and builds in a child process, so a caller on an event loop is
        never stalled by it; tests of the build itself pass False. Raises ``ReloadRefused`` (the serving
        build stays) when the sources lost a file or most entries, ``ReloadFailed`` when the child failed.
        ``reload_seconds`` in the returned stats is the whole reload, parse to swap.
        """
        started = time.perf_counter()
        self._load(force=True, isolated=isolated, guard=True)
        self._reload_seconds = round(time.perf_counter() - started, 4)
        return self.stats()

    def _load(self, force: bool, *, isolated: bool = False, guard: bool = False) -> None:
        with self._reload_lock:
            self._load_locked(force, isolated=isolated, guard=guard)

    def _load_locked(self, force: bool, *, isolated: bool, guard: bool) -> None:
        """Parse (here or in a child), refuse a lossy reload, open or build the index (its search arrays and
        paragraph vectors included), publish the new state."""
        baseline = rebuild.Baseline.of(self._state.corpus) if guard and self._state is not None else None
        # The model that embeds questions here; a child building a reload loads the same one for paragraphs.
        embedder = embedding.load(self.model)
        opened: store.Opened | None = None
        build_error: str | None = None
        if self._fixed_corpus is not None:
            corpus = self._fixed_corpus
            digest = store.corpus_digest(corpus)
            fp = with_model("corpus:" + digest, embedder)
        else:
            if force and isolated:
                prepared = rebuild.prepare_in_child(self.sources, self.index_dir, baseline, model=self.model)
            else:
                prepared = rebuild.prepare(
                    self.sources, self.index_dir, baseline, build=force, embedder=embedder, progress=self.progress
                )
            if prepared.refused is not None:
                log.warning("reload refused, the serving index stays: %s", prepared.refused)
                raise ReloadRefused(prepared.refused)
            assert prepared.corpus is not None
            corpus, fp, digest = prepared.corpus, prepared.fingerprint, prepared.digest
            build_error = prepared.build_error
            if prepared.path is not None:
                opened = store.open_build(prepared.path)
        if opened is None and build_error is None:
            opened = None if force else store.open_current(self.index_dir, fp, digest)
        rebuilt = force or opened is None
        if opened is None and build_error is None:
            opened, build_error = self._build(corpus, fp, digest, embedder)
        if opened is None:  # the child could not write its build
            if not self.memory_fallback:
                raise store.BuildError(build_error or f"cannot write the index in {self.index_dir}")
            log.error("%s; serving an in-memory index instead", build_error)
            opened = store.build_in_memory(corpus, fp, digest, self.progress)
        state = self._make_state(corpus, opened, rebuilt, fp, digest, embedder)
        old, self._state, self._build_error = self._state, state, build_error
        if old is not None:
            # Readers that grabbed the old state may still be mid-query; close it once they are done.
            timer = threading.Timer(RETIRE_SECONDS, old.close)
            timer.daemon = True
            timer.start()

    def _build(
        self, corpus: Corpus, fp: str, digest: str, embedder: embedding.Embedder | None
    ) -> tuple[store.Opened, str | None]:
        """Write a build here (``rebuild.write_build``), else serve one from memory when allowed: the one
        place that decides between the two. Returns the build and why the folder could not be written."""
        try:
            return rebuild.write_build(corpus, self.index_dir, fp, digest, embedder, self.progress), None
        except store.BuildError as exc:
            if not self.memory_fallback:
                raise
            log.error("%s; serving an in-memory index instead", exc)
            return store.build_in_memory(corpus, fp, digest, self.progress), str(exc)

    def _make_state(
        self,
        corpus: Corpus,
        opened: store.Opened,
        rebuilt: bool,
        fp: str,
        digest: str,
        embedder: embedding.Embedder | None,
    ) -> State:
        """Derive the in-memory tables; a reopened index that fails here (a damaged segment, missing or
        unreadable arrays) is rebuilt."""
        cache_dir = self.index_dir / vectors.CACHE_DIR
        try:
            return build_state(corpus, opened, rebuilt, embedder, cache_dir, self.progress)
        except Exception as exc:
            if rebuilt:
                raise
            log.warning("index at %s is unreadable (%s: %s); rebuilding", opened.path, type(exc).__name__, exc)
            fresh, _error = self._build(corpus, fp, digest, embedder)
            return build_state(corpus, fresh, True, embedder, cache_dir, self.progress)

    def _query(self, run: Callable[[State], T]) -> T:
        """Run a query on the serving build; if it fails inside the index, rebuild once and answer from the new one.

        Bad input (``ValueError``: a bad filter) is the caller's to handle and never causes a rebuild.
        Queries failing together share one rebuild; a build that came from such a rebuild is not rebuilt
        again when it fails too (the error is raised), so a fault that is not damage cannot loop.
        """
        st = self._st
        try:
            return run(st)
        except ValueError:
            raise
        except Exception as exc:
            if not self._recover(st, exc):
                raise
        return run(self._st)

    def _recover(self, st: State, exc: Exception) -> bool:
        """Rebuild after a query failed inside ``st``'s index; whether the query should be tried again."""
        with self._reload_lock:
            if self._state is not st:
                return True  # another query already rebuilt (or a reload swapped): try the new build
            if st.failed or st.recovered:
                st.failed = True
                return False
            st.failed = True
            log.error(
                "a query failed inside the index at %s (%s: %s); rebuilding it once",
                st.index_path or "memory",
                type(exc).__name__,
                exc,
            )
            try:
                self._load_locked(force=True, isolated=self._fixed_corpus is None, guard=True)
            except Exception:
                log.exception("rebuilding the index after a failed query did not work; still serving the old one")
                return False
            self._st.recovered = True
            return True

    def close(self) -> None:
        """Release the searcher (tests and short-lived CLIs)."""
        if self._state is not None:
            self._state.close()

    # ---------------------------------------------------------------- queries
    # ``overlay``: a scope's own entries (index.query.overlay), merged into the shared answers; None = shared only.
    def get(self, entry_id: str, overlay: Overlay | None = None) -> Entry | None:
        found = overlay.get(entry_id) if overlay is not None else None
        return found or self._st.by_id.get(entry_id)

    def define(self, term: str, limit: int = 5, overlay: Overlay | None = None) -> DefineResult:
        """Exact title/alias, then prefix, then plural/typo tolerant, then full text."""
        def run(st: State) -> DefineResult:
            result = names.define(st, term, limit)
            return overlay.merge_define(term, result, limit) if overlay is not None else result

        return self._query(run)

    def complete(self, prefix: str, limit: int = 25, overlay: Overlay | None = None) -> list[tuple[str, str]]:
        """Autocomplete over titles and aliases (in memory): name starts first, then word starts."""
        found = names.complete(self._st.names, prefix, limit)
        return overlay.merge_complete(prefix, found, limit) if overlay is not None else found

    def search(
        self,
        question: str,
        limit: int = 5,
        source: str | None = None,
        since: str | None = None,
        overlay: Overlay | None = None,
    ) -> list[Hit]:
        """Rank all entries for a natural-language question; never raises on odd text (bad filters: ValueError)."""

        return self._query(lambda st: _search(st, question, limit, source, since, overlay)[0])

    def ask(
        self, question: str, limit: int = 5, near: int = 5, overlay: Overlay | None = None
    ) -> tuple[list[Hit], list[Entry]]:
        """``search``, and when nothing answers closely the ``near`` entries nearest to the question.

        Both come from one analysis of the question on one build: the question is embedded once, and a
        ``/reload`` between the two cannot make them answer from different builds.
        """

        def run(st: State) -> tuple[list[Hit], list[Entry]]:
            found, ev = _search(st, question, limit, None, None, overlay)
            if found or near <= 0:
                return found, []
            return found, _nearest(st, question, ev, near)

        return self._query(run)

    @property
    def embedder(self) -> embedding.Embedder | None:
        """The loaded sentence-embedding model (None: off or failed to load; ranking by words only)."""
        return self._st.embedder

    def build_overlay(
        self,
        scope: str,
        entries: list[Entry],
        revision: int = 0,
        *,
        previous: Overlay | Sequence[Overlay] | None = None,
        embed_at_most: int | None = None,
        kept: Sequence[Kept] = (),
        formats: Sequence[str] | frozenset[str] | None = None,
    ) -> Overlay:
        """A scope's overlay over the loaded rules, its entries embedded with the loaded model for search by
        meaning (``index.query.overlay.build_overlay``; ``previous``: reuse its vectors for unchanged texts;
        ``kept``: the questions its judges confirmed a shared paragraph answers; ``formats``: the formats it plays)."""
        st = self._st
        return build_overlay(
            scope, entries, revision, st.corpus, embedder=st.embedder, previous=previous, embed_at_most=embed_at_most,
            kept=kept, formats=formats,
        )

    def nearest_terms(self, question: str, limit: int = 5) -> list[Entry]:
        """Entries nearest to a question that nothing answers closely: offered as "nearest terms"."""

        return self._query(lambda st: _nearest(st, question, ranking.evidence(st, question), limit))

    def section(self, ref: str, limit: int = 5) -> list[Hit]:
        """A ruleset section by number ("II.F", "Cardinal Rule 2") or name ("deck construction")."""
        return self._query(lambda st: names.section(st, ref, limit))

    def section_family(self, ref: str) -> list[tuple[str, Entry]]:
        """The sections a reference that matched nothing could have meant (all cardinal rules, all parts)."""
        return names.family(self._st, ref)

    def scope(self, rule_id: str, entry_id: str) -> tuple[int, ...] | None:
        """The paragraphs of ``entry_id`` that the linked rule ``rule_id`` concerns (``index.build.relations``);
        ``None`` when that is not clear (or the two are not linked)."""
        return self._st.scopes.get((rule_id, entry_id))

    def children(self, entry_id: str) -> list[Entry]:
        """The sub-headings (and theirs) under a section, in document order."""
        return names.children(self._st, entry_id)

    def complete_section(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        return names.complete(self._st.section_names, prefix, limit)

    def changes(
        self,
        since: str | None = None,
        until: str | None = None,
        source: str | None = None,
        overlay: Overlay | None = None,
    ) -> list[ChangeRecord]:
        """Every dated change, newest first (impossible dates placed by their probable date)."""
        records = history.changes(self._st, since, until, source)
        return overlay.merge_changes(records, since, until, source) if overlay is not None else records

    def banned(self, card: str) -> BannedResult:
        """Is this card on the banned list? Exact or close spelling counts; near misses are offered."""
        return history.banned(self._st, card)

    def banned_asked(self, question: str) -> BannedResult | None:
        """``banned`` for the card a free-text ban question names ("is Hida Kisada banned in OH?"); None when the
        question is not one (``index.query.ban_question``)."""
        return ban_question.banned_asked(self._st, question)

    def banned_list(self) -> list[BannedResult]:
        """Every banned-list record in document order, with the date it was banned where known."""
        return history.banned_list(self._st)

    def complete_banned(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        return history.complete_banned(self._st, prefix, limit)

    def stats(self) -> dict[str, Any]:
        st = self._st
        return {
            "files": list(st.corpus.files),
            "entries": len(st.corpus.entries),
            "by_source": dict(sorted(Counter(e.source for e in st.corpus.entries).items())),
            "by_kind": dict(sorted(Counter(e.kind for e in st.corpus.entries).items())),
            "errors": [str(e) for e in st.corpus.errors],
            "anomalies": len(st.corpus.anomalies),
            "build_seconds": st.meta.get("build_seconds"),
            "reload_seconds": self._reload_seconds,
            "built_at": st.meta.get("built_at"),
            "rebuilt": st.rebuilt,
            "index_dir": str(self.index_dir),
            "index_path": str(st.index_path) if st.index_path else None,
            "build_error": self._build_error,
            "fingerprint": st.meta.get("fingerprint"),
            "embedding_model": st.embedder.name if st.embedder is not None else None,
            "paragraphs": st.lex.n_units if st.lex is not None else None,
            # players' questions kept for paragraphs (index/build/asked.py) that the ranking uses: 0 with the model off
            "kept_questions": len(st.questions.texts) if st.question_vectors is not None else 0,
        }


def _search(
    st: State, question: str, limit: int, source: str | None, since: str | None, overlay: Overlay | None
) -> tuple[list[Hit], ranking.Evidence | None]:
    """The hits for a question on one build, a scope's rulings placed among them, and the evidence behind them."""
    found, ev = passages.search_with_evidence(st, question, limit, source, since)
    if overlay is None:
        return found, ev
    if not source and not since:  # the scope's confirmed questions first (its own kept questions)
        query = ev.query if ev is not None else None
        found = overlay.confirmed_first(found, question, limit, query, st.embedder.digest if st.embedder else None)
    # The one place shared ranking meets a scope's entries: index.query.overlay places them among the hits,
    # by words and by meaning (the question's vector from the ranking above, not embedded again).
    meaning = _meaning(st, ev, found)
    return overlay.merge_search(found, question, limit, _base_stats(st), source, since, meaning), ev


def _nearest(st: State, question: str, ev: ranking.Evidence | None, limit: int) -> list[Entry]:
    """Entries nearest to a question that nothing answers closely (by names when there is no evidence)."""
    if ev is None:
        return names.define(st, question, limit).candidates[:limit]
    rows = ranking.group(st, ranking.fuse(st, ev), limit)
    return [st.corpus.entries[n] for n, _p, _s in rows]


def _meaning(st: State, ev: ranking.Evidence | None, hits: list[Hit]) -> Meaning | None:
    """The question's vector and cosines from the shared ranking, for placing a scope's entries by meaning."""
    if ev is None or ev.query is None or ev.semantic is None or st.embedder is None or st.lex is None:
        return None
    lex = st.lex
    units = []
    for hit in hits:
        n = st.order[hit.entry.id]
        units.append(int(lex.entry_starts[n]) + max(hit.paragraph or 0, 0))
    return Meaning.of(st.embedder.digest, ev.query, ev.semantic, units)


def _base_stats(st: State) -> BaseStats:
    """The shared index's size and document frequencies (body field), read from Whoosh, the index of record."""

    def doc_frequency(term: str) -> int:
        with st.lock:
            return st.searcher.reader().doc_frequency("body", term)

    with st.lock:
        count = st.searcher.reader().doc_count()
    return BaseStats(count, doc_frequency)
