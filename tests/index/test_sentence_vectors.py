"""Sentence vectors for choosing the quoted paragraph (issue 17): every sentence of a paragraph of two or more is
embedded at build time, and the chooser reads each paragraph's best sentence ("sentence" column), which entry
ranking never does."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from glossary.loader import SHIPPED_SOURCES
from glossary.model import Corpus
from index.build import lexical, rebuild, vectors
from index.build.lexical import Unreadable
from index.engine import Engine
from index.query import ranking
from index.text.sentence_spans import worded


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


def test_sentence_vectors_line_up_with_the_sentences_of_each_paragraph(engine: Engine) -> None:
    st = engine._st
    assert st.index_path is not None and (st.index_path / vectors.SENTENCES).is_file()
    assert st.sentence_vectors is not None and st.embedder is not None and st.lex is not None
    ent, par = lexical.units(st.corpus)
    expected: list[tuple[int, int, int]] = []
    for u, (n, p) in enumerate(zip(ent.tolist(), par.tolist(), strict=True)):
        spans = worded(st.corpus.entries[n].paragraphs[p]) if p >= 0 else []
        if len(spans) > 1:  # a one-sentence paragraph (stamps not counted) has no sentence rows
            expected += [(u, a, b) for a, b in spans]
    got = [(u, a, b) for u, (a, b) in zip(st.sentences.units.tolist(), st.sentences.spans.tolist(), strict=True)]
    assert got == expected and len(got) > 100
    assert st.sentence_vectors.shape == (len(got), st.embedder.dim)
    # each row is its sentence, embedded alone with the paragraph's context, as a paragraph is
    for row in (0, len(got) // 2, len(got) - 1):
        u, a, b = got[row]
        entry = st.corpus.entries[int(ent[u])]
        text = vectors.in_context(entry, entry.paragraphs[int(par[u])][a:b])
        assert np.array_equal(st.embedder.embed([text])[0], st.sentence_vectors[row])
    # one scan reads paragraphs, kept questions and sentences: the sentences are the matrix's last rows
    assert st.all_vectors is not None and np.shares_memory(st.sentence_vectors, st.all_vectors)
    assert len(st.all_vectors) == st.lex.n_units + len(st.questions.texts) + len(got)


def test_the_column_is_the_best_sentence_and_a_one_sentence_paragraph_keeps_its_cosine(engine: Engine) -> None:
    st = engine._st
    assert st.sentence_vectors is not None and st.lex is not None
    ev = ranking.evidence(st, "do I pay the costs again when an attachment moves to another personality?")
    assert ev is not None and ev.sentence is not None and ev.semantic is not None and ev.query is not None
    on_sentences = st.sentence_vectors @ ev.query
    owners = st.sentences.units
    for u in range(st.lex.n_units):
        rows = np.flatnonzero(owners == u)
        if len(rows):
            assert ev.sentence[u] == pytest.approx(float(on_sentences[rows].max()), abs=1e-6)
        else:
            assert ev.sentence[u] == ev.semantic[u]
    assert (ev.sentence != ev.semantic).sum() == len(np.unique(owners))


def test_the_sentence_column_chooses_the_paragraph_and_never_ranks_entries(engine: Engine) -> None:
    st = engine._st
    assert ranking.DEFAULT.sentence == ranking.WORDS_ONLY.sentence == 0.0 and ranking.CHOOSE.sentence > 0
    ev = ranking.evidence(st, "when I move a sword from one samurai to another, do I pay its gold again?")
    assert ev is not None and ev.sentence is not None
    fused, choose = ranking.fuse_and_choose(st, ev)
    other = replace(ev, sentence=ev.sentence[::-1].copy(), word_sums=None)
    fused2, choose2 = ranking.fuse_and_choose(st, other)
    assert np.array_equal(fused, fused2)  # entry scores do not read it
    assert not np.array_equal(choose, choose2)  # the choice does


def test_a_question_about_one_sentence_of_a_long_paragraph_quotes_that_paragraph(engine: Engine) -> None:
    """Transfer ¶2's first sentence ("A player does not need to pay the card's costs when transferring it")
    answers. That sentence alone is closer to the question than its two-sentence paragraph; with the paragraph's
    vector only, the chooser quoted ¶1, the one-line definition."""
    question = "when I move a sword from one samurai to another, do I pay its gold again?"
    hits = engine.search(question)
    assert hits and (hits[0].entry.id, hits[0].paragraph) == ("glossary:transfer", 1)
    st = engine._st
    ev = ranking.evidence(st, question)
    assert ev is not None and ev.sentence is not None and ev.semantic is not None and st.lex is not None
    start = int(st.lex.entry_starts[st.order["glossary:transfer"]])
    assert ev.sentence[start + 1] > ev.semantic[start + 1]


class Fake:
    """A stand-in model: each text's vector depends on its text only."""

    dim, digest, name = 3, "fake-model", "fake"

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray([[len(t), t.count(" "), 1.0] for t in texts], dtype=np.float32)


def test_sentence_file_round_trips_and_an_old_or_foreign_build_is_unreadable(engine: Engine, tmp_path: Path) -> None:
    corpus = Corpus(entries=engine.corpus.entries[:40], files=list(engine.corpus.files))
    found = vectors.sentences(corpus)
    assert len(found)
    vecs = Fake().embed(vectors.sentence_texts(corpus, found))
    n_units = len(lexical.units(corpus)[0])
    with pytest.raises(Unreadable):  # a build from before sentence vectors: rebuilt
        vectors.read_sentences(tmp_path, Fake(), n_units)  # type: ignore[arg-type]
    vectors.write_sentences(tmp_path, found, vecs, Fake())  # type: ignore[arg-type]
    back, back_vecs = vectors.read_sentences(tmp_path, Fake(), n_units)  # type: ignore[arg-type]
    assert np.array_equal(back.units, found.units) and np.array_equal(back.spans, found.spans)
    assert np.array_equal(back_vecs, vecs)
    other = Fake()
    other.digest = "another-model"
    with pytest.raises(Unreadable, match="another model"):
        vectors.read_sentences(tmp_path, other, n_units)  # type: ignore[arg-type]
    with pytest.raises(Unreadable, match="does not have"):
        vectors.read_sentences(tmp_path, Fake(), int(found.units.max()))  # type: ignore[arg-type]


def test_the_vector_layout_version_is_part_of_the_build_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    before = rebuild.with_model("abc", None)
    monkeypatch.setattr(vectors, "VERSION", vectors.VERSION + 1)
    assert rebuild.with_model("abc", None) != before  # old builds rebuild once
