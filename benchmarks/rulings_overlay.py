"""How fast a server's rulings become searchable, and what they cost per query (prints figures).

    .venv/bin/python benchmarks/rulings_overlay.py

Builds overlays of 10, 100 and 1,000 generated rulings over the shipped corpus (what happens after each
ruling change: no shared-index rebuild) and times /ask-style searches with and without the overlay.
Overlay builds are timed by words only, with every paragraph embedded by the loaded model (a server's
first load), and after one ruling changed (the other vectors reused); searches use the embedded overlay.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from glossary.model import Change, CrossRef, Entry, Location  # noqa: E402
from index.engine import Engine  # noqa: E402
from index.query.overlay import build_overlay, scoped_id  # noqa: E402

QUESTIONS = ["can I play a terrain during a duel", "is a terrain an enemy card", "ranged attack on a follower",
             "how many copies of a card", "what does target mean"]  # fmt: skip
TARGETS = ["glossary:terrain", "glossary:target", "glossary:ranged-attack", "glossary:enemy"]


def rulings(n: int) -> list[Entry]:
    return [
        Entry(id=scoped_id(i), source="house", document="Server rulings", kind="ruling",
              title=f"Ruling {i} on {TARGETS[i % 4].split(':')[1]}", section=["Server rulings"],
              paragraphs=[f"At event {i % 7}, a {TARGETS[i % 4].split(':')[1]} played during a duel waits.",
                          "Judges may rule otherwise when the card says so."],
              location=Location(f"ruling {i}", 1, 3), changes=[Change("added", "2026-11-01", "Date: 2026-11-01")],
              see_also=[CrossRef(TARGETS[i % 4], TARGETS[i % 4])], judge="Ann")
        for i in range(n)
    ]  # fmt: skip


def ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"{statistics.median(ordered) * 1000:.2f}/{ordered[int(len(ordered) * 0.95) - 1] * 1000:.2f}"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine.open(None, Path(tmp) / "index")
        print(f"model: {engine.embedder.name if engine.embedder else 'off'}")
        print("| rulings | build ms: words only | embedded | one changed | search p50/p95 ms without | with overlay |")
        print("| --- | --- | --- | --- | --- | --- |")
        for n in (10, 100, 1000):
            entries = rulings(n)
            started = time.perf_counter()
            build_overlay("guild:1", entries, 1, engine.corpus)
            build = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            first = engine.build_overlay("guild:1", rulings(n), 1)
            embedded = (time.perf_counter() - started) * 1000
            changed = rulings(n)
            changed[0].paragraphs = ["A ruling edited: " + changed[0].paragraphs[0], *changed[0].paragraphs[1:]]
            started = time.perf_counter()
            overlay = engine.build_overlay("guild:1", changed, 2, previous=first)
            again = (time.perf_counter() - started) * 1000
            plain, merged = [], []
            for _ in range(10):
                for q in QUESTIONS:
                    t = time.perf_counter()
                    engine.search(q, 15)
                    plain.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    engine.search(q, 15, overlay=overlay)
                    merged.append(time.perf_counter() - t)
            print(f"| {n:,} | {build:.1f} | {embedded:.0f} | {again:.1f} | {ms(plain)} | {ms(merged)} |")
        engine.close()


if __name__ == "__main__":
    main()
