"""Quality (``eval``) and speed (``bench``) measurements over the shipped eval set.

``eval`` reports top-1, top-3 and MRR for the engine and, in the same run, for a baseline:
stock Whoosh (StandardAnalyzer, BM25F) over the body text only, so every ranking lever has
to earn its keep against it. ``bench`` times the warm engine and grows a synthetic corpus
10x and 100x to show how the timings scale. Neither is a unit test: timings vary by machine.
"""

from __future__ import annotations

import json
import random
import resource
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from whoosh.fields import ID, TEXT, Schema
from whoosh.filedb.filestore import RamStorage
from whoosh.qparser import OrGroup, QueryParser

from glossary.model import Corpus
from index.engine import Engine
from index.fulltext import OR_SCALE

EVAL_FILE = Path(__file__).resolve().parent.parent / "benchmarks" / "eval_questions.json"


def load_eval(path: Path | None = None) -> dict[str, list[dict[str, str]]]:
    data = json.loads((path or EVAL_FILE).read_text("utf-8"))
    return {"search": data["search"], "define": data["define"]}


class Baseline:
    """Stock Whoosh: default analyzer, BM25F, body field only, OR of the words (scale as the engine's)."""

    def __init__(self, corpus: Corpus) -> None:
        self.ix = RamStorage().create_index(Schema(id=ID(stored=True), body=TEXT()))
        with self.ix.writer() as w:
            for e in corpus.entries:
                w.add_document(id=e.id, body=e.text)
        self.parser = QueryParser("body", self.ix.schema, group=OrGroup.factory(OR_SCALE))
        self.searcher = self.ix.searcher()

    def search(self, question: str, limit: int = 10) -> list[str]:
        try:
            q = self.parser.parse(question)
            return [hit["id"] for hit in self.searcher.search(q, limit=limit)]
        except Exception:  # the baseline has no protection against odd syntax; count it as a miss
            return []


def _ranks(rankings: list[list[str]], expected: list[str]) -> dict[str, float]:
    n = len(expected)
    top1 = sum(1 for r, e in zip(rankings, expected, strict=True) if r[:1] == [e])
    top3 = sum(1 for r, e in zip(rankings, expected, strict=True) if e in r[:3])
    mrr = sum(1 / (r.index(e) + 1) for r, e in zip(rankings, expected, strict=True) if e in r[:10])
    return {"n": n, "top1": top1 / n, "top3": top3 / n, "mrr": mrr / n}


def run_eval(engine: Engine, path: Path | None = None) -> dict[str, Any]:
    """Score the engine and the baseline on the same questions; list the misses for honest inspection."""
    data = load_eval(path)
    questions = [x["q"] for x in data["search"]]
    expected = [x["expected"] for x in data["search"]]
    engine_rank = [[h.entry.id for h in engine.search(q, limit=10)] for q in questions]
    baseline = Baseline(engine.corpus)
    base_rank = [baseline.search(q) for q in questions]
    define_ok = 0
    define_misses = []
    for item in data["define"]:
        r = engine.define(item["q"])
        first = r.entry.id if r.entry else (r.candidates[0].id if r.candidates else None)
        if first == item["expected"]:
            define_ok += 1
        else:
            define_misses.append({"q": item["q"], "expected": item["expected"], "got": first, "how": r.how})
    misses = [
        {"q": q, "expected": e, "got": r[:3]}
        for q, e, r in zip(questions, expected, engine_rank, strict=True)
        if r[:1] != [e]
    ]
    return {
        "engine": _ranks(engine_rank, expected),
        "baseline": _ranks(base_rank, expected),
        "define": {"n": len(data["define"]), "exact_or_first": define_ok / len(data["define"])},
        "search_misses": misses,
        "define_misses": define_misses,
    }


def format_eval(result: dict[str, Any]) -> str:
    e, b, d = result["engine"], result["baseline"], result["define"]
    lines = [
        f"search questions: {e['n']}",
        f"{'':22}{'top-1':>8}{'top-3':>8}{'MRR':>8}",
        f"{'engine':22}{e['top1']:8.1%}{e['top3']:8.1%}{e['mrr']:8.3f}",
        f"{'baseline (BM25F body)':22}{b['top1']:8.1%}{b['top3']:8.1%}{b['mrr']:8.3f}",
        f"define inputs: {d['n']}  exact-or-first: {d['exact_or_first']:.1%}",
    ]
    if result["search_misses"]:
        lines.append("search not ranked first:")
        lines += [f"  {m['q']!r}: expected {m['expected']}, got {', '.join(m['got'])}" for m in result["search_misses"]]
    if result["define_misses"]:
        lines.append("define misses:")
        lines += [
            f"  {m['q']!r}: expected {m['expected']}, got {m['got']} ({m['how']})" for m in result["define_misses"]
        ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ bench
def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"p50_ms": round(statistics.median(ordered), 4), "p95_ms": round(p95, 4), "n": len(ordered)}


def _time_all(fn: Callable[[str], Any], inputs: list[str]) -> dict[str, float]:
    for x in inputs[:5]:  # warm caches
        fn(x)
    samples = []
    for x in inputs:
        t = time.perf_counter()
        fn(x)
        samples.append((time.perf_counter() - t) * 1000)
    return _percentiles(samples)


def synthetic(corpus: Corpus, factor: int, seed: int = 5) -> Corpus:
    """The corpus plus (factor-1) perturbed copies: new ids and titles, rule words shuffled between entries."""
    rng = random.Random(seed)
    vocab = sorted({w for e in corpus.entries for p in e.paragraphs for w in p.split() if w.isalpha()})
    entries = list(corpus.entries)
    for k in range(1, factor):
        for e in corpus.entries:
            paras = []
            for p in e.paragraphs:
                ws = p.split()
                for _ in range(max(1, len(ws) // 5)):
                    ws[rng.randrange(len(ws))] = rng.choice(vocab)
                paras.append(" ".join(ws))
            title = f"{e.title} {rng.choice(vocab)} {k}"
            entries.append(replace(e, id=f"{e.id}-syn{k}", title=title, aliases=[], paragraphs=paras))
    return Corpus(entries=entries, files=list(corpus.files))


def _bench_engine(engine: Engine, data: dict[str, list[dict[str, str]]]) -> dict[str, Any]:
    prefixes = sorted({x["q"][:n] for x in data["define"] for n in range(1, min(len(x["q"]), 8) + 1)})
    return {
        "complete": _time_all(engine.complete, prefixes),
        "define": _time_all(engine.define, [x["q"] for x in data["define"]]),
        "search": _time_all(engine.search, [x["q"] for x in data["search"]]),
    }


def run_bench(
    sources: list[Path] | None = None, factors: tuple[int, ...] = (1, 10, 100), traced: tuple[int, ...] = (1, 10)
) -> dict[str, Any]:
    """Build and query timings at each corpus size, then memory.

    Timings run without tracemalloc (it slows Python several-fold); the tracemalloc peak comes from a
    second, traced build + query pass, done only for the sizes in ``traced`` because it is slow.
    """
    data = load_eval()
    out: dict[str, Any] = {}
    base_corpus: Corpus | None = None

    def make(factor: int, folder: Path) -> Engine:
        nonlocal base_corpus
        if factor == 1:
            engine = Engine.open(sources, folder)
            base_corpus = engine.corpus
            return engine
        assert base_corpus is not None
        return Engine.from_corpus(synthetic(base_corpus, factor), folder)

    for factor in factors:
        with tempfile.TemporaryDirectory(prefix="l5r-bench-") as tmp:
            t = time.perf_counter()
            engine = make(factor, Path(tmp) / "timed")
            row: dict[str, Any] = {
                "entries": len(engine.corpus.entries),
                "build_s": round(time.perf_counter() - t, 3),
                "index_build_s": engine.stats()["build_seconds"],
            }
            row.update(_bench_engine(engine, data))
            engine.close()
            row["tracemalloc_peak_mb"] = None
            if factor in traced:
                tracemalloc.start()
                engine = make(factor, Path(tmp) / "traced")
                for x in data["search"]:
                    engine.search(x["q"])
                _cur, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                engine.close()
                row["tracemalloc_peak_mb"] = round(peak / 1e6, 1)
            row["rss_max_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
            out[f"x{factor}"] = row
    return out


def format_bench(result: dict[str, Any]) -> str:
    lines = [
        f"{'corpus':8}{'entries':>8}{'build s':>9}{'complete p50/p95':>20}{'define p50/p95':>18}"
        f"{'search p50/p95':>18}{'peak MB':>9}{'RSS MB':>8}"
    ]
    for name, r in result.items():

        def pp(k: str, r: dict[str, Any] = r) -> str:
            return f"{r[k]['p50_ms']:.2f}/{r[k]['p95_ms']:.2f} ms"

        lines.append(
            f"{name:8}{r['entries']:>8}{r['build_s']:>9.2f}{pp('complete'):>20}{pp('define'):>18}"
            f"{pp('search'):>18}{r['tracemalloc_peak_mb'] or '-':>9}{r['rss_max_mb']:>8}"
        )
    lines.append(
        "build s: parse + index build + open (x1; synthetic corpora are generated in memory, not parsed). "
        "Timings are warm, without tracemalloc. peak MB: tracemalloc peak over a separate build + search pass "
        "(x1, x10 only); RSS MB: process maximum so far."
    )
    return "\n".join(lines)
