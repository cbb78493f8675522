"""Load test of the running bot: a burst, then a steady rate with a /reload in the middle.

The real bot runs as its own process (``python -m bot run``, as deployed) against the fake
Discord from tests/fakediscord in this process; all traffic stays on 127.0.0.1 and the run is
bounded (by default 500 interactions at once, then 50 a second for 60 seconds, about 3,500 in all).
A burst is created in one instant and delivered together (``LoadRun.burst``), up to 10,000 at once;
how many of those get a first response in time is the burst's goodput.

Every interaction must get exactly one valid first response within 3 seconds of its creation
(an answer, a defer followed by the answer, or the "busy" reply), none may be lost or refused,
and every /define terrain answer must show one index build whole (the /reload switches the house
rulings from one version to another). Prints p50/p95/p99 of the first response and of the final
answer, both measured from the interaction's creation; exits 1 on any problem.

    python benchmarks/load.py [--burst 500] [--rate 50] [--seconds 60] [--no-reload] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fakediscord import FakeDiscord  # noqa: E402
from fakediscord.load import LoadRun, Workload, write_rulings  # noqa: E402
from fakediscord.process import BotProcess  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402


def outcomes(metrics: str) -> dict[str, int]:
    """The bot's own count of interactions by outcome (autocomplete apart), from its /metrics."""
    counts: dict[str, int] = {}
    for family in text_string_to_metric_families(metrics):
        if family.name != "l5r_answers":
            continue
        for sample in family.samples:
            if sample.name.endswith("_total"):
                kind = "autocomplete" if sample.labels["command"].endswith(":autocomplete") else "answers"
                key = f"{kind} {sample.labels['outcome']}"
                counts[key] = counts.get(key, 0) + int(sample.value)
    return dict(sorted(counts.items()))


def load_inputs() -> tuple[list[str], list[str]]:
    data = json.loads((ROOT / "benchmarks" / "eval_questions.json").read_text(encoding="utf-8"))
    return [i["q"] for i in data["search"]], [i["q"] for i in data["define"]]


async def run(burst: int, rate: float, seconds: float, reload: bool, workers: int | None) -> dict[str, Any]:
    questions, terms = load_inputs()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rulings = work / "rulings"
        write_rulings(rulings, "alpha")
        async with FakeDiscord() as fake:
            env = {"L5R_HOUSE_RULINGS": str(rulings), "OWNER_IDS": str(fake.owner.id)}
            if workers:
                env["LOOKUP_WORKERS"] = str(workers)
            bot = BotProcess(fake, work / "bot", env)
            async with bot:
                await bot.wait_healthy(120)
                users = max(200, burst)
                load = LoadRun(fake, Workload(fake, questions, terms, users=users))
                started = time.perf_counter()
                if burst:
                    await load.burst(burst)
                    await load.settle(60)
                if rate and seconds:
                    await load.steady(
                        rate, seconds, reload_at=seconds / 2 if reload else None, rulings=rulings if reload else None
                    )
                    await load.settle(60)
                took = time.perf_counter() - started
                metrics = await bot.metrics()
            log = bot.log_text()
    reload_text = FakeDiscord.text_of(load.reload.message) if load.reload and load.reload.message else None
    return {
        "burst": load.summary("burst") if burst else None,
        "steady": load.summary("steady") if rate and seconds else None,
        "all": load.summary(),
        "problems": load.problems(),
        "build_problems": load.build_problems(),
        "reload_reply": reload_text,
        "builds_seen": load.builds_seen(),
        "seconds": round(took, 1),
        "burst_late_by": round(load.late_by, 2),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "bot_errors": [line for line in log.splitlines() if "ERROR" in line or "Traceback" in line][:20],
        "bot_outcomes": outcomes(metrics),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burst", type=int, default=500, help="interactions sent at once first (0: none)")
    parser.add_argument("--rate", type=float, default=50.0, help="interactions a second in the steady phase")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the steady phase")
    parser.add_argument("--no-reload", action="store_true", help="no /reload in the middle of the steady phase")
    parser.add_argument("--workers", type=int, default=None, help="LOOKUP_WORKERS for the bot")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if not (0 <= args.burst <= 10_000 and 0 <= args.rate <= 200 and 0 <= args.seconds <= 600):
        parser.error("bounded on purpose: --burst up to 10000, --rate up to 200, --seconds up to 600")
    logging.basicConfig(level=logging.WARNING)
    report = asyncio.run(run(args.burst, args.rate, args.seconds, not args.no_reload, args.workers))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("Load against the bot process (fake Discord on 127.0.0.1); times from the interaction's creation")
        head = f"{'phase':<8}{'sent':>6}{'answered':>9}{'busy':>6}{'deferred':>9}{'lost':>6}"
        head += f"{'first p50/p95/p99/max ms':>30}{'final p50/p95/p99/max ms':>32}"
        print(head)
        for row in (report["burst"], report["steady"], report["all"]):
            if row is None:
                continue
            first = f"{row['first_p50_ms']}/{row['first_p95_ms']}/{row['first_p99_ms']}/{row['first_max_ms']}"
            final = f"{row['final_p50_ms']}/{row['final_p95_ms']}/{row['final_p99_ms']}/{row['final_max_ms']}"
            print(
                f"{row['phase']:<8}{row['sent']:>6}{row['answered']:>9}{row['busy']:>6}{row['deferred']:>9}"
                f"{row['lost']:>6}{first:>30}{final:>32}"
            )
        print(f"run took {report['seconds']} s; reload reply: {report['reload_reply']!r}")
        print(f"burst delivered {report['burst_late_by']} s after its creation; load average {report['load_average']}")
        print(f"/define terrain answers by index build (house ruling version): {report['builds_seen']}")
        print(f"outcomes counted by the bot: {report['bot_outcomes']}")
        for line in report["problems"][:20] + report["build_problems"][:20] + report["bot_errors"]:
            print("PROBLEM:", line)
    bad = report["problems"] or report["build_problems"] or report["bot_errors"]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
