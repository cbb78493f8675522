"""Parsing the sources and building a fresh index for a reload: in a child process, and only when safe.

A reload parses every source file and writes a Whoosh index. Doing that in the bot's own process
holds the GIL in long stretches (one regular expression call is never interrupted), so the event
loop stalls and Discord interactions expire. ``prepare_in_child`` runs the whole job in a freshly
spawned interpreter; the parent only opens the finished build (``store.open_build``) and derives its
in-memory tables.

A reload must also never replace a good index with a worse one because a source folder was briefly
missing or unreadable: ``reload_refusal`` compares the new parse with the serving one, and a reload
that would lose a file or most of the entries is refused (the old build keeps serving) with a reason.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from glossary.model import Corpus, SourceError
from index.build import asked, lexical, store, unanswered, vectors
from index.build.progress import PARSING, Progress, silent
from index.text import embedding, sentence_spans

#: A reload giving fewer than this share of the serving entries is refused (a folder half gone, say).
KEEP_SHARE = 0.5
#: How long a child may take to parse and build before the reload is abandoned (the child is killed).
CHILD_TIMEOUT = 600.0


class ReloadRefused(Exception):
    """A reload was not applied; the message says why (shown to whoever asked for the reload)."""


class ReloadFailed(Exception):
    """The child process parsing and building a reload failed; the message carries its error."""


@dataclass(frozen=True)
class Baseline:
    """What the serving build was made from: the reload is compared with it."""

    files: tuple[str, ...]
    entries: int

    @classmethod
    def of(cls, corpus: Corpus) -> Baseline:
        return cls(tuple(corpus.files), len(corpus.entries))


def reload_refusal(baseline: Baseline, corpus: Corpus) -> str | None:
    """Why ``corpus`` must not replace the serving build, or None when it may.

    Refused: a source file that loaded before and does not now (moved, unreadable, broken), or fewer
    than half the entries. To remove a source on purpose, restart the bot (a start has nothing to lose).
    """
    lost = [f for f in baseline.files if f not in corpus.files]
    if lost:
        why = "; ".join(str(e) for e in corpus.errors[:3]) or "not found"
        names = ", ".join(lost[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
        return f"{len(lost)} source file(s) that are being served did not load: {names} ({why})"
    if len(corpus.entries) < baseline.entries * KEEP_SHARE:
        return (
            f"the sources now give {len(corpus.entries)} entries, fewer than half of the {baseline.entries} "
            "being served"
        )
    return None


def with_model(fp: str, embedder: embedding.Embedder | None) -> str:
    """The sources' fingerprint extended with the model, the kept questions (``index.build.asked``), the array
    layout and the sentence cutting (it decides which sentences have vectors): changing any of them rebuilds."""
    model = embedder.digest if embedder is not None else "none"
    kept = asked.fingerprint() if embedder is not None else "none"
    unasked = unanswered.fingerprint() if embedder is not None else "none"
    layout = f"lexical:{lexical.VERSION}\nsentences:{sentence_spans.VERSION}"
    return hashlib.sha256(f"{fp}\nmodel:{model}\nasked:{kept}\nunanswered:{unasked}\n{layout}".encode()).hexdigest()


def array_writer(
    corpus: Corpus, embedder: embedding.Embedder | None, index_dir: Path, progress: Progress = silent
) -> Callable[[Any, Path], None]:
    """The ``store.build`` hook: search arrays and paragraph vectors (through the vector cache) into the build."""
    from index.build.state import write_arrays

    cache_dir = index_dir / vectors.CACHE_DIR
    return partial(write_arrays, corpus=corpus, embedder=embedder, cache_dir=cache_dir, progress=progress)


@dataclass
class Prepared:
    """The outcome of parsing (and, for a reload, building): everything the parent needs to serve it."""

    corpus: Corpus | None
    fingerprint: str = ""
    digest: str = ""
    path: Path | None = None  # the finished build folder (None: not built, or could not be written)
    build_error: str | None = None  # why the build folder could not be written (the caller serves from RAM)
    refused: str | None = None  # why the reload was refused (nothing was built)
    errors: list[tuple[str, str, int | None]] = field(default_factory=list)  # SourceErrors, portable form


_UNSET: Any = object()


def prepare(
    sources: list[Path] | None,
    index_dir: Path,
    baseline: Baseline | None = None,
    *,
    build: bool = True,
    embedder: embedding.Embedder | None = _UNSET,
    model: Path | None = embedding.CONFIGURED,
    progress: Progress = silent,
) -> Prepared:
    """Fingerprint and parse the sources, refuse a lossy reload, and (``build``) write a fresh index with its
    search arrays and paragraph vectors. ``embedder``: the model already loaded by the caller (a child
    process loads ``model``, the folder its parent uses, itself). ``progress`` hears of each stage."""
    from glossary.loader import default_sources, expand, load_corpus

    if embedder is _UNSET:
        embedder = embedding.load(embedding.configured_model() if model is embedding.CONFIGURED else model)
    # Fingerprint before parsing: a file edited in between leaves a stale fingerprint, which the next
    # open notices, never a fresh fingerprint over stale entries.
    files, _ = expand(default_sources() if sources is None else [Path(p) for p in sources])
    fp = with_model(store.fingerprint(files), embedder)
    progress(PARSING, 0, len(files))
    corpus = load_corpus(sources)
    progress(PARSING, len(files), len(files))
    if baseline is not None:
        refused = reload_refusal(baseline, corpus)
        if refused is not None:
            return Prepared(None, fp, refused=refused)
    digest = store.corpus_digest(corpus)
    prepared = Prepared(corpus, fp, digest)
    if build:
        try:
            prepared.path = write_build(corpus, index_dir, fp, digest, embedder, progress).path
        except store.BuildError as exc:
            prepared.build_error = str(exc)
    return prepared


def write_build(
    corpus: Corpus,
    index_dir: Path,
    fp: str,
    digest: str,
    embedder: embedding.Embedder | None,
    progress: Progress = silent,
) -> store.Opened:
    """The one place a build folder is written: the Whoosh files plus the search arrays and paragraph
    vectors (``array_writer``), here or in a reload's child. Raises ``store.BuildError``."""
    extra = array_writer(corpus, embedder, index_dir, progress)
    return store.build(corpus, index_dir, fp, digest, extra=extra, progress=progress)


def _child(conn: Connection, args: tuple[Any, ...]) -> None:
    """Entry point of the spawned process: run ``prepare`` and send back its outcome (or the error)."""
    try:
        *positional, model = args
        prepared = prepare(*positional, model=model)
        if prepared.corpus is not None:  # SourceError does not pickle (its args differ from __init__'s)
            prepared.errors = [(e.file, e.reason, e.line) for e in prepared.corpus.errors]
            prepared.corpus.errors = []
        conn.send((True, prepared))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it there
        conn.send((False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"))
    finally:
        conn.close()


def prepare_in_child(
    sources: list[Path] | None,
    index_dir: Path,
    baseline: Baseline | None = None,
    *,
    model: Path | None = embedding.CONFIGURED,
    timeout: float = CHILD_TIMEOUT,
) -> Prepared:
    """``prepare(..., build=True)`` in a freshly spawned interpreter, so this process (and its event loop)
    never runs the parse or the build; the calling thread just waits on a pipe."""
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(
        target=_child, args=(send, (sources, index_dir, baseline, model)), name="l5r-index-build", daemon=True
    )
    started = time.monotonic()
    proc.start()
    send.close()
    try:
        if not receive.poll(timeout):
            raise ReloadFailed(f"parsing and building took longer than {timeout:.0f} s; abandoned")
        ok, outcome = receive.recv()
    except EOFError:
        raise ReloadFailed(f"the build process died (exit code {proc.exitcode})") from None
    finally:
        if proc.is_alive() and time.monotonic() - started >= timeout:
            proc.kill()
        proc.join()
        receive.close()
    if not ok:
        raise ReloadFailed(f"the build process failed: {outcome.splitlines()[0]}")
    if outcome.corpus is not None:
        outcome.corpus.errors = [SourceError(file, reason, line) for file, reason, line in outcome.errors]
    return outcome
