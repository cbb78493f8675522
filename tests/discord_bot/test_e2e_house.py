"""End to end with house rulings and RULEBOOK_URL: the real bot against the fake Discord.

Checks what a server sees: house rulings under their own label with judge and date (not "the format's
rule"), their buttons, /changes listing them, /reload picking up an edited file, citations linking to
the rulebook anchor, and one log line per answered command (command, latency, hit ids).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, bot_running, preserved_discord_urls

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot, open_engine
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")

EXAMPLES = Path(__file__).resolve().parents[2] / "glossary" / "house_examples"
RULEBOOK = "https://rules.example.org/book"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, index_copy: Callable[..., Path]) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("e2e-house")
    shutil.copytree(EXAMPLES, root / "rulings")
    return root / "rulings", index_copy(root / "index")  # the shipped paragraphs' vectors come from its cache


@pytest.fixture(scope="module")
def settings(folders: tuple[Path, Path]) -> Settings:
    house, index_dir = folders
    return Settings(
        token="fake-token",
        index_dir=index_dir,
        house_rulings=house,
        rulebook_url=RULEBOOK,
        cooldown_seconds=0,
        owner_ids=frozenset(),
    )


@pytest.fixture(scope="module")
def engine(settings: Settings) -> Engine:
    return open_engine(settings)  # the bot's own way of adding the house folder to the sources


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def running(engine: Engine, settings: Settings) -> AsyncIterator[tuple[FakeDiscord, JudgeBot]]:
    with preserved_discord_urls():
        async with FakeDiscord() as fake:
            bot_settings = dataclasses.replace(settings, api_base=fake.api_base)
            bot = JudgeBot(bot_settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot, "fake-token"):
                yield fake, bot


text_of = FakeDiscord.text_of


async def test_define_terrain_shows_house_rulings_labelled_with_judge_and_date(running) -> None:
    fake, _ = running
    rec = await fake.invoke_command("define", {"term": "terrain"})
    text = text_of(rec.message)
    assert "**House ruling — Terrain destroyed before battle resolution (Example Head Judge, 2026-11-01)**:" in text
    assert "House rulings rule" not in text
    assert (
        "**In The Obsidian Hand Ruleset, the latest update about paragraph 2: Update 10/25/2015 (2015-10-25) "
        "(in that format)**:"
    ) in text
    labels = {c["custom_id"]: c.get("label") for c in fake.components_of(rec.message) if c.get("custom_id")}
    assert labels["l5r:open:house:terrain-destroyed-before-battle-resolution"] == (
        "House ruling: Terrain destroyed before battle resolution"
    )
    assert labels["l5r:open:obsidian-hand:update-2015-10-25"] == "Format rule: Update 10/25/2015"
    # The embed title links to the entry's anchor in the rulebook; the citation links there too.
    embed = rec.message["embeds"][0]
    assert embed["url"] == f"{RULEBOOK}/glossary.html#glossary:terrain"
    assert f"[rulebook]({RULEBOOK}/glossary.html#glossary:terrain)" in text

    opened = await fake.click(rec.message, "l5r:open:house:terrain-destroyed-before-battle-resolution")
    ruling = opened.message["embeds"][0]
    assert ruling["title"] == "Terrain destroyed before battle resolution"
    about = next(f["value"] for f in ruling["fields"] if f["name"] == "About")
    assert about == "House ruling (Example Head Judge, 2026-11-01)\nApplies to: Terrain"
    assert ruling["url"] == f"{RULEBOOK}/house.html#house:terrain-destroyed-before-battle-resolution"


async def test_changes_source_house_lists_the_rulings(running) -> None:
    fake, _ = running
    rec = await fake.invoke_command("changes list", {"source": "house"})
    description = rec.message["embeds"][0]["description"]
    assert description.split("\n")[0] == (
        "**2026-11-15** · Added · House ruling › Mid-battle Terrain and the Obsidian Hand format "
        "(Example Event Judge)"
    )
    assert len(description.split("\n")) == 3


async def test_reload_picks_up_an_edited_ruling(running, folders, engine) -> None:
    fake, _ = running
    count = len(engine.corpus.entries)
    house, _ = folders
    path = house / "example-rulings.md"
    original = path.read_text(encoding="utf-8")
    path.write_text(
        original + "\n## Terrain during a duel\nDate: 2026-11-21\nJudge: E2E Judge\nApplies to: Terrain\n\n"
        "No Terrain may be played during a duel (test ruling).\n",
        encoding="utf-8",
    )
    try:
        before = await fake.invoke_command("define", {"term": "terrain"})
        assert "Terrain during a duel" not in text_of(before.message)
        reload = await fake.invoke_command("reload", user=fake.owner, timeout=15)
        assert reload.ephemeral and f"Reloaded {count + 1} entries" in reload.message["content"]
        after = await fake.invoke_command("define", {"term": "terrain"})
        assert "**House ruling — Terrain during a duel (E2E Judge, 2026-11-21)**:" in text_of(after.message)
    finally:
        path.write_text(original, encoding="utf-8")
        engine.reload()


async def test_one_log_line_per_command_with_latency_and_hits(running, caplog) -> None:
    fake, _ = running
    user = fake.new_member()  # (a line of an earlier test's answer may still be written meanwhile)
    with caplog.at_level(logging.INFO, logger="bot"):
        await fake.invoke_command("define", {"term": "target"}, user=user)
        await fake.context_menu("Look up rules", fake.user_message("is a terrain an enemy card"), user=user)

        def logged() -> list[dict]:
            return [r.fields for r in caplog.records if r.getMessage() == "answer" and r.fields["user"] == user.id]

        # The line is written just after the reply is sent; give the bot a moment to write it.
        await fake.wait_for(lambda: len(logged()) >= 2, 5, "two answer log lines")
        await asyncio.sleep(0.2)  # and no third one
    lines = logged()
    assert len(lines) == 2, lines
    assert lines[0]["command"] == "define" and lines[0]["outcome"] == "ok"
    assert lines[0]["latency_ms"] >= 0 and lines[0]["response_age_ms"] >= 0
    assert lines[0]["hits"] == ["glossary:target", "house:ranged-attacks-against-a-personality-who-gains-followers"]
    assert lines[1]["command"] == "Look up rules" and lines[1]["hits"][0].startswith("glossary:")
    assert "fake-token" not in caplog.text


async def test_house_rulings_and_amended_entries_are_accepted_by_discord(running, engine) -> None:
    fake, _ = running
    rulings = [e for e in engine.corpus.entries if e.source == "house"]
    ids = [r.id for r in rulings] + sorted({t for r in rulings for t in r.overrides})
    assert len(ids) == 7
    for entry_id in ids:
        rec = await fake.invoke_command("define", {"term": entry_id})
        assert rec.rejected == [], (entry_id, rec.rejected[0].response)
        assert rec.message["embeds"][0]["title"] == engine.get(entry_id).title


async def test_autocomplete_offers_house_rulings_marked_as_such(running) -> None:
    fake, _ = running
    ac = await fake.autocomplete("define", "term", "terrain d")
    assert {"name": "Terrain destroyed before battle resolution (house ruling)",
            "value": "house:terrain-destroyed-before-battle-resolution"} in ac.choices  # fmt: skip


async def test_every_request_was_valid_and_known(running) -> None:
    """Runs last in the module: Discord would have accepted everything the bot sent above."""
    fake, _ = running
    assert fake.unknown_calls == []
    assert [(c.path, c.response) for c in fake.rejected] == []
