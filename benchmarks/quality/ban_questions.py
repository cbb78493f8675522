"""Scores ``/ask`` on questions about whether a card is banned (``benchmarks/ban_questions_*.json``), as a player
reads the answer: what it says first.

A question about a card the list names is *right* when the answer opens on that card's banned line (the first
result, or the ``/banned`` verdict note naming it banned) and *wrong* when it says the card is not named. A question
about a card the list does not name is *right* when the answer opens with "… is not named on … banned list", *wrong*
when its first result is another card's banned line with no such note (a reader takes it for the answer), and
*silent* otherwise: the search's text, with no word on the ban either way, which is how every such question was
answered before the verdict existed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.app.answer import Answer, Note, plain_text
from bot.app.judge import Judge
from index.engine import Engine

HERE = Path(__file__).resolve().parents[1]
SETS = sorted(HERE.glob("ban_questions_*.json"))
NOT_NAMED = "is not named on"


def _notes(answer: Answer) -> list[str]:
    blocks = answer.items[0].blocks if answer.items else answer.body
    return [plain_text(b.parts) for b in blocks if isinstance(b, Note) and b.kind == "banned"]


def _verdict(engine: Engine, answer: Answer, item: dict[str, Any]) -> str:
    notes = _notes(answer)
    first = engine.get(answer.hit_ids[0]) if answer.hit_ids else None
    said_not_named = any(NOT_NAMED in n for n in notes)
    if item["kind"] == "listed":
        line = int(item["line"])
        span = (first.location.first_line, first.location.last_line) if first is not None else (0, -1)
        named_first = first is not None and first.kind == "banned" and span[0] <= line <= span[1]
        named_in_note = any("banned" in n and not said_not_named for n in notes)
        if said_not_named:
            return "wrong"
        return "right" if named_first or named_in_note else "silent"
    if said_not_named:
        return "right"
    return "wrong" if first is not None and first.kind == "banned" else "silent"


def score(engine: Engine) -> dict[str, Any]:
    """Per set and kind: right / silent / wrong counts, and the questions that were not right."""
    judge = Judge(engine)
    out: dict[str, Any] = {}
    for path in SETS:
        items = json.loads(path.read_text(encoding="utf-8"))["questions"]
        counts: dict[str, dict[str, int]] = {}
        misses: list[str] = []
        for item in items:
            verdict = _verdict(engine, judge.ask(item["q"]), item)
            counts.setdefault(item["kind"], {"right": 0, "silent": 0, "wrong": 0})[verdict] += 1
            if verdict != "right":
                misses.append(f"{item['kind']} {verdict}: {item['q']}")
        out[path.stem] = {"counts": counts, "misses": misses}
    return out


def format_score(result: dict[str, Any]) -> str:
    lines = []
    for name, row in result.items():
        lines.append(f"{name}:")
        for kind, c in row["counts"].items():
            total = sum(c.values())
            lines.append(f"  {kind} ({total}): right {c['right']}, silent {c['silent']}, wrong {c['wrong']}")
        lines += [f"    {m}" for m in row["misses"]]
    return "\n".join(lines)
