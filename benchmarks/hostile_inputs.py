"""Hostile inputs: every escaping, rendering and parsing step must cost time in proportion to its input.

Each case is timed at three sizes (n, 2n, 4n); a linear step takes about 4x as long at 4n as at n, a
quadratic one 16x. A case fails when that growth is above ``MAX_GROWTH`` or when the largest size takes
longer than its time budget. The last section reloads the shipped corpus plus a hostile page through
``Engine.reload`` (parse and build in a child process) while an event loop ticks every 10 ms, and
reports the longest stall of that loop (the old in-process reload stalled it for tens of seconds).

    python benchmarks/hostile_inputs.py [--json]

Exit status 1 when a budget or the growth limit is exceeded. Timings on a shared machine are noisy:
the best of three runs is taken at every size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.app.compose import Composer  # noqa: E402
from bot.app.renderers import discord_markdown, text  # noqa: E402
from bot.app.renderers.discord_markdown import escape, marked, plain  # noqa: E402
from glossary.house import parse_house_rulings  # noqa: E402
from glossary.loader import SHIPPED_SOURCES  # noqa: E402
from glossary.mediawiki import find_cross_refs, parse_glossary_page  # noqa: E402
from glossary.model import Entry, Location  # noqa: E402
from glossary.obsidian import parse_obsidian  # noqa: E402
from glossary.stamps import parse_stamps  # noqa: E402
from index.engine import Engine  # noqa: E402
from index.results import Hit  # noqa: E402

MAX_GROWTH = 8.0  # time(4n) / time(n): 4 when linear, 16 when quadratic; the slack is for a noisy machine
LOOP_STALL_BUDGET = 0.5  # seconds the event loop may go without running during a hostile reload


def _entry(source: str) -> Entry:
    return Entry(
        id="glossary:hostile", source="glossary", document="Hostile", kind="term", title="Hostile",
        section=["Hostile"], paragraphs=[source], location=Location("hostile.txt", 1, 2),
    )


def _render(source: str) -> int:
    """The entry composed, then rendered for Discord (escaped, paged) and for the console."""
    answer = Composer(lambda _i: None).entry(_entry(source))
    message = discord_markdown.render(answer)
    return sum(len(p.description) for p in message.pages) + len(text.render(answer))


def _render_hit(source: str) -> int:
    """An /ask result quoting the paragraph with one marked character in 32 (one '[x](' in 8), rendered both ways."""
    hit = Hit(_entry(source), 1.0, [(i, i + 1) for i in range(0, len(source), 32)], 0, [])
    answer = Composer(lambda _i: None).ask("x", [hit])
    message = discord_markdown.render(answer)
    return sum(len(p.description) for p in message.pages) + len(text.render(answer))


def _glossary(line: str) -> str:
    return f"Glossary T\n[edit] Term\n{line}\nBack to the Comprehensive Rules\n"


def _obsidian(*lines: str) -> str:
    return "The Obsidian Hand Ruleset\n\n" + "\n".join(lines) + "\n"


# name -> (unit count n at the smallest size, budget in seconds at 4n, work(n))
CASES: dict[str, tuple[int, float, Callable[[int], Any]]] = {
    "escape '[x](' x n": (100_000, 1.0, lambda n: escape("[x](" * n)),
    "escape '*a_~|`<@' x n": (50_000, 1.0, lambda n: escape("*a_~|`<@" * n)),
    "escape '\\\\' x n": (200_000, 1.0, lambda n: escape("\\" * n)),
    "escape '@everyone ' x n": (50_000, 1.0, lambda n: escape("@everyone " * n)),
    "plain(escape('[x](' x n))": (100_000, 1.0, lambda n: plain(escape("[x](" * n))),
    "plain '[a](http://x' x n": (50_000, 1.0, lambda n: plain("[a](http://x" * n)),
    "marked '[x](' x n, 1 span in 8": (
        50_000, 1.0, lambda n: marked("[x](" * n, [(i, i + 1) for i in range(0, 4 * n, 32)])
    ),
    "render entry '[x](' x n": (25_000, 2.0, lambda n: _render("[x](" * n)),
    "render entry '\\\\' x n (one long escape run)": (50_000, 2.0, lambda n: _render("\\" * n)),
    "render entry 'word ' x n": (25_000, 2.0, lambda n: _render("word " * n)),
    "render /ask result '[x](' x n, 1 span in 8": (25_000, 2.0, lambda n: _render_hit("[x](" * n)),
    "glossary 'See A' + n spaces + 'b'": (50_000, 1.0, lambda n: find_cross_refs(["See A" + " " * n + "b"])),
    "glossary heading 'a' + n spaces + 'b [edit]x'": (
        50_000, 1.0, lambda n: parse_glossary_page(_glossary("a" + " " * n + "b [edit]x"), "h.txt")
    ),
    "stamp '[ADDED Oct 1 2007' + n spaces": (
        50_000, 1.0, lambda n: parse_stamps("[ADDED Oct 1 2007" + " " * n + "x Nov 3 2007]")
    ),
    "obsidian 'Cardinal Rule 2: a' + n spaces": (
        50_000, 1.0, lambda n: parse_obsidian(_obsidian("I. CARDINAL RULES", "Cardinal Rule 2: a" + " " * n + "b"), "o")
    ),
    "obsidian '*** a' + n spaces + 'b'": (
        50_000, 1.0, lambda n: parse_obsidian(_obsidian("Banned Cards", "x", "*** a" + " " * n + "b", "C"), "o")
    ),
    "house file of n rulings": (
        2_000, 3.0,
        lambda n: parse_house_rulings(
            "# R\n\n" + "\n\n".join(f"## R{i}\nDate: 2026-01-01\n\nText {i}.\n\n- a\n- b" for i in range(n)), "h.md"
        ),
    ),
    "glossary page with n copies of one title": (
        4_000, 2.0, lambda n: parse_glossary_page("Glossary T\n" + "[edit] Term\nx\n" * n + _glossary("")[11:], "g")
    ),
}


def best_of(work: Callable[[int], Any], n: int, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work(n)
        best = min(best, time.perf_counter() - started)
    return best


def run_cases() -> list[dict[str, Any]]:
    rows = []
    for name, (n, budget, work) in CASES.items():
        times = [best_of(work, n * k) for k in (1, 2, 4)]
        growth = times[2] / max(times[0], 1e-6)
        ok = times[2] <= budget and (growth <= MAX_GROWTH or times[2] < 0.01)  # tiny times are all noise
        rows.append({"case": name, "n": n, "seconds": times, "growth": growth, "budget": budget, "ok": ok})
    return rows


async def _reload_stall() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        sources = Path(tmp) / "sources"
        shutil.copytree(SHIPPED_SOURCES, sources)
        engine = Engine.open([sources], Path(tmp) / "ix")
        (sources / "hostile.txt").write_text(
            _glossary("See A" + " " * 80_000 + "b\n" + "a" + " " * 80_000 + "b [edit]x"), encoding="utf-8"
        )
        gaps: list[float] = []
        done = asyncio.Event()

        async def ticker() -> None:
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        started = time.perf_counter()
        stats = await asyncio.to_thread(engine.reload)
        done.set()
        await tick
        engine.close()
    stall = max(gaps) - 0.01
    return {
        "reload_seconds": time.perf_counter() - started,
        "build_seconds": stats["build_seconds"],
        "entries": stats["entries"],
        "longest_loop_stall_seconds": stall,
        "ok": stall <= LOOP_STALL_BUDGET,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = run_cases()
    reload = asyncio.run(_reload_stall())
    if args.json:
        print(json.dumps({"cases": rows, "reload": reload}, indent=1))
    else:
        print(f"{'case':52} {'n':>8} {'n ms':>9} {'2n ms':>9} {'4n ms':>9} {'4n/n':>6} {'budget':>7}")
        for r in rows:
            t = r["seconds"]
            flag = "" if r["ok"] else "  OVER"
            print(
                f"{r['case']:52} {r['n']:>8,} {t[0] * 1000:>9.2f} {t[1] * 1000:>9.2f} {t[2] * 1000:>9.2f} "
                f"{r['growth']:>6.1f} {r['budget']:>6.1f}s{flag}"
            )
        print(
            f"\nreload of {reload['entries']} entries with a hostile page: {reload['reload_seconds']:.2f} s "
            f"(index build {reload['build_seconds']:.2f} s); longest event-loop stall "
            f"{reload['longest_loop_stall_seconds'] * 1000:.0f} ms (budget {LOOP_STALL_BUDGET * 1000:.0f} ms)"
            + ("" if reload["ok"] else "  OVER")
        )
    return 0 if all(r["ok"] for r in rows) and reload["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
