"""Writes ``scan.onnx``: the one-operator graph ``index.text.scan`` runs to score a question against many paragraph
vectors stored as int8 (``python index/models/int8-scan/make_graph.py``; needs the ``onnx`` package, which the
bot itself does not).

The graph is ``y = DynamicQuantizeMatMul(q, B, s)`` (onnxruntime's com.microsoft operator): the question
``q`` [1, d] is quantised to uint8 on the fly, ``B`` [d, n] holds the vectors as int8 columns and ``s`` [n] one
scale per vector, and ``y`` [1, n] comes back as float32 cosines. ``B`` and ``s`` are one-element placeholders
here: the real ones are handed to each session with ``SessionOptions.add_initializer``, so the graph file never
changes with the corpus and onnxruntime can pack ``B`` once per session instead of once per question.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

GRAPH = Path(__file__).with_name("scan.onnx")


def graph() -> onnx.ModelProto:
    """The scan graph, deterministic byte for byte (no producer version, no timestamps)."""
    node = helper.make_node("DynamicQuantizeMatMul", ["q", "B", "s"], ["y"], domain="com.microsoft")
    body = helper.make_graph(
        [node],
        "int8_scan",
        [helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, "d"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "n"])],
        [numpy_helper.from_array(np.zeros((1, 1), np.int8), "B"), numpy_helper.from_array(np.ones(1, np.float32), "s")],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(body, opset_imports=opsets, producer_name="l5r-judge", ir_version=8)
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    GRAPH.write_bytes(graph().SerializeToString())
    print(f"wrote {GRAPH} ({GRAPH.stat().st_size} bytes)")
