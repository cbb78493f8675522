"""How fast a server's rulings become searchable, and what they cost per query (prints figures).

    .venv/bin/python benchmarks/rulings_overlay.py

Builds overlays of 10, 100 and 1,000 generated rulings over the shipped corpus (what happens after each
ruling change: no shared-index rebuild) and times /ask-style searches with and without the overlay.
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
from index.overlay import build_overlay, scoped_id  # noqa: E402

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
        print("| rulings | overlay build ms | search p50/p95 ms without | with overlay |")
        print("| --- | --- | --- | --- |")
        for n in (10, 100, 1000):
            entries = rulings(n)
            started = time.perf_counter()
            overlay = build_overlay("guild:1", entries, 1, engine.corpus)
            build = (time.perf_counter() - started) * 1000
            plain, merged = [], []
            for _ in range(10):
                for q in QUESTIONS:
                    t = time.perf_counter()
                    engine.search(q, 15)
                    plain.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    engine.search(q, 15, overlay=overlay)
                    merged.append(time.perf_counter() - t)
            print(f"| {n:,} | {build:.1f} | {ms(plain)} | {ms(merged)} |")
        engine.close()


if __name__ == "__main__":
    main()
