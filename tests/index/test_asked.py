"""Kept players' questions (index/build/asked.py): the file, its match to paragraph texts, the build, the ranking."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from glossary.loader import SHIPPED_SOURCES, load_corpus
from index.build import asked, rebuild
from index.build.lexical import units
from index.engine import Engine
from index.query import ranking
from index.text import embedding


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


def test_shipped_file_covers_every_shipped_paragraph_with_its_current_text(engine: Engine) -> None:
    """Editing a shipped paragraph without re-checking its questions fails here, naming the paragraph."""
    st = engine._st
    records = asked.read()
    have = {(e, d) for e, d in records}
    missing = []
    for entry in st.corpus.entries:
        for n, text in enumerate(entry.paragraphs or [""]):
            if (entry.id, asked.digest(text)) not in have:
                missing.append(f"{entry.id} paragraph {n if entry.paragraphs else -1}")
    assert missing == []
    assert st.questions.stale == 0 and len(st.questions.texts) == sum(len(q) for q in records.values()) >= 900
    # written from the rules: one to three first, about four more later for the paragraphs of entries with two or
    # more; folded in later (``index.build.fold``), one question a record, each saying which reviewed file it is from
    raw = json.loads(asked.DATA.read_text("utf-8"))
    written: dict[tuple[str, str], int] = {}
    for rec in raw:
        if "from" in rec:
            assert rec["from"].endswith(".jsonl") and len(rec["questions"]) == 1
        else:
            written[rec["entry"], rec["digest"]] = written.get((rec["entry"], rec["digest"]), 0) + len(rec["questions"])
    assert all(1 <= n <= 8 for n in written.values()) and len(written) == len(records)


def test_build_holds_a_vector_per_kept_question(engine: Engine) -> None:
    st = engine._st
    assert st.question_vectors is not None and st.vectors is not None
    assert st.question_vectors.shape == (len(st.questions.texts), 384)
    assert st.vectors.shape[0] == st.lex.n_units
    # each kept question's vector is that question embedded alone, as a player's question is
    assert np.array_equal(st.question_vectors[5], st.embedder.embed_query(st.questions.texts[5]))
    owners = st.questions.owner
    assert (np.diff(owners) >= 0).all() and len(np.unique(owners)) == st.lex.n_units


def test_a_kept_question_finds_its_paragraph_and_counts_in_the_ranking(engine: Engine) -> None:
    st = engine._st
    i = st.questions.texts.index("Can I swap my teacher card between rounds of a tournament?")
    unit = int(st.questions.owner[i])
    ev = ranking.evidence(st, st.questions.texts[i])
    assert ev is not None and ev.asked is not None
    assert ev.asked[unit] == pytest.approx(1.0, abs=1e-5) and int(np.argmax(ev.asked)) == unit
    units_without = ev.asked == -1
    assert not units_without.any()  # every shipped paragraph has questions
    with_q = ranking.fuse(st, ev)
    without = ranking.fuse(st, ev, replace(ranking.DEFAULT, asked=0.0))
    margin = with_q[unit] - np.sort(with_q)[-2]
    assert with_q[unit] == pytest.approx(1.0) and margin > without[unit] - np.sort(without)[-2]


def test_malformed_file_names_the_record() -> None:
    good = {"entry": "glossary:terrain", "paragraph": 0, "digest": "0123456789abcdef", "questions": ["is it?"]}
    assert asked.check([good]) == {("glossary:terrain", "0123456789abcdef"): ("is it?",)}
    for bad, message in (
        ({"entry": "glossary:terrain"}, "record 2 (glossary:terrain): no 16-character digest"),
        ({**good, "questions": ["ok", ""]}, "record 2 (glossary:terrain): questions must be"),
        ({**good, "entry": ""}, "record 2: no entry id"),
        ("text", "record 2: not an object"),
    ):
        with pytest.raises(asked.AskedError, match=message.replace("(", r"\(").replace(")", r"\)")):
            asked.check([good, bad], "asked.json")
    with pytest.raises(asked.AskedError, match="expected a list"):
        asked.check({"entry": "x"})


def test_malformed_file_is_left_out_with_one_log_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    bad = tmp_path / "asked.json"
    bad.write_text("[{", "utf-8")
    corpus = load_corpus([SHIPPED_SOURCES])
    with caplog.at_level(logging.WARNING, logger="index"):
        got = asked.shipped(corpus, bad)
    assert got is asked.NONE
    assert [r.getMessage() for r in caplog.records if "asked.json" in r.getMessage()] == [
        next(r.getMessage() for r in caplog.records if "asked.json" in r.getMessage())
    ]
    assert asked.shipped(corpus, tmp_path / "absent.json") is asked.NONE  # no file: no questions, no noise


def test_a_changed_paragraph_loses_its_questions_and_the_rest_keep_theirs(tmp_path: Path) -> None:
    src = tmp_path / "sources"
    shutil.copytree(SHIPPED_SOURCES, src)
    old, new = "no player can play another Terrain there", "no player may play another Terrain there"
    page = next(p for p in sorted(src.glob("*.txt")) if old in p.read_text("utf-8"))
    page.write_text(page.read_text("utf-8").replace(old, new, 1), "utf-8")
    corpus = load_corpus([src])
    records = asked.read()
    got = asked.for_corpus(corpus, records)
    assert got.stale == 1
    terrain = next(e for e in corpus.entries if e.id == "glossary:terrain")
    changed = next(n for n, p in enumerate(terrain.paragraphs) if new in p)
    ent, par = units(corpus)
    pairs = enumerate(zip(ent.tolist(), par.tolist(), strict=True))
    unit = next(u for u, (n, p) in pairs if corpus.entries[n] is terrain and p == changed)
    assert unit not in set(got.owner.tolist())
    assert len(np.unique(got.owner)) == len(ent) - 1


def test_questions_file_is_part_of_the_build_fingerprint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    emb = embedding.load(embedding.DEFAULT_MODEL)
    before = rebuild.with_model("fp", emb)
    copy = tmp_path / "asked.json"
    data = json.loads(asked.DATA.read_text("utf-8"))
    data[0]["questions"] = [*data[0]["questions"], "one more question"]
    copy.write_text(json.dumps(data), "utf-8")
    monkeypatch.setattr(asked, "DATA", copy)
    assert rebuild.with_model("fp", emb) != before
    assert rebuild.with_model("fp", None) == rebuild.with_model("fp", None)  # words only: the file is not used
