"""Resident memory of the bot process at 1x and 100x corpus size.

Each size runs in a fresh process that imports the bot (discord.py and all cogs), opens the engine the way
the bot does, answers every evaluation question through the bot's own ``Judge`` and reports VmRSS. The
100x corpus is the synthetic one of ``python -m benchmarks.quality bench`` (built in the same work folder, so run that
first or expect a long first build). No network: the gateway is never connected.

    python benchmarks/bot_rss.py [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "l5r-judge-bench")
    args = parser.parse_args()
    print(f"{'corpus':8}{'entries':>9}{'RSS MB':>9}")
    for factor in (1, 100):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(factor), str(args.work)], capture_output=True, text=True, check=True
        )
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{'x' + str(factor):8}{row['entries']:>9}{row['rss_mb']:>9.1f}")


if __name__ == "__main__":
    main()
