"""Resident memory of the bot: the running bot process against the fake Discord, and the engine at 100x.

*Running bot*: ``python -m bot run`` as deployed (``tests/fakediscord``'s ``BotProcess``), connected to the
fake Discord, after it has answered every evaluation question as ``/ask``, every define term as ``/define``
and as autocomplete; its VmRSS (and peak, VmHWM) read from ``/proc`` while it still runs. That is the figure
a host has to hold for one bot. *Judge process*: a fresh process that imports the bot (discord.py and all
cogs), opens the engine and answers every evaluation question through the bot's own ``Judge`` without ever
connecting: at the shipped size (to compare with the running bot) and at 100x (the synthetic corpus of
``python -m benchmarks.quality bench``, built in the same work folder, so run that first or expect a long
first build). No network.

    python benchmarks/bot_rss.py [--work DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fakediscord import FakeDiscord  # noqa: E402
from fakediscord.process import BotProcess  # noqa: E402

CHILD = """
import json, sys
from pathlib import Path
import bot.discord_bot.client  # noqa: F401  (the whole bot: discord.py, cogs, views)
from bot.app.judge import Judge
from index.engine import Engine
from benchmarks.quality.evaluate import load_eval, synthetic
factor, folder = int(sys.argv[1]), Path(sys.argv[2])
engine = Engine.open(None, folder / "x1")
if factor != 1:
    corpus = synthetic(engine.corpus, factor)
    engine.close()
    engine = Engine.from_corpus(corpus, folder / f"x{factor}")
judge = Judge(engine)
data = load_eval()
for x in data["search"] + data["paraphrased"]:
    judge.ask(x["q"])
status = dict(l.split(":", 1) for l in Path("/proc/self/status").read_text().splitlines() if ":" in l)
print(json.dumps({"entries": len(engine.corpus.entries), "rss_mb": int(status["VmRSS"].split()[0]) / 1024}))
"""


def status_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (the peak) of a running process, in MB."""
    text = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    return {key: int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM")}


async def running_bot(work: Path) -> dict[str, Any]:
    """The deployed bot's memory after it has answered the evaluation commands through the fake Discord."""
    from benchmarks.quality.evaluate import load_eval

    data = load_eval()
    questions = [x["q"] for x in data["search"] + data["paraphrased"]]
    terms = [x["q"] for x in data["define"]]
    with tempfile.TemporaryDirectory(prefix="l5r-rss-", dir=work) as tmp:
        async with FakeDiscord() as fake, BotProcess(fake, Path(tmp), {"COOLDOWN_SECONDS": "0"}) as bot:
            await bot.wait_healthy(timeout=300)
            assert bot.proc is not None
            started = status_mb(bot.proc.pid)
            user = fake.new_member("rss")
            answered = 0
            for q in questions:
                rec = await fake.invoke_command("ask", {"question": q[:200]}, user=user, timeout=30)
                answered += bool(rec.message and rec.message.get("embeds"))
            for term in terms:
                rec = await fake.invoke_command("define", {"term": term[:100]}, user=user, timeout=30)
                answered += bool(rec.message and rec.message.get("embeds"))
                await fake.autocomplete("define", "term", term[:100], user=user)
            after = status_mb(bot.proc.pid)
    return {"commands": len(questions) + 2 * len(terms), "answered": answered, "ready": started, "after": after}


def judge_process(factor: int, work: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(factor), str(work)],
        capture_output=True, text=True, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "l5r-judge-bench")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    run = asyncio.run(running_bot(args.work))
    print(f"running bot (python -m bot run, fake Discord): ready {run['ready']['VmRSS']:.1f} MB; after "
          f"{run['commands']} commands ({run['answered']} answered) {run['after']['VmRSS']:.1f} MB, "
          f"peak {run['after']['VmHWM']:.1f} MB")
    print(f"{'judge process':14}{'entries':>9}{'RSS MB':>9}")
    for factor in (1, 100):
        row = judge_process(factor, args.work)
        print(f"{'x' + str(factor):14}{row['entries']:>9}{row['rss_mb']:>9.1f}")


if __name__ == "__main__":
    main()
