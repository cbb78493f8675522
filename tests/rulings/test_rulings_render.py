"""How a server's rulings are rendered: after the rule, credited, never linked to the shared rulebook."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app.judge import Judge
from glossary.model import Change, CrossRef, Entry, Location
from index.engine import Engine
from index.query.overlay import build_overlay, scoped_id
from tests.rendering import to_discord, to_text


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Engine:
    return Engine.open(None, default_index)


def ruling() -> Entry:
    return Entry(id=scoped_id(7), source="house", document="Server rulings", kind="ruling", title="Duel terrain",
                 section=["Kotei"], paragraphs=["Terrains wait @everyone."], location=Location("ruling 7", 1, 1),
                 changes=[Change("added", "2026-11-01", "Date: 2026-11-01")],
                 see_also=[CrossRef("Target", "glossary:target")], judge="Ann", event="Kotei")  # fmt: skip


def test_server_rulings_follow_the_rule_with_credit_and_no_rulebook_link(engine: Engine) -> None:
    overlay = build_overlay("guild:1", [ruling()], 1, engine.corpus)
    judge = Judge(engine, "https://book.example").scoped(overlay)
    text = to_text(judge.define("target"))
    assert text.index("Server ruling — Duel terrain (Ann, 2026-11-01, Kotei):") > text.index("Target")
    assert "This server's rulings: Duel terrain" in text
    opened = judge.open("house:#7")
    assert opened.url is None and "book.example" not in to_text(opened)
    assert "Server ruling (Ann, 2026-11-01, Kotei)" in to_text(opened)
    opened = to_discord(opened)
    assert "@\u200beveryone" in opened.pages[0].description  # mentions neutralised
    plain = Judge(engine, "https://book.example")
    assert "Duel terrain" not in to_text(plain.define("target")) and plain.open("house:#7").title == "Entry not found"


def test_a_notice_opens_the_answer_once_within_limits(engine: Engine) -> None:
    judge = Judge(engine).scoped(None, "Rulings unavailable.")
    answer = to_discord(judge.run(lambda j: j.define("terrain")))
    assert answer.pages[0].description.startswith("*Rulings unavailable.*\n\n")
    long = to_discord(Judge(engine).define("ranged attack").with_notice("x" * 500))
    page = long.pages[0]
    assert len(page.description) <= 4096
    assert len(long.title) + len(page.description) + len(page.footer) + sum(
        len(f.name) + len(f.value) for f in page.fields
    ) <= 6000
