"""A rulings database that is down: rules are still answered, the server is told once, then it recovers.

PostgreSQL is stopped and started for real (a server of this test's own). SQLite goes through the same
service code; a SQLite file that cannot be opened is the last test here.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, bot_running
from pgserver import PostgresServer, unavailable_reason

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from bot.rulings.db import make_engine, migrate, resolve_url
from bot.rulings.repository import Author, Draft, RulingsRepository
from bot.rulings.service import UNAVAILABLE_NOTE
from index.engine import Engine

text_of = FakeDiscord.text_of
NOTE_START = UNAVAILABLE_NOTE.split("(")[0].strip()


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("outage"))


@pytest_asyncio.fixture
async def server() -> AsyncIterator[PostgresServer]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"PostgreSQL tests skipped: {reason}")
    pg = PostgresServer().start()
    try:
        yield pg
    finally:
        await asyncio.to_thread(pg.cleanup)


async def full_text(fake: FakeDiscord, rec) -> str:  # type: ignore[no-untyped-def]
    fields = " ".join(f["value"] for e in rec.message["embeds"] for f in e.get("fields", []))
    return text_of(rec.message) + "\n" + fields


async def test_down_at_start_answers_rules_says_so_once_then_recovers(
    server: PostgresServer, engine: Engine, tmp_path: Path
) -> None:
    url = server.create_database("outage")
    async with FakeDiscord() as fake:
        scope = f"guild:{fake.guild.id}"
        db = make_engine(resolve_url(url, tmp_path))
        await migrate(db)
        await RulingsRepository(db).add(scope, Draft("Stored ruling", "Terrains wait.", ("glossary:terrain",)),
                                         Author("1", "Ann"))  # fmt: skip
        await db.dispose()
        await asyncio.to_thread(server.stop)

        settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                            state_dir=tmp_path / "state", cooldown_seconds=0, database_url=url,
                            rulings_poll_seconds=0.3)  # fmt: skip
        bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
        async with bot_running(fake, bot, "fake-token"):
            first = await full_text(fake, await fake.invoke_command("define", {"term": "terrain"}))
            assert first.lstrip().startswith(f"Terrain\n*{NOTE_START}")  # the rules, opened by the note
            assert "Stored ruling" not in first
            second = await full_text(fake, await fake.invoke_command("define", {"term": "terrain"}))
            assert NOTE_START not in second  # said once
            assert "Terrain" in second
            judge = fake.new_member("judge", manage_guild=True)
            refused = await fake.invoke_command("ruling add", {}, user=judge)
            assert refused.modal is None and "unreachable right now" in refused.message["content"]

            await asyncio.to_thread(server.start)

            async def recovered() -> bool:
                text = await full_text(fake, await fake.invoke_command("define", {"term": "terrain"}))
                return "Stored ruling" in text

            for _ in range(60):
                if await recovered():
                    break
                await asyncio.sleep(0.25)
            else:
                raise AssertionError("the rulings never came back after the database did")
            opened = await fake.invoke_command("ruling add", {}, user=judge)
            assert opened.modal is not None
        assert fake.rejected == []


async def test_down_mid_run_keeps_serving_loaded_rulings_and_refuses_writes(
    server: PostgresServer, engine: Engine, tmp_path: Path
) -> None:
    url = server.create_database("midrun")
    async with FakeDiscord() as fake:
        settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                            state_dir=tmp_path / "state", cooldown_seconds=0, database_url=url,
                            rulings_poll_seconds=0.3)  # fmt: skip
        bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
        judge = fake.new_member("judge", manage_guild=True)
        async with bot_running(fake, bot, "fake-token"):
            opened = await fake.invoke_command("ruling add", {}, user=judge)
            saved = await fake.submit_modal(opened, {"title": "Loaded ruling", "text": "Text.", "applies": "Terrain"})
            assert "Saved ruling #" in saved.message["content"]
            form = await fake.invoke_command("ruling add", {}, user=judge)  # opened while the database is up
            await asyncio.to_thread(server.stop)
            answer = await full_text(fake, await fake.invoke_command("define", {"term": "terrain"}))
            assert "Loaded ruling" in answer and NOTE_START not in answer
            lost = await fake.submit_modal(form, {"title": "Written while down", "text": "My careful text."})
            assert "unreachable right now" in lost.message["content"]
            assert "My careful text." in fake.attachment_data(lost.message).decode()  # handed back, not lost
            await asyncio.to_thread(server.start)
        assert fake.rejected == []


async def test_an_unopenable_sqlite_file_is_down_too(engine: Engine, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the state folder should be")
    async with FakeDiscord() as fake:
        settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                            state_dir=tmp_path / "state", cooldown_seconds=0,
                            database_url=f"sqlite:///{blocker}/rulings.sqlite3")  # fmt: skip
        bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
        async with bot_running(fake, bot, "fake-token"):
            text = await full_text(fake, await fake.invoke_command("define", {"term": "target"}))
            assert NOTE_START in text and "Target" in text
        assert fake.rejected == []
