"""Paragraph vectors: computed at build time into the build folder, cached by (model, text) across builds.

Each answer unit (a paragraph, see ``lexical.units``) is embedded with its entry's title and
section path as context, so "may I keep two of the same card" can land on a paragraph that
only says "copies". The vectors are written into the build's temporary folder before it is
renamed into place, so they are exactly as atomic and fingerprinted as the Whoosh index
they sit beside. Embedding is the slow part of a build, so every vector is also kept in a
cache keyed by (model digest, text): a rebuild after editing one file embeds only the
paragraphs whose text changed.

Each sentence of a paragraph of two or more has a vector too (``sentences``), embedded with the paragraph's
context like the paragraph: a hit points at the sentence closest to the question (``index.query.sentences``).
They are not scanned with the paragraphs; only the quoted paragraph's few are read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

import numpy as np

from glossary.model import Corpus, Entry
from index.build.asked import NONE, Asked
from index.build.lexical import Unreadable, units
from index.build.progress import EMBEDDING, EVERY, Progress, silent
from index.text.embedding import Embedder
from index.text.sentence_spans import worded

log = logging.getLogger("index")

FILE = "vectors.npy"
META = "vectors.json"
SENTENCES = "sentences.npy"  # where each embedded sentence stands: (entry number, paragraph, start, end) per row
CACHE_DIR = "vector-cache"
CACHE_LIMIT = 400_000  # cached vectors kept per model (~600 MB at 384 dimensions); the newest build's first


def embed_text(entry: Entry, paragraph: int) -> str:
    """What a paragraph is embedded as: its section path and title as context, then its words."""
    return in_context(entry, entry.paragraphs[paragraph] if paragraph >= 0 else "")


def in_context(entry: Entry, body: str) -> str:
    """``body`` (a paragraph or one of its sentences) after its entry's section path and title."""
    context = [s for s in entry.section if s != entry.title and not s.lower().startswith("glossary")]
    head = " › ".join([*context, entry.title])
    return f"{head}: {body}" if body else head


Sentences = list[tuple[int, int, list[tuple[int, int]]]]  # (entry number, paragraph, its sentences' spans)


def sentences(corpus: Corpus) -> Sentences:
    """Every paragraph of two or more sentences (``sentence_spans.worded``: stamps standing alone left out), in
    corpus order, with where its sentences stand. A one-sentence paragraph has none: its vector is its own."""
    out: Sentences = []
    for n, entry in enumerate(corpus.entries):
        for p, text in enumerate(entry.paragraphs):
            spans = worded(text)
            if len(spans) > 1:
                out.append((n, p, spans))
    return out


def sentence_texts(corpus: Corpus, found: Sentences) -> list[str]:
    """What each sentence is embedded as: its paragraph's context (section path and title), then the sentence."""
    return [
        in_context(corpus.entries[n], corpus.entries[n].paragraphs[p][a:b]) for n, p, spans in found for a, b in spans
    ]


def unit_texts(corpus: Corpus) -> list[str]:
    ent, par = units(corpus)
    return [embed_text(corpus.entries[n], p) for n, p in zip(ent.tolist(), par.tolist(), strict=True)]


KEY_BYTES = 20


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:KEY_BYTES]


def _cache_file(cache_dir: Path, embedder: Embedder) -> Path:
    return cache_dir / f"{embedder.digest[:24]}.npz"


def _read_cache(path: Path, dim: int) -> dict[bytes, np.ndarray]:
    """The cached vectors of one model; an unreadable cache is only a slower build, never an error."""
    try:
        with np.load(path, allow_pickle=False) as data:
            keys, vecs = data["keys"], data["vectors"]
    except FileNotFoundError:
        return {}
    except Exception as exc:  # any damage: start the cache afresh
        log.warning("vector cache %s unreadable (%s); embedding afresh", path, type(exc).__name__)
        return {}
    if vecs.ndim != 2 or vecs.shape[1] != dim or len(keys) != len(vecs):
        return {}
    if keys.ndim != 2 or keys.dtype != np.uint8:
        return {}
    return {k.tobytes(): vecs[i] for i, k in enumerate(keys)}


def _write_cache(path: Path, keys: list[bytes], vecs: np.ndarray) -> None:
    """Replace the cache file atomically; a failure (read-only folder) is logged and otherwise ignored."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".cache-", suffix=".npz", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            # raw bytes as a uint8 matrix: numpy's "S" strings would drop a digest's trailing zero bytes
            raw = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)
            np.savez(f, keys=raw, vectors=vecs)
        os.replace(tmp, path)
    except OSError as exc:
        log.info("vector cache not written (%s)", exc.strerror or exc)
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)


def asked_texts(asked: Asked) -> list[str]:
    """What a player's question kept for a paragraph (``index.build.asked``) is embedded as: the question alone.

    It is compared with the question a player types, so it is embedded the way that one is.
    """
    return list(asked.texts)


def compute(
    corpus: Corpus,
    embedder: Embedder,
    cache_dir: Path | None,
    asked: Asked = NONE,
    progress: Progress = silent,
    unanswered: tuple[str, ...] = (),
    found: Sentences | None = None,
) -> np.ndarray:
    """Vectors for every unit, then for every kept question (``asked``), then for every question kept as not
    covered (``unanswered``, embedded alone like a player's), then for every sentence (``found``), embedding
    only texts the cache has not seen with this model; ``progress`` hears of them every ``EVERY`` texts (it is
    the slow part)."""
    texts = unit_texts(corpus) + asked_texts(asked) + list(unanswered) + sentence_texts(corpus, found or [])
    keys = [_key(t) for t in texts]
    cache_path = _cache_file(cache_dir, embedder) if cache_dir is not None else None
    cached = _read_cache(cache_path, embedder.dim) if cache_path is not None else {}
    missing = [i for i, k in enumerate(keys) if k not in cached]
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    if missing:
        progress(EMBEDDING, 0, len(missing))
        for start in range(0, len(missing), EVERY):  # one text per call anyway (Embedder.embed): same vectors
            chunk = missing[start : start + EVERY]
            fresh = embedder.embed([texts[i] for i in chunk])
            for row, i in enumerate(chunk):
                cached[keys[i]] = fresh[row]
            progress(EMBEDDING, start + len(chunk), len(missing))
    for i, k in enumerate(keys):
        out[i] = cached[k]
    fresh_n, all_n = len(missing), len(texts)
    log.info(
        "embedded %d of %d paragraphs, questions and sentences (%d from the cache)", fresh_n, all_n, all_n - fresh_n
    )
    if cache_path is not None and missing:
        current = dict.fromkeys(keys)
        older = [k for k in cached if k not in current][: max(0, CACHE_LIMIT - len(current))]
        order = list(current) + older
        _write_cache(cache_path, order, np.stack([cached[k] for k in order]) if order else out[:0])
    return out


def write(folder: Path, vectors: np.ndarray, embedder: Embedder) -> None:
    np.save(folder / FILE, vectors)
    meta = {"model": embedder.name, "digest": embedder.digest, "dim": embedder.dim, "count": int(len(vectors))}
    (folder / META).write_text(json.dumps(meta), "utf-8")


def read(folder: Path, embedder: Embedder, count: int) -> np.ndarray:
    """The build's vectors, checked against the model and the paragraph + question count (else ``Unreadable``)."""
    try:
        meta = json.loads((folder / META).read_text("utf-8"))
        vectors = np.load(folder / FILE, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise Unreadable(f"{FILE}: {exc}") from None
    if meta.get("digest") != embedder.digest:
        raise Unreadable(f"{FILE}: built with another model")
    if vectors.dtype != np.float32 or vectors.shape != (count, embedder.dim):
        raise Unreadable(f"{FILE}: shape {vectors.shape} does not match {count} paragraphs and questions")
    return vectors


def write_sentences(folder: Path, found: Sentences) -> None:
    """Where the build's sentence vectors stand, so that opening the build need not cut every paragraph again
    (a quarter of a second at 100x)."""
    rows = [(n, p, a, b) for n, p, spans in found for a, b in spans]
    np.save(folder / SENTENCES, np.asarray(rows, dtype=np.int32).reshape(-1, 4))


def read_sentences(folder: Path, corpus: Corpus) -> Sentences:
    """The build's sentences (``write_sentences``), checked against the corpus (else ``Unreadable``: rebuilt)."""
    try:
        rows = np.load(folder / SENTENCES, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise Unreadable(f"{SENTENCES}: {exc}") from None
    if rows.ndim != 2 or rows.shape[1] != 4:
        raise Unreadable(f"{SENTENCES}: shape {rows.shape}")
    out: Sentences = []
    for n, p, a, b in rows.tolist():
        if not (0 <= n < len(corpus.entries) and 0 <= p < len(corpus.entries[n].paragraphs)):
            raise Unreadable(f"{SENTENCES}: a sentence of a paragraph this corpus does not have")
        if out and out[-1][0] == n and out[-1][1] == p:
            out[-1][2].append((a, b))
        else:
            out.append((n, p, [(a, b)]))
    return out
