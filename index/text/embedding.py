"""The sentence-embedding model: text -> unit vector, with onnxruntime and tokenizers (no PyTorch).

Players ask in their own words ("can my courtier kill himself to cut down an honor loss"),
which share few words with the rule that answers them; a sentence-embedding model places
the question near the paragraph by meaning. The model ships inside this package
(``models/all-MiniLM-L6-v2-l5r-int8``: int8 ONNX, its tokenizer, licence and a README saying
where it comes from). ``L5R_EMBEDDING_MODEL`` points at another folder of the same layout,
or is ``off``. A model that is missing or fails to load costs one log line: search then
ranks by words alone and still answers.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from index.text import threads

log = logging.getLogger("index")

ENV_MODEL = "L5R_EMBEDDING_MODEL"
OFF = "off"
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "all-MiniLM-L6-v2-l5r-int8"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
POOLING_FILE = Path("1_Pooling") / "config.json"
RUN = "one text per call"  # see ``Embedder.embed``; part of ``Embedder.digest``
MAX_TOKENS = 256  # the model's own max_seq_length (sentence_bert_config.json)
# onnxruntime intra-op threads. One: the bot runs on small machines next to other work, with two lookup workers
# that may each run the model; on the loaded two-core host one thread ran a question 10-20% faster than two
# (alternated per question), and the vectors are bit-identical either way (docs/search.md).
THREADS = 1
# onnxruntime's pool threads busy-wait for the next piece of work by default. Beside a second thread pool
# (numpy's BLAS) on a busy two-core host that spinning took the CPU the paragraph scan needed: a matvec of
# 0.05 ms took 7.7-12.7 ms right after a model run. Idle threads sleep instead (docs/search.md).
NO_SPINNING = {"session.intra_op.allow_spinning": "0", "session.inter_op.allow_spinning": "0"}


TELEMETRY_OFF = {"ORT_DISABLE_TELEMETRY": "1"}


def no_telemetry() -> None:
    """Turn onnxruntime's telemetry off before it is imported: on import it would write a device id and a
    queue of events (OS, CPU, memory, the interpreter's path) under ``~/.cache/Microsoft``, for upload. The
    judge sends nothing anywhere; the setting is inherited by the processes that build a reload."""
    os.environ.update(TELEMETRY_OFF)


class _Configured:
    """The default of a ``model`` argument: the folder ``configured_model()`` names (read when it is used)."""

    def __repr__(self) -> str:
        return "CONFIGURED"

    def __reduce__(self) -> str:  # the same object after pickling into a build child
        return "CONFIGURED"


CONFIGURED: Any = _Configured()


class ModelError(Exception):
    """The configured model folder cannot be used; the message says why in one line."""


def configured_model() -> Path | None:
    """The model folder from ``L5R_EMBEDDING_MODEL`` (``off`` -> None), else the shipped one."""
    value = os.environ.get(ENV_MODEL, "").strip()
    if value.lower() == OFF:
        return None
    return Path(value).expanduser() if value else DEFAULT_MODEL


def check_model_setting(value: str) -> str | None:
    """Why ``value`` is not a usable ``L5R_EMBEDDING_MODEL`` (None when it is): for settings validation."""
    value = value.strip()
    if not value or value.lower() == OFF:
        return None
    folder = Path(value).expanduser()
    if not folder.is_dir():
        return f"not a folder: {value!r} (use a model folder or 'off')"
    missing = [name for name in (MODEL_FILE, TOKENIZER_FILE) if not (folder / name).is_file()]
    if missing:
        return f"{value!r} has no {' or '.join(missing)} (use a model folder or 'off')"
    return None


def model_digest(folder: Path) -> str:
    """SHA-256 over the files that decide the vectors (weights, tokenizer, pooling), so a swap rebuilds."""
    h = hashlib.sha256(b"embedding-model:1\n")
    for rel in (MODEL_FILE, TOKENIZER_FILE, str(POOLING_FILE)):
        path = folder / rel
        h.update(rel.encode() + b"\0")
        if path.is_file():
            with path.open("rb") as f:
                h.update(hashlib.file_digest(f, "sha256").digest())
        else:
            h.update(b"<absent>")
    return h.hexdigest()


class Embedder:
    """One loaded model: ``embed`` gives L2-normalised float32 rows, so cosine similarity is a dot product."""

    def __init__(self, folder: Path) -> None:
        no_telemetry()
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.folder = folder
        for rel in (MODEL_FILE, TOKENIZER_FILE):
            if not (folder / rel).is_file():
                raise ModelError(f"{folder} has no {rel}")
        # the way texts are run is part of what decides a vector: batched vectors (before) are not reused
        self.digest = hashlib.sha256(f"{model_digest(folder)}\nrun:{RUN}".encode()).hexdigest()
        self.name = folder.name
        self._tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()  # the shipped tokenizer.json pads to 128; batches are padded here instead
        options = ort.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about unused initialisers are noise in a bot's log
        for key, value in NO_SPINNING.items():
            options.add_session_config_entry(key, value)
        self._session = ort.InferenceSession(str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()  # tokenizers' padding state is per object; keep encode calls serial
        threads.limit_blas()  # the scan beside the model: see ``index.text.threads``
        probe = self._run(["probe"])
        self.dim = int(probe.shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for ``texts`` (one row each), each text run on its own.

        The int8 model quantises its activations with one scale per call, computed over everything in the
        call: batched, a text's vector moved with its batch-mates (cosines as low as 0.975), so the same
        corpus ranked differently after a cold build and after a cached rebuild, and kept questions were
        not embedded as a player's question is. Alone, a vector depends on its text only, which is also
        what the (model, text) cache assumes. It costs about twice the time of batches of 8.
        """
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._run([text])[0]
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """One question's vector (1-D)."""
        return self._run([text])[0]

    def embed_question(self, text: str) -> tuple[np.ndarray, float]:
        """One question's vector (1-D) and the share of its tokens the model reads (``read_share``), from one
        tokenization: a search needs both, and tokenizing twice was a tenth of the model's time."""
        with self._lock:
            enc = self._tokenizer.encode(text)
        return self._run_encoded([enc])[0], read_share(enc)

    def _run(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            encodings = self._tokenizer.encode_batch(texts)
        return self._run_encoded(encodings)

    def _run_encoded(self, encodings: list[Any]) -> np.ndarray:
        """Unit vectors for tokenized texts (``tokenizers.Encoding``), one row each."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = enc.attention_mask
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]
        # Mean pooling over real tokens (1_Pooling/config.json: pooling_mode_mean_tokens), then L2 norm.
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def read_share(enc: Any) -> float:
    """The share of an encoded text's tokens the model reads (it stops at ``MAX_TOKENS``): 1.0 for any question
    of ordinary length, less for a long paste, whose vector then speaks only for its start."""
    rest = sum(len(o.ids) for o in enc.overflowing)
    return len(enc.ids) / (len(enc.ids) + rest) if rest else 1.0


_cache: dict[str, Embedder | None] = {}
_cache_lock = threading.Lock()


def load(folder: Path | None) -> Embedder | None:
    """The embedder for ``folder`` (None: off), loaded once per process; a failure logs one line -> None."""
    if folder is None:
        return None
    key = str(folder.resolve()) if folder.exists() else str(folder)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        try:
            embedder: Embedder | None = Embedder(folder)
        except Exception as exc:  # any failure: answer by words alone rather than not at all
            log.warning(
                "embedding model %s unavailable (%s: %s); ranking by words only",
                folder,
                type(exc).__name__,
                str(exc).splitlines()[0] if str(exc) else "",
            )
            embedder = None
        _cache[key] = embedder
        return embedder
