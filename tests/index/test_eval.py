"""The eval set is well formed and the engine meets its quality targets (quality only; no timings)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from benchmarks.quality import training
from benchmarks.quality.evaluate import Baseline, Fts5, cross_validate, format_bench, load_eval, run_eval, synthetic
from glossary.loader import SHIPPED_SOURCES
from index.engine import Engine
from index.query import ranking


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


def test_eval_set_is_large_enough_and_points_at_real_entries(engine: Engine) -> None:
    data = load_eval()
    assert len(data["search"]) >= 60 and len(data["define"]) >= 30
    known = set(engine.corpus.by_id())
    assert [x for x in data["search"] + data["define"] if x["expected"] not in known] == []
    assert len({x["q"] for x in data["search"]}) == len(data["search"])


def test_engine_meets_targets_and_beats_baseline(engine: Engine) -> None:
    result = run_eval(engine, tune=False)
    modes, b = result["modes"], result["baseline"]
    hybrid = modes["hybrid"]
    # the figures reached on the shipped eval set: no silent regression. With the 923 kept questions added on
    # 2026-11-26 (and the weights refitted) literal top-1 went 95.3% -> 93.4% and own-words top-3 98.1% -> 97.1%
    # (one question each way more), while the questions never tuned on gained: held-out own words top-1 79.5% ->
    # 89.7%, naming their entry 95.5% -> 97.7%, the blind set's entry 93.8% -> 95.0% and paragraph 78.8% -> 81.2%
    # (docs/search.md). The gates are the new figures, so a further loss still fails here.
    assert hybrid["literal"]["top1"] >= 0.93 and hybrid["literal"]["top3"] >= 0.99, result["search_misses"]
    assert hybrid["paraphrased"]["top1"] >= 0.92 and hybrid["paraphrased"]["top3"] >= 0.97, result["search_misses"]
    assert hybrid["paraphrased"]["top1_paragraph"] >= 0.86, result["search_misses"]
    assert result["define"]["exact_or_first"] == 1.0, result["define_misses"]
    for g in ("literal", "paraphrased"):
        assert hybrid[g]["mrr"] > b[g]["mrr"] and hybrid[g]["top1"] > b[g]["top1"]
        # fusing beats either kind of evidence alone
        singles = ("lexical", "semantic (paragraphs)", "semantic (+ questions)")
        assert hybrid[g]["mrr"] > max(modes[name][g]["mrr"] for name in singles)
        assert hybrid[g]["mrr"] >= modes["hybrid, no shape rules"][g]["mrr"]
    shown = result["shown"]
    assert shown["refused"] == 0 and shown["unanswerable_refused"] == shown["unanswerable"]
    assert shown["mean_results"] < 5  # not padded to the limit


def test_eval_questions_name_their_paragraphs(engine: Engine) -> None:
    data = load_eval()
    assert len(data["paraphrased"]) >= 60
    by_id = engine.corpus.by_id()
    for x in data["paraphrased"] + data["search"]:  # both sets name the answering paragraph(s)
        paras = x["paragraph"] if isinstance(x["paragraph"], list) else [x["paragraph"]]
        assert all(0 <= p < len(by_id[x["expected"]].paragraphs) for p in paras), x


def test_cross_validation_reports_held_out_figures(engine: Engine) -> None:
    cv = cross_validate(engine, load_eval(), folds=3, seeds=(7,))
    assert set(cv["held_out"]) == {"literal", "paraphrased"} and len(cv["fold_picks"]) == 3
    assert 0.5 < cv["held_out"]["paraphrased"]["mrr"] <= 1.0
    assert 0.3 < cv["held_out"]["paraphrased"]["top1_paragraph"] <= cv["held_out"]["paraphrased"]["top1"]
    assert 0.3 < cv["held_out"]["literal"]["top1_paragraph"] <= cv["held_out"]["literal"]["top1"]
    assert all(set(p) == set(ranking.FEATURES) for p in cv["fold_picks"])
    assert all(v >= 0 for p in cv["fold_picks"] for v in p.values())  # evidence only ever adds


def test_shipped_weights_are_the_fit_on_all_questions(engine: Engine) -> None:
    """``ranking.DEFAULT``, ``WORDS_ONLY`` and ``CHOOSE`` hold what ``python -m benchmarks.quality eval`` fits
    (rounded as it prints them)."""
    cv = cross_validate(engine, load_eval(), folds=2, seeds=(7,))
    pairs = (
        (cv["best"], ranking.DEFAULT),
        (cv["best_words_only"], ranking.WORDS_ONLY),
        (cv["best_choice"], ranking.CHOOSE),
    )
    for fitted, shipped in pairs:
        for f in ranking.FEATURES:
            assert abs(getattr(fitted, f) - getattr(shipped, f)) <= 0.011, f
    assert ranking.WORDS_ONLY.meaning == ranking.WORDS_ONLY.asked == 0.0


def test_fit_finds_the_feature_that_separates_answers() -> None:
    """On made-up evidence where only one column tells the answer, the fit weights that column and not noise."""
    rng = np.random.default_rng(3)
    n_q, n_units = 40, 30
    starts = np.arange(0, n_units, 3)  # ten entries of three paragraphs
    feats = rng.random((n_q, n_units, len(ranking.FEATURES))).astype(np.float32)
    expected = rng.integers(0, len(starts), n_q)
    col = ranking.FEATURES.index("asked")
    for q, e in enumerate(expected):
        feats[q, :, col] *= 0.5
        feats[q, starts[e] + 1, col] = 1.0  # the answer's second paragraph is the only strong match
    w = training.fit(feats, expected, starts)
    assert int(np.argmax(w)) == col and (w >= 0).all()
    assert (training.ranks(feats, w, expected, starts) == 1).mean() > 0.9
    only_words = training.fit(feats, expected, starts, use=("para", "body"))
    assert only_words[col] == 0.0


def test_baseline_is_body_only_bm25(engine: Engine) -> None:
    base = Baseline(engine.corpus)
    assert base.search("simultaneous consecutive ranged attacks")[0] == "glossary:ranged-attack"
    # body only: a word that is only in titles ("Tribe" is also in its body) finds nothing by title
    assert "glossary:targeting-paradoxes" not in base.search("paradoxes")
    assert isinstance(base.search('OR OR ( "'), list)


def test_synthetic_corpus_grows_with_unique_ids(engine: Engine) -> None:
    big = synthetic(engine.corpus, 3)
    assert len(big.entries) == 3 * len(engine.corpus.entries)
    assert len({e.id for e in big.entries}) == len(big.entries)
    assert big.entries[146].id.endswith("-syn1")


def test_format_bench_renders_rows() -> None:
    row = {"entries": 146, "paragraphs": 368, "build_s": 0.5, "open_s": 0.2, "edit_rebuild_s": 0.4, "rss_mb": 80.0}
    for k in ("complete", "define", "search", "lexical", "fts5"):
        row[k] = {"p50_ms": 0.1, "p95_ms": 0.2, "n": 3}
    row["vs_fts5"] = 1.0
    text = format_bench({"x1": row})
    assert "x1" in text and "0.10/0.20" in text and "1.00x" in text and "one-file edit 0.40 s" in text


def test_fts5_yardstick_finds_the_same_entries(engine: Engine) -> None:
    fts = Fts5(engine.corpus)
    rowid = fts.search("simultaneous consecutive ranged attacks")[0]
    assert engine.corpus.entries[rowid - 1].id == "glossary:ranged-attack"
    assert fts.search("what is") == [] and isinstance(fts.search('OR OR ( "'), list)
