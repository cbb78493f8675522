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
from index.text import embedding, scan, threads

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


# --- the int8 scan for large corpora, the one-selection median, the word stage beside the model ---------------


def test_the_shipped_corpus_is_scanned_in_float32_exactly(engine: Engine) -> None:
    st = engine._st
    assert st.scan is not None and st.all_vectors is not None
    assert not st.scan.int8 and len(st.all_vectors) < scan.INT8_FROM
    q = st.all_vectors[7]
    assert np.array_equal(st.scan(q), st.all_vectors @ q)


def test_int8_scan_stays_within_a_few_thousandths_and_keeps_the_best_rows(engine: Engine) -> None:
    """Forced on the shipped matrix: every cosine within 0.01 of float32 (measured: under 0.004), and for each
    benchmark question the best paragraph by the int8 scan is one whose float32 cosine is within 0.01 of the best."""
    st = engine._st
    assert st.all_vectors is not None and st.embedder is not None
    fast = scan.Scan(st.all_vectors, int8_from=0)
    assert fast.int8
    worst = 0.0
    for question in benchmark_questions()[:120]:
        q = st.embedder.embed_query(question)
        exact, approx = st.all_vectors @ q, fast(q)
        assert approx.dtype == np.float32 and approx.shape == exact.shape
        worst = max(worst, float(np.abs(exact - approx).max()))
        assert exact[int(np.argmax(approx))] >= exact.max() - 0.01, question
    assert 0 < worst < 0.01


def test_int8_rows_hold_each_vector_to_its_own_scale() -> None:
    rng = np.random.default_rng(3)
    m = rng.standard_normal((50, 384)).astype(np.float32)
    m[4] = 0.0  # a zero row must not divide by zero
    rows, scale = scan.quantise(m)
    assert rows.dtype == np.int8 and scale.dtype == np.float32
    assert np.abs(rows).max() == 127 and not rows[4].any()
    assert np.allclose(rows * scale[:, None], m, atol=float(scale.max()) / 2 + 1e-7)


def test_a_missing_scan_graph_falls_back_to_float32(monkeypatch: pytest.MonkeyPatch, caplog: Any) -> None:
    monkeypatch.setattr(scan, "GRAPH", Path("/nonexistent/scan.onnx"))
    m = np.eye(4, 8, dtype=np.float32)
    with caplog.at_level("WARNING", logger="index.text.scan"):
        s = scan.Scan(m, int8_from=0)
    assert not s.int8 and "int8 vector scan unavailable" in caplog.text
    q = np.arange(8, dtype=np.float32)
    assert np.array_equal(s(q), m @ q)


def test_the_shipped_scan_graph_is_what_its_script_writes() -> None:
    onnx = pytest.importorskip("onnx", reason="the [test] extra installs onnx")
    import importlib.util

    script = scan.GRAPH.with_name("make_graph.py")
    spec = importlib.util.spec_from_file_location("make_graph", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.graph().SerializeToString() == scan.GRAPH.read_bytes()
    assert onnx.load(str(scan.GRAPH)).graph.node[0].op_type == "DynamicQuantizeMatMul"


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, 2254, 2255, 38686])
def test_median_is_numpys_bit_for_bit(n: int) -> None:
    for seed in range(5):
        v = np.random.default_rng(seed * 1000 + n).standard_normal(n).astype(np.float32)
        assert ranking._median(v) == float(np.median(v))


def _word_stage_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that run the word stage from now on (``ranking._word_evidence`` spied on)."""
    import threading

    names: list[str] = []
    real = ranking._word_evidence

    def spy(*args: Any) -> Any:
        names.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(ranking, "_word_evidence", spy)
    return names


def test_word_stage_beside_the_model_gives_the_serial_evidence(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The overlapped path (words in a worker while this thread runs the model) and the serial one must give the
    same evidence and the same fusion, question by question."""
    st = engine._st
    questions = benchmark_questions()[:60] + ["the", "???", "honor"]
    overlapped = [ranking.evidence(st, q) for q in questions]
    calls = _word_stage_threads(monkeypatch)
    for question in questions[:20]:
        ranking.evidence(st, question)
    # once per question, by the worker or (when the worker had not started it yet) by the searching thread
    assert len(calls) == 20
    monkeypatch.setattr(ranking, "_has_content", lambda _q: False)  # every question takes the serial path
    for question, ev in zip(questions, overlapped, strict=True):
        serial = ranking.evidence(st, question)
        assert (ev is None) == (serial is None), question
        if ev is None or serial is None:
            continue
        assert ev.word_sums is not None and serial.word_sums is None
        assert np.array_equal(ev.semantic, serial.semantic) and ev.read == serial.read, question
        a, b = ranking.fuse_scaled(st, ev), ranking.fuse_scaled(st, serial)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2], question


def test_own_title_matches_of_a_word_in_many_titles(engine: Engine) -> None:
    """"honor" is in 16 titles and aliases (of 8 entries), past the 8 that are compared one by one, so its own-title
    part takes the marked-entries path; it must equal the gain of "honor" in exactly the paragraphs of those
    entries."""
    lex = engine._st.lex
    t = lex.term_id["honor"]
    postings = [lex.doc[f][lex.ptr[f][t] : lex.ptr[f][t + 1]].tolist() for f in ("title", "aliases")]
    assert len(postings[0]) + len(postings[1]) > 8
    named = set(postings[0]) | set(postings[1])
    comps = lex.score({"honor": 1.0})
    assert comps.para_own is not None
    own_units = np.isin(lex.unit_entry, list(named))
    assert np.allclose(comps.para_own, np.where(own_units, comps.para, 0.0))
    assert comps.para_own[own_units].any() and not comps.para_own[~own_units].any()


def test_a_word_stage_no_worker_has_started_is_done_by_the_searching_thread(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy host the worker may not get a core before the model has run: the search then cancels the job and
    does it itself, and gets the same evidence, instead of waiting for the worker to be scheduled."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    st = engine._st
    question = "can I shoot a personality that has followers"
    expected = ranking.evidence(st, question)
    busy, release = ThreadPoolExecutor(max_workers=1), threading.Event()
    busy.submit(release.wait, 30)  # the only worker is taken for the whole search
    monkeypatch.setattr(ranking, "_WORD_STAGES", busy)
    ran_in = _word_stage_threads(monkeypatch)
    try:
        ev = ranking.evidence(st, question)
    finally:
        release.set()
        busy.shutdown(wait=True)
    assert ran_in == [threading.current_thread().name]  # done here, once; the queued job was cancelled
    assert ev is not None and expected is not None
    assert np.array_equal(ev.semantic, expected.semantic) and ev.word_sums is not None
    a, b = ranking.fuse_scaled(st, ev), ranking.fuse_scaled(st, expected)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
