"""``python -m benchmarks.quality eval|bench|blind|insample|bans`` from a checkout: quality, speed, the blind sets.

These were ``python -m index eval`` and ``python -m index bench``; they moved out of the runtime package
because they read the question sets in ``benchmarks/`` and fit weights, which a served bot never does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality", description=__doc__.splitlines()[0])
    parser.add_argument(
        "what",
        choices=("eval", "bench", "blind", "insample", "left-out", "bans"),
        help="eval: answer quality; bench: speed and memory; blind: the 2026-11 blind paragraph and unanswerable sets; "
        "insample: the blind sets' unsure figure on the in-sample sets; left-out: the questions kept as not covered, "
        "each file of them left out in turn; bans: /ask on the blind questions whether a card is banned",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--sources", type=Path, nargs="+", default=None, help="source files or folders")
    parser.add_argument("--index-dir", type=Path, default=None, help="index folder (eval only)")
    args = parser.parse_args(argv)

    from benchmarks.quality.ban_questions import format_score as format_bans
    from benchmarks.quality.ban_questions import score as score_bans
    from benchmarks.quality.blind import (
        format_blind,
        format_in_sample,
        format_left_out,
        left_out,
        score,
        score_in_sample,
    )
    from benchmarks.quality.evaluate import format_bench, format_eval, run_bench, run_eval
    from index.engine import Engine

    if args.what == "bench":
        result, text = run_bench(args.sources), format_bench
    else:  # eval and blind score one engine over the given sources
        measure, text = {
            "blind": (score, format_blind),
            "insample": (score_in_sample, format_in_sample),
            "left-out": (left_out, format_left_out),
            "bans": (score_bans, format_bans),
        }.get(args.what, (run_eval, format_eval))
        engine = Engine.open(args.sources, args.index_dir)
        try:
            result = measure(engine)
        finally:
            engine.close()
    print(json.dumps(result, ensure_ascii=False, indent=1) if args.json else text(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
