"""The on-disk Whoosh index: schema, fingerprint, atomic build and safe open.

Layout of the index folder::

    <index_dir>/CURRENT            JSON pointer: which build folder serves, and its fingerprint
    <index_dir>/build-<stamp>-<fp>/ a complete Whoosh index plus meta.json and manifest.json
    <index_dir>/.tmp-<pid>-<rand>/  a build in progress (never served)

A build writes into a fresh temporary folder, renames it into place and only then
replaces ``CURRENT`` (``os.replace`` is atomic), so a build that fails or is killed
midway leaves the previous index serving. The last file a build writes is ``manifest.json``:
the SHA-256 of every other file in the folder (whatever wrote it: Whoosh, meta.json, any file
another part of the build adds), checked whenever the build is opened, so flipped bytes in a
segment are noticed before they are served. Anything unreadable or failing the check is
rebuilt, with a log line.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from whoosh import index as whoosh_index
from whoosh.fields import ID, KEYWORD, TEXT, Schema
from whoosh.filedb.filestore import RamStorage
from whoosh.index import Index

from glossary.model import Change, Corpus, Entry
from index.build.progress import EVERY, INDEXING, Progress, silent
from index.text.analysis import STEMMED, WORDS, compact, fold

log = logging.getLogger("index")

# Bump when the schema, the analyzer or the document mapping changes: old indexes then rebuild.
SCHEMA_VERSION = 6  # 6: builds carry a checksum manifest, search arrays and paragraph vectors
POINTER = "CURRENT"
META = "meta.json"
MANIFEST = "manifest.json"
_HASH_CHUNK = 1 << 20
ENV_INDEX_DIR = "L5R_INDEX_DIR"

# Test hook: called after each document is added during a build (lets tests kill or fail a build midway).
after_document: Callable[[int], None] | None = None


class BuildError(Exception):
    """The index could not be written (folder not writable, disk full...)."""


def default_index_dir() -> Path:
    """``L5R_INDEX_DIR``, else ``$XDG_CACHE_HOME/l5r-judge/index``, else ``~/.cache/l5r-judge/index``."""
    configured = os.environ.get(ENV_INDEX_DIR, "").strip()
    if configured:
        return Path(configured).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(cache).expanduser() if cache else Path.home() / ".cache"
    return base / "l5r-judge" / "index"


def fingerprint(files: Iterable[Path]) -> str:
    """SHA-256 over the schema version and each source file's name and bytes (sorted by name)."""
    h = hashlib.sha256(f"schema:{SCHEMA_VERSION}\n".encode())
    for path in sorted(files, key=lambda p: (p.name, str(p))):
        h.update(path.name.encode("utf-8", "surrogateescape") + b"\0")
        try:
            data = path.read_bytes()
        except OSError as exc:
            data = f"<unreadable: {exc}>".encode()
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def corpus_digest(corpus: Corpus) -> str:
    """Hash of exactly what gets indexed (schema version + every document), so a parser change is noticed too."""
    h = hashlib.sha256(f"schema:{SCHEMA_VERSION}\n".encode())
    for entry in corpus.entries:
        h.update(json.dumps(entry_document(entry), ensure_ascii=False, sort_keys=True).encode())
        h.update(b"\0")
    return h.hexdigest()


def effective_date(change: Change) -> str | None:
    """The date used for sorting/filtering: the probable date of an impossible stamp, else the stamp's date."""
    if change.anomaly and change.probable_date:
        return change.probable_date
    return change.date


def make_schema() -> Schema:
    """Title/aliases/section/body share the stemmed rule analyzer; ``exact`` holds whole folded names."""
    return Schema(
        id=ID(stored=True, unique=True),
        title=TEXT(analyzer=STEMMED),
        aliases=TEXT(analyzer=STEMMED),
        exact=KEYWORD(commas=True),
        section=TEXT(analyzer=STEMMED),
        body=TEXT(analyzer=STEMMED),
        words=TEXT(analyzer=WORDS),  # unstemmed vocabulary for typo correction (never stemmed: fuzzy needs it)
        source=ID,
        kind=ID,
        change_kinds=KEYWORD(commas=True),
        dates=KEYWORD(commas=True),
    )


@functools.lru_cache(maxsize=1 << 16)
def name_variants(name: str) -> tuple[str, ...]:
    """Folded spellings of a title: itself, without a parenthetical, joined across it, each side of a slash.
    Cached: opening an index folds every title twice (its digest, then the name tables)."""
    out = [fold(name)]
    if "(" in name:
        out.append(fold(name.split("(")[0]))
        out.append(compact(name))
        out.append(fold(name.replace("(", "").replace(")", "")))
    if "/" in name:
        out.extend(fold(part) for part in name.split("/"))
    if ":" in name:
        out.append(fold(name.split(":")[0]))
    return tuple(v for v in dict.fromkeys(out) if v)


def entry_document(entry: Entry) -> dict[str, Any]:
    """The indexed form of one entry (the entry itself stays in memory, keyed by id)."""
    body_parts = list(entry.paragraphs)
    for extra in (entry.old_wording, entry.new_wording):
        if extra and extra not in entry.text:
            body_parts.append(extra)
    body = "\n".join(body_parts)
    names = [entry.title, *entry.aliases]
    exact = {v for n in names for v in name_variants(n)} | {compact(n) for n in names}
    dates = {d for d in (effective_date(c) for c in entry.changes) if d}
    return {
        "id": entry.id,
        "title": entry.title,
        "aliases": "\n".join(entry.aliases),
        "exact": ",".join(sorted(x.replace(",", " ") for x in exact if x)),
        "section": " \n".join(entry.section + ([entry.group] if entry.group else [])),
        "body": body,
        "words": "\n".join([*names, *entry.section, body]),
        "source": entry.source,
        "kind": entry.kind,
        "change_kinds": ",".join(sorted({c.kind for c in entry.changes})),
        "dates": ",".join(sorted(dates)),
    }


@dataclass
class Opened:
    """A readable index and what its meta says about it."""

    index: Index
    meta: dict[str, Any]
    path: Path | None


def read_pointer(index_dir: Path) -> dict[str, Any] | None:
    """The CURRENT pointer, or None if there is none (raises ValueError when it is garbage)."""
    pointer = index_dir / POINTER
    if not pointer.exists():
        return None
    data = json.loads(pointer.read_text("utf-8"))
    folder = data.get("dir") if isinstance(data, dict) else None
    if not isinstance(folder, str) or not folder.startswith("build-") or "/" in folder:
        raise ValueError("pointer file is not an index pointer")
    return data


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _build_files(folder: Path) -> dict[str, str]:
    """Every file under a build folder (relative POSIX path -> SHA-256), the manifest itself excepted."""
    return {
        path.relative_to(folder).as_posix(): _file_digest(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.relative_to(folder).as_posix() != MANIFEST
    }


def write_manifest(folder: Path) -> None:
    """Record the SHA-256 of every file in a finished build folder; call it after the last file is written."""
    manifest = {"algorithm": "sha256", "files": _build_files(folder)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), "utf-8")


def check_manifest(folder: Path) -> str | None:
    """Why a build folder does not match its manifest (a missing, changed or unlisted file), or None."""
    try:
        listed = json.loads((folder / MANIFEST).read_text("utf-8"))["files"]
        found = _build_files(folder)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"no readable checksum manifest ({type(exc).__name__}: {exc})"
    if not isinstance(listed, dict):
        return "no readable checksum manifest"
    for name, digest in sorted(listed.items()):
        if name not in found:
            return f"{name} is missing"
        if found[name] != digest:
            return f"{name} does not match its checksum"
    unlisted = sorted(set(found) - set(listed))
    if unlisted:
        return f"{unlisted[0]} is not in the checksum manifest"
    return None


def open_build(path: Path) -> Opened:
    """Open a build folder that was just written (by this process or a child): its index and meta."""
    meta = json.loads((path / META).read_text("utf-8"))
    return Opened(whoosh_index.open_dir(str(path)), meta, path)


def open_current(index_dir: Path, fp: str, digest: str) -> Opened | None:
    """Open the serving index if it is readable and built from these sources; else log why and return None."""
    try:
        pointer = read_pointer(index_dir)
    except (OSError, ValueError) as exc:
        log.warning("index at %s is unreadable (%s); rebuilding", index_dir, exc)
        return None
    if pointer is None:
        log.info("no index at %s yet; building", index_dir)
        return None
    if pointer.get("fingerprint") != fp:
        log.info("sources changed since the index was built; rebuilding")
        return None
    path = index_dir / pointer["dir"]
    try:
        meta = json.loads((path / META).read_text("utf-8"))
        if meta.get("corpus_digest") != digest:
            log.info("parsed entries differ from the indexed ones; rebuilding")
            return None
        problem = check_manifest(path)
        if problem is not None:
            log.warning("index at %s is unreadable: it failed its checksum check (%s); rebuilding", path, problem)
            return None
        ix = whoosh_index.open_dir(str(path))
        with ix.searcher() as s:
            count = s.doc_count()
            # touch the term index and stored fields so a truncated or garbled segment fails here, not later
            list(s.reader().lexicon("kind"))
            if count:
                s.stored_fields(0)
        if count != meta.get("entries"):
            raise ValueError(f"index holds {count} documents, meta says {meta.get('entries')}")
    except Exception as exc:  # any corruption: rebuild rather than crash
        log.warning("index at %s is unreadable (%s: %s); rebuilding", path, type(exc).__name__, exc)
        return None
    return Opened(ix, meta, path)


def _write(ix: Index, corpus: Corpus, progress: Progress = silent) -> None:
    """Add every entry in one commit; a failure midway cancels the writer so nothing half-written is kept."""
    writer = ix.writer()
    total = len(corpus.entries)
    progress(INDEXING, 0, total)
    try:
        for n, entry in enumerate(corpus.entries):
            writer.add_document(**entry_document(entry))
            if after_document is not None:
                after_document(n)
            if (n + 1) % EVERY == 0:
                progress(INDEXING, n + 1, total)
    except BaseException:
        writer.cancel()
        raise
    writer.commit()
    progress(INDEXING, total, total)


def build(
    corpus: Corpus,
    index_dir: Path,
    fp: str,
    digest: str,
    extra: Callable[[Index, Path], None] | None = None,
    progress: Progress = silent,
) -> Opened:
    """Build a fresh index in a temp folder and atomically make it the serving one.

    ``extra(ix, folder)`` writes further files of the build (search arrays, paragraph vectors) into the
    temp folder before it is renamed into place, so they are as atomic as the Whoosh files.
    """
    started = time.perf_counter()
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{os.getpid()}-", dir=index_dir))
    except OSError as exc:
        raise BuildError(f"cannot write the index folder {index_dir}: {exc.strerror or exc}") from None
    try:
        ix = whoosh_index.create_in(str(tmp), make_schema())
        _write(ix, corpus, progress)
        if extra is not None:
            extra(ix, tmp)
        ix.close()
        meta = _meta(corpus, fp, digest, started)
        (tmp / META).write_text(json.dumps(meta, indent=1), "utf-8")
        # Last: anything written into the build folder before this line is covered by the checksum check.
        write_manifest(tmp)
        name = f"build-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}-{fp[:10]}"
        final = index_dir / name
        os.rename(tmp, final)
        pointer_tmp = index_dir / f".{POINTER}.{os.getpid()}.tmp"
        pointer_tmp.write_text(json.dumps({"dir": name, "fingerprint": fp, "built_at": meta["built_at"]}), "utf-8")
        os.replace(pointer_tmp, index_dir / POINTER)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise BuildError(f"cannot write the index in {index_dir}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _cleanup(index_dir, keep={name})
    log.info("built index of %d entries in %.2fs at %s", len(corpus.entries), time.perf_counter() - started, final)
    return Opened(whoosh_index.open_dir(str(final)), meta, final)


def build_in_memory(corpus: Corpus, fp: str, digest: str, progress: Progress = silent) -> Opened:
    """Fallback when the index folder cannot be written: serve from RAM rather than not at all."""
    started = time.perf_counter()
    ix = RamStorage().create_index(make_schema())
    _write(ix, corpus, progress)
    return Opened(ix, _meta(corpus, fp, digest, started), None)


def _meta(corpus: Corpus, fp: str, digest: str, started: float) -> dict[str, Any]:
    """What an index records about itself: the fingerprint that decides staleness, and build figures."""
    return {
        "schema": SCHEMA_VERSION,
        "fingerprint": fp,
        "corpus_digest": digest,
        "entries": len(corpus.entries),
        "files": list(corpus.files),
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "build_seconds": round(time.perf_counter() - started, 4),
    }


def _pid_alive(pid: int) -> bool:
    """Whether a builder process still runs (EPERM means it does, under another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _cleanup(index_dir: Path, keep: set[str]) -> None:
    """Remove builds older than the previous one and temp folders of dead builders.

    The previous build is kept: a searcher opened on it in another thread may still be reading.
    """
    builds = sorted((p for p in index_dir.glob("build-*") if p.is_dir()), key=lambda p: p.name)
    for old in builds[:-2]:
        if old.name not in keep:
            shutil.rmtree(old, ignore_errors=True)
    for tmp in index_dir.glob(".tmp-*"):
        with contextlib.suppress(ValueError, IndexError):
            pid = int(tmp.name.split("-")[1])
            if pid != os.getpid() and not _pid_alive(pid):
                shutil.rmtree(tmp, ignore_errors=True)
    for stale in index_dir.glob(f".{POINTER}.*.tmp"):
        with contextlib.suppress(ValueError, IndexError, OSError):
            if not _pid_alive(int(stale.name.split(".")[2])):
                stale.unlink()
