"""End to end: ``as_of`` and ``/history`` through the real bot (discord.py) against the fake Discord.

The slash options come from the command registry, the buttons carry the day in their custom ids (within
Discord's 100 characters, which the fake enforces), and a click rebuilds the answer on that day.
"""

from __future__ import annotations

import copy
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, bot_running, preserved_discord_urls

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")

text_of = FakeDiscord.text_of


@pytest.fixture(scope="module")
def index_dir(index_copy: Callable[..., Path]) -> Path:
    return index_copy("e2e-as-of")  # the session's default index, copied


@pytest.fixture(scope="module")
def engine(index_dir: Path) -> Engine:
    return Engine.open(None, index_dir)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fake(engine: Engine, index_dir: Path) -> AsyncIterator[FakeDiscord]:
    with preserved_discord_urls():
        async with FakeDiscord() as fake:
            settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=index_dir, cooldown_seconds=0)
            bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot, "fake-token"):
                yield fake


def ids(fake: FakeDiscord, message: dict) -> list[str]:
    return [c["custom_id"] for c in fake.components_of(message) if c.get("custom_id")]


async def test_the_slash_commands_take_as_of(fake: FakeDiscord) -> None:
    registered = {c["name"]: c for c in fake.registered_commands()}
    for name in ("define", "ask", "rule", "banned"):
        options = {o["name"]: o for o in registered[name]["options"]}
        assert options["as_of"]["description"] == "The rules as they stood on this date, e.g. 2015-11-01", name
        assert not options["as_of"].get("required")
    assert "history" in registered


async def test_define_as_of_a_day_before_the_entry(fake: FakeDiscord) -> None:
    rec = await fake.invoke_command("define", {"term": "facing", "as_of": "2008-01-01"})
    text = text_of(rec.message)
    assert rec.message["embeds"][0]["title"] == "Facing — not yet on 2008-01-01"
    assert "**Facing** did not exist yet on 2008-01-01: it was added on 2008-02-12" in text
    bad = await fake.invoke_command("define", {"term": "facing", "as_of": "2008-02-30"})
    assert "as\\_of: 2008-02-30 is not a real date." in text_of(bad.message) or (
        "as_of: 2008-02-30 is not a real date." in text_of(bad.message)
    )


async def test_open_under_an_as_of_answer_stays_on_that_day(fake: FakeDiscord) -> None:
    rec = await fake.invoke_command("define", {"term": "terrain", "as_of": "2015-10-22"})
    message = copy.deepcopy(rec.message)
    text = text_of(message)
    assert message["embeds"][0]["title"] == "Terrain — as of 2015-10-22"
    assert "Made after 2015-10-22, so left out: Update 10/25/2015 (2015-10-25)." in text
    assert "One Terrain per battlefield will be returned" not in text
    assert "l5r:open:obsidian-hand:update-2015-10-20@2015-10-22" in ids(fake, message)
    assert all(len(i) <= 100 for i in ids(fake, message))
    opened = await fake.click(message, "l5r:open:obsidian-hand:update-2015-10-20@2015-10-22")
    assert opened.message["embeds"][0]["title"] == "Update 10/20/2015 — as of 2015-10-22"
    later = await fake.invoke_command("define", {"term": "naval invasion", "as_of": "2015-10-20"})
    assert "target your performing unbowed Naval Personality at the current battlefield" in text_of(later.message)


async def test_banned_as_of_the_kotei(fake: FakeDiscord) -> None:
    rec = await fake.invoke_command("banned", {"card": "Moshi Eihime", "as_of": "2015-11-01"})
    text = text_of(rec.message)
    assert rec.message["embeds"][0]["title"] == "Not yet banned on 2015-11-01: Moshi Eihime"
    assert "it was added to The Obsidian Hand Ruleset's banned list on 2016-02-15" in text
    assert "As far as that list goes, it was legal on that day." in text


async def test_history_pages_keep_oldest_first(fake: FakeDiscord) -> None:
    rec = await fake.invoke_command("history", {"term": "terrain"})
    message = copy.deepcopy(rec.message)
    text = text_of(message)
    assert message["embeds"][0]["title"] == "History — Terrain"
    dates = re.findall(r"\*\*(\d{4}-\d{2}-\d{2})\*\* ·", text)
    assert dates == sorted(dates) and dates[:2] == ["2008-03-24", "2008-05-21"]
    assert "Circle of Steel" in text  # the paragraph the 2008-03-24 stamp dates, quoted
    ac = await fake.autocomplete("history", "term", "terra")
    assert "glossary:terrain" in [c["value"] for c in ac.choices]
    picked = await fake.invoke_command("history", {"term": "glossary:naval-invasion"})
    assert picked.message["embeds"][0]["title"].startswith("History")


async def test_ask_as_of_pages_on_that_day_and_reports_the_question_alone(fake: FakeDiscord) -> None:
    rec = await fake.invoke_command("ask", {"question": "is a terrain an enemy card", "as_of": "2015-10-22"})
    message = copy.deepcopy(rec.message)
    assert message["embeds"][0]["title"] == "Rules for: is a terrain an enemy card — as of 2015-10-22"
    custom = ids(fake, message)
    assert "l5r:open:glossary:terrain@2015-10-22" in custom
    # "Not the answer?" is about which paragraph answers the question: the day is not part of it
    assert [i for i in custom if i.startswith("l5r:na:")] == ["l5r:na:is a terrain an enemy card"]
