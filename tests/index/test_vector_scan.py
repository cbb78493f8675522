"""The search's model run and vector scan (issue 20, "fast on a loaded host"): the scan over the one contiguous
matrix ranks exactly as a plain float32 dot product per paragraph, the question is tokenized once, and the
thread policy (onnxruntime without spinning, one BLAS thread) is what the process runs with."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from glossary.loader import SHIPPED_SOURCES
from index.build import asked
from index.engine import Engine
from index.query import ranking
from index.text import embedding, threads

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


def benchmark_questions() -> list[str]:
    data = json.loads((BENCHMARKS / "eval_questions.json").read_text("utf-8"))
    held = json.loads((BENCHMARKS / "heldout_paragraphs_2026-11.json").read_text("utf-8"))
    return [x["q"] for x in data["search"] + data["paraphrased"] + held["questions"]]


def test_paragraphs_and_kept_questions_are_views_of_one_contiguous_matrix(engine: Engine) -> None:
    st = engine._st
    m = st.all_vectors
    assert m is not None and st.vectors is not None and st.question_vectors is not None
    assert m.dtype == np.float32 and m.flags.c_contiguous
    assert m.shape == (st.lex.n_units + len(st.questions.texts), 384)
    assert np.shares_memory(st.vectors, m) and np.shares_memory(st.question_vectors, m)
    assert np.array_equal(np.concatenate([st.vectors, st.question_vectors]), m)


def test_scan_ranks_as_a_plain_float32_dot_product(engine: Engine) -> None:
    """Per question: the paragraphs' and the kept questions' cosines from the one product against a dot product
    computed row by row; the ten best paragraphs, and the best kept question per paragraph, must agree."""
    st = engine._st
    assert st.vectors is not None and st.question_vectors is not None
    rows = [np.array(v, dtype=np.float32) for v in st.vectors]
    kept_rows = [np.array(v, dtype=np.float32) for v in st.question_vectors]
    checked = 0
    for question in benchmark_questions():
        ev = ranking.evidence(st, question)
        if ev is None or ev.semantic is None or ev.query is None:
            continue
        plain = np.array([np.dot(v, ev.query) for v in rows], dtype=np.float32)
        assert np.allclose(ev.semantic, plain, atol=1e-6), question
        top = np.argsort(-plain, kind="stable")[:10]
        assert np.argsort(-ev.semantic, kind="stable")[:10].tolist() == top.tolist(), question
        plain_kept = np.array([np.dot(v, ev.query) for v in kept_rows], dtype=np.float32)
        expected = asked.closest(plain_kept, st.questions, len(plain))
        assert ev.asked is not None and np.allclose(ev.asked, expected, atol=1e-6), question
        checked += 1
    assert checked >= 250  # nearly every benchmark question reaches the model


class CountingTokenizer:
    """A stand-in for the embedder's tokenizer that counts the texts it is given."""

    def __init__(self, real: Any) -> None:
        self.real, self.texts = real, 0

    def encode(self, text: str) -> Any:
        self.texts += 1
        return self.real.encode(text)

    def encode_batch(self, texts: list[str]) -> Any:
        self.texts += len(texts)
        return self.real.encode_batch(texts)


def test_a_question_is_tokenized_once(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    emb = engine._st.embedder
    assert emb is not None
    counting = CountingTokenizer(emb._tokenizer)
    monkeypatch.setattr(emb, "_tokenizer", counting)
    hits = engine.search("can my courtier kill himself to cut down an honor loss")
    assert hits and counting.texts == 1
    long = "may my terrain card stay in play " + "and the rest of a long paste about honor and chi " * 60
    ev = ranking.evidence(engine._st, long)
    assert ev is not None and counting.texts == 2 and 0 < ev.read < 1


def test_embed_question_is_the_query_vector_and_its_read_share(engine: Engine) -> None:
    emb = engine._st.embedder
    assert emb is not None
    vector, read = emb.embed_question("is a terrain an enemy card")
    assert np.array_equal(vector, emb.embed_query("is a terrain an enemy card")) and read == 1.0
    long = "word " * (embedding.MAX_TOKENS * 3)
    vector, read = emb.embed_question(long)
    assert np.array_equal(vector, emb.embed_query(long)) and 0.3 < read < 0.4


def test_model_session_runs_without_spinning_threads(engine: Engine) -> None:
    emb = engine._st.embedder
    assert emb is not None
    options = emb._session.get_session_options()
    assert options.intra_op_num_threads == embedding.THREADS == 1 and options.inter_op_num_threads == 1
    for key in ("session.intra_op.allow_spinning", "session.inter_op.allow_spinning"):
        assert options.get_session_config_entry(key) == "0", key


def test_blas_runs_one_thread_once_the_model_is_loaded(engine: Engine) -> None:
    assert engine._st.embedder is not None
    blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert blas, "numpy's BLAS is not seen by threadpoolctl"
    assert [lib["num_threads"] for lib in blas] == [threads.BLAS_THREADS] * len(blas)
    assert threads.blas_threads() == [threads.BLAS_THREADS] * len(blas)


def test_bench_dense_retriever_ranks_by_the_model_alone(engine: Engine) -> None:
    """The benchmark's yardstick (``benchmarks.quality.evaluate.Dense``): entries of the closest paragraphs."""
    from benchmarks.quality.evaluate import Dense

    dense = Dense(engine)
    assert dense.ready
    st = engine._st
    question = "are the little markers we put on cards considered cards"
    found = dense.search(question)
    assert st.vectors is not None and st.embedder is not None
    best = int(np.argmax(st.vectors @ st.embedder.embed_query(question)))
    assert found[0] == int(st.lex.unit_entry[best]) and len(found) == len(set(found)) <= 10
