"""The judge's search engine: define, complete, search, section, changes, banned over one corpus.

Entries stay in memory (the corpus is loaded anyway, and answers quote them verbatim);
Whoosh ranks them. Name lookups (``names``) run over in-memory tables; free-text questions
(``fulltext``) go to Whoosh with a query built from our own tokens; ``history`` answers
changes and the banned list. All per-build tables live in one ``State`` (``state``) that
``reload`` replaces with a single assignment; each call reads ``self._state`` once and
uses only that object, so a reload never mixes two builds inside one answer.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

from glossary.model import Corpus, Entry
from index import embedding, fulltext, history, lexical, names, ranking, store, vectors
from index.overlay import BaseStats, Overlay
from index.results import BannedResult, ChangeRecord, DefineResult, Hit
from index.state import State, build_state, write_arrays

log = logging.getLogger("index")

RETIRE_SECONDS = 30.0  # how long a replaced state stays open for queries that grabbed it before a reload


def with_model(fp: str, embedder: embedding.Embedder | None) -> str:
    """The sources' fingerprint extended with the model and the array layout: changing either rebuilds."""
    model = embedder.digest if embedder is not None else "none"
    return hashlib.sha256(f"{fp}\nmodel:{model}\nlexical:{lexical.VERSION}".encode()).hexdigest()


class Engine:
    """Search engine over one corpus; see the module docstring. Thread-safe for readers and reloads."""

    def __init__(self, sources: list[Path] | None, index_dir: Path, corpus: Corpus | None = None) -> None:
        self.sources = sources
        self.index_dir = index_dir
        self._fixed_corpus = corpus
        self._reload_lock = threading.Lock()  # one build at a time; readers never take it
        self._state: State | None = None

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
    def _st(self) -> State:
        st = self._state
        if st is None:  # pragma: no cover - open() always loads
            raise RuntimeError("engine not loaded")
        return st

    def reload(self) -> dict[str, Any]:
        """Re-read the sources and rebuild; the new index is swapped in only once complete."""
        self._load(force=True)
        return self.stats()

    def _load(self, force: bool) -> None:
        from glossary.loader import default_sources, expand, load_corpus

        with self._reload_lock:
            if self._fixed_corpus is not None:
                corpus = self._fixed_corpus
                digest = store.corpus_digest(corpus)
                fp = "corpus:" + digest
            else:
                # Fingerprint before parsing: a file edited in between leaves a stale fingerprint, which the
                # next open notices, never a fresh fingerprint over stale entries.
                files, _ = expand(default_sources() if self.sources is None else [Path(p) for p in self.sources])
                fp = store.fingerprint(files)
                corpus = load_corpus(self.sources)
                digest = store.corpus_digest(corpus)
            embedder = embedding.load(embedding.configured_model())
            fp = with_model(fp, embedder)
            cache_dir = self.index_dir / vectors.CACHE_DIR
            opened = None if force else store.open_current(self.index_dir, fp, digest)
            state = None
            if opened is not None:
                try:
                    state = build_state(corpus, opened, False, embedder, cache_dir)
                except lexical.Unreadable as exc:
                    log.warning("index at %s is unreadable (%s); rebuilding", opened.path, exc)
            if state is None:
                try:
                    extra = partial(write_arrays, corpus=corpus, embedder=embedder, cache_dir=cache_dir)
                    opened = store.build(corpus, self.index_dir, fp, digest, extra=extra)
                except store.BuildError as exc:
                    log.error("%s; serving an in-memory index instead", exc)
                    opened = store.build_in_memory(corpus, fp, digest)
                state = build_state(corpus, opened, True, embedder, cache_dir)
            old, self._state = self._state, state
        if old is not None:
            # Readers that grabbed the old state may still be mid-query; close it once they are done.
            timer = threading.Timer(RETIRE_SECONDS, old.close)
            timer.daemon = True
            timer.start()

    def close(self) -> None:
        """Release the searcher (tests and short-lived CLIs)."""
        if self._state is not None:
            self._state.close()

    # ---------------------------------------------------------------- queries
    # ``overlay``: a scope's own entries (index.overlay), merged into the shared answers; None = shared only.
    def get(self, entry_id: str, overlay: Overlay | None = None) -> Entry | None:
        found = overlay.get(entry_id) if overlay is not None else None
        return found or self._st.by_id.get(entry_id)

    def define(self, term: str, limit: int = 5, overlay: Overlay | None = None) -> DefineResult:
        """Exact title/alias, then prefix, then plural/typo tolerant, then full text."""
        result = names.define(self._st, term, limit)
        return overlay.merge_define(term, result, limit) if overlay is not None else result

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
        st = self._st
        hits = fulltext.search(st, question, limit, source, since)
        if overlay is None:
            return hits
        # The one place shared ranking meets a scope's entries: index.overlay places them among the hits.
        return overlay.merge_search(hits, question, limit, _base_stats(st), source, since)

    def nearest_terms(self, question: str, limit: int = 5) -> list[Entry]:
        """Entries nearest to a question that nothing answers closely: offered as "nearest terms"."""
        st = self._st
        ev = ranking.evidence(st, question)
        if ev is None:
            return names.define(st, question, limit).candidates[:limit]
        rows = ranking.group(st, ranking.fuse(st, ev), limit)
        return [st.corpus.entries[n] for n, _p, _s in rows]

    def section(self, ref: str, limit: int = 5) -> list[Hit]:
        """A ruleset section by number ("II.F", "Cardinal Rule 2") or name ("deck construction")."""
        return names.section(self._st, ref, limit)

    def section_family(self, ref: str) -> list[tuple[str, Entry]]:
        """The sections a reference that matched nothing could have meant (all cardinal rules, all parts)."""
        return names.family(self._st, ref)

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
            "built_at": st.meta.get("built_at"),
            "rebuilt": st.rebuilt,
            "index_dir": str(self.index_dir),
            "index_path": str(st.index_path) if st.index_path else None,
            "fingerprint": st.meta.get("fingerprint"),
            "embedding_model": st.embedder.name if st.embedder is not None else None,
            "paragraphs": st.lex.n_units if st.lex is not None else None,
        }


def _base_stats(st: State) -> BaseStats:
    """The shared index's size and document frequencies (body field), read from Whoosh, the index of record."""

    def doc_frequency(term: str) -> int:
        with st.lock:
            return st.searcher.reader().doc_frequency("body", term)

    with st.lock:
        count = st.searcher.reader().doc_count()
    return BaseStats(count, doc_frequency)
