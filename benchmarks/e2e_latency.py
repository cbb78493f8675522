"""End-to-end latency of the Discord bot: interaction dispatched by the fake Discord -> callback received.

Runs the real JudgeBot (discord.py, real Engine on the shipped corpus) against the local fake Discord
from tests/fakediscord, sends every evaluation question as /ask (and the define questions as /define,
plus an autocomplete per define term), one at a time, and prints p50/p95/max per command.
The clock starts when the fake writes INTERACTION_CREATE to the gateway socket and stops when it
accepts the bot's first interaction callback, so it covers gateway decode, discord.py dispatch, the
engine query, rendering and the HTTP callback. No network and no token are involved.

    python benchmarks/e2e_latency.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fakediscord import FakeDiscord, bot_running, preserved_discord_urls  # noqa: E402

from bot.app.settings import Settings  # noqa: E402
from bot.discord_bot.client import JudgeBot  # noqa: E402
from index.engine import Engine  # noqa: E402

TARGET_P95_MS = 50.0
FALLBACK_QUESTIONS = {
    "search": [
        "is a terrain an enemy card",
        "can I target a face-down card",
        "what happens when a duel ends in a tie",
        "when does a personality bow",
        "can a follower attach to a personality that is bowed",
    ],
    "define": ["target", "terrain", "enemy", "cardinal rule 2", "tactician"],
}


def load_questions() -> dict[str, list[str]]:
    """The index helper's evaluation set when present; a small built-in list otherwise."""
    path = ROOT / "benchmarks" / "eval_questions.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return FALLBACK_QUESTIONS
    search = [item["q"] for item in data.get("search", []) if item.get("q")]
    define = [item["q"] for item in data.get("define", []) if item.get("q")]
    return {"search": search or FALLBACK_QUESTIONS["search"], "define": define or FALLBACK_QUESTIONS["define"]}


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (no interpolation: a figure that actually occurred)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def summarise(name: str, latencies_s: list[float], deferred: int, answered: int | None = None) -> dict[str, Any]:
    ms = [x * 1000 for x in latencies_s]
    return {
        "command": name,
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "max_ms": round(max(ms), 2),
        "mean_ms": round(statistics.fmean(ms), 2),
        "deferred": deferred,
        "answered": answered,
    }


async def run(repeat: int) -> dict[str, Any]:
    questions = load_questions()
    with tempfile.TemporaryDirectory() as tmp, preserved_discord_urls():
        index_dir = Path(tmp) / "index"
        started = time.perf_counter()
        engine = Engine.open(None, index_dir)
        open_s = time.perf_counter() - started
        async with FakeDiscord() as fake:
            settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=index_dir, cooldown_seconds=0)
            bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot):
                user = fake.new_member("benchmark")
                await fake.invoke_command("ask", {"question": "warm up"}, user=user)  # first-call costs
                kinds = ("ask", "define", "autocomplete")
                latencies: dict[str, list[float]] = {kind: [] for kind in kinds}
                deferred = dict.fromkeys(kinds, 0)
                answered = dict.fromkeys(kinds, 0)
                for _ in range(repeat):
                    for kind, option, items in (
                        ("ask", "question", questions["search"]),
                        ("define", "term", questions["define"]),
                    ):
                        for text in items:
                            rec = await fake.invoke_command(kind, {option: text[:200]}, user=user, timeout=10)
                            latencies[kind].append(rec.latency or 0.0)
                            deferred[kind] += rec.response_type == 5
                            answered[kind] += bool(rec.message and rec.message["embeds"])
                    for text in questions["define"]:
                        rec = await fake.autocomplete("define", "term", text[:100], user=user)
                        latencies["autocomplete"].append(rec.latency or 0.0)
                        answered["autocomplete"] += bool(rec.choices)
                problems = [(c.path, c.status, c.response) for c in fake.rejected + fake.unknown_calls]
    rows = [summarise(name, lat, deferred[name], answered[name]) for name, lat in latencies.items() if lat]
    overall = [x for lat in latencies.values() for x in lat]
    return {
        "engine_open_s": round(open_s, 3),
        "rows": rows,
        "overall": summarise("all", overall, sum(deferred.values()), sum(answered.values())),
        "target_p95_ms": TARGET_P95_MS,
        "rejected_or_unknown_requests": problems,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="run the question set this many times")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    report = asyncio.run(run(max(1, args.repeat)))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("End-to-end latency (fake Discord dispatch -> interaction callback received)")
        print(f"{'command':<14}{'n':>5}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}{'deferred':>10}{'answered':>10}")
        for row in [*report["rows"], report["overall"]]:
            print(
                f"{row['command']:<14}{row['n']:>5}{row['p50_ms']:>10.2f}{row['p95_ms']:>10.2f}"
                f"{row['max_ms']:>10.2f}{row['deferred']:>10}{row['answered']:>10}"
            )
        verdict = "meets" if report["overall"]["p95_ms"] <= TARGET_P95_MS else "MISSES"
        print(f"overall p95 {report['overall']['p95_ms']:.2f} ms {verdict} the {TARGET_P95_MS:.0f} ms target")
        if report["rejected_or_unknown_requests"]:
            print(f"WARNING: {len(report['rejected_or_unknown_requests'])} request(s) refused by the fake Discord")
    return 0 if report["overall"]["p95_ms"] <= TARGET_P95_MS and not report["rejected_or_unknown_requests"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
