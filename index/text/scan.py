"""The vector scan: one question's cosine with every paragraph and kept question (issue 20, "fast on a loaded host").

Up to ``INT8_FROM`` rows the scan is numpy's float32 matrix-vector product over the one contiguous matrix, exact
and cheap (the shipped corpus has about 2,300 rows: a fraction of a millisecond). Past that, reading the float32
matrix is what a search costs most (36,800 x 384 float32 is 56 MB a question, 5.6 ms on an idle core here,
several times that beside other work), so large corpora are scanned from an int8 copy with one scale per row
(a quarter of the bytes) by onnxruntime's ``DynamicQuantizeMatMul``, which quantises the question on the fly and
uses the processor's int8 dot-product instructions: about 1 ms for the same scan. Its cosines differ from the
float32 ones by a few thousandths; ``docs/search.md`` states what that did to the answers on the 100x corpus.
The graph is a fixed 177-byte file (``index/models/int8-scan``); the corpus's vectors are handed to its session.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from index.text.embedding import NO_SPINNING, no_telemetry

log = logging.getLogger(__name__)

GRAPH = Path(__file__).resolve().parent.parent / "models" / "int8-scan" / "scan.onnx"
INT8_FROM = 16_384  # rows; below this the float32 scan is exact and already cheap


class Scan:
    """``scan(q)`` -> float32 cosines of the unit vector ``q`` with every row of ``matrix`` (rows are unit vectors).

    ``int8`` says which way it scans; a session that cannot be made (an onnxruntime without the operator) logs one
    line and the float32 product is used, so a search never fails for want of the faster scan.
    """

    def __init__(self, matrix: np.ndarray, int8_from: int = INT8_FROM) -> None:
        self.matrix = matrix
        self.int8 = False
        self._session: Any = None
        self._keep: tuple[Any, ...] = ()
        if len(matrix) >= int8_from and len(matrix):
            try:
                self._session, self._keep = _int8_session(matrix)
                self.int8 = True
            except Exception as exc:  # the float32 product still answers, only slower
                log.warning("int8 vector scan unavailable (%s); scanning float32", exc)

    def __call__(self, q: np.ndarray) -> np.ndarray:
        if not self.int8:
            return self.matrix @ q
        out = self._session.run(None, {"q": q.reshape(1, -1).astype(np.float32, copy=False)})[0]
        return out.reshape(-1)


def quantise(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Int8 rows and one float32 scale per row (largest magnitude -> 127): ``row ~= int8_row * scale``."""
    peak = np.abs(matrix).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    rows = np.clip(np.rint(matrix / scale[:, None]), -127, 127).astype(np.int8)
    return rows, scale


def _int8_session(matrix: np.ndarray) -> tuple[Any, tuple[Any, ...]]:
    """A session over the int8 copy; also the OrtValues it reads, which must live as long as the session."""
    no_telemetry()
    import onnxruntime as ort

    rows, scale = quantise(matrix)
    transposed = np.ascontiguousarray(rows.T)  # [d, n]: B of the graph
    del rows
    # OrtValues over numpy memory share it: the arrays are kept with the session (onnxruntime packs its own copy)
    columns = ort.OrtValue.ortvalue_from_numpy(transposed)
    scales = ort.OrtValue.ortvalue_from_numpy(scale)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # as the model's session: one core's work, no spinning beside other work
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    for key, value in NO_SPINNING.items():
        options.add_session_config_entry(key, value)
    options.add_initializer("B", columns)
    options.add_initializer("s", scales)
    session = ort.InferenceSession(str(GRAPH), options, providers=["CPUExecutionProvider"])
    probe = session.run(None, {"q": np.ascontiguousarray(matrix[:1])})[0]
    if probe.shape != (1, len(matrix)):
        raise RuntimeError(f"the scan graph gave shape {probe.shape}")
    return session, (columns, scales, transposed, scale)
