"""End to end: a server's data through the bot's removal, a re-invite, the grace period, an outage and
``/ruling delete-all``, on the fake Discord with the real bot and a SQLite rulings database.

Discord's own events drive it (GUILD_DELETE with and without ``unavailable``, GUILD_CREATE for a join and
for a guild back from an outage: ``fakediscord.membership``). Time is the service's clock, moved by the
test; the purge is the one the bot runs every hour, called directly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, FakeGuild, InteractionRecord, bot_running, preserved_discord_urls

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot, scope_of
from bot.rulings import retention
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")

text_of = FakeDiscord.text_of
T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


@dataclasses.dataclass
class Clock:
    now: dt.datetime

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("e2e-data-life"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict]:
    state = tmp_path_factory.mktemp("e2e-data-life-state")
    with preserved_discord_urls():
        async with FakeDiscord(shard_count=2) as fake:
            settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                                state_dir=state, cooldown_seconds=0, rulings_poll_seconds=0.5,
                                data_grace_days=30)  # fmt: skip
            bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot, "fake-token"):
                clock = Clock(T0)
                bot.rulings.clock = clock
                yield {"fake": fake, "bot": bot, "clock": clock, "one": fake.guilds[0], "two": fake.guilds[1]}


async def eventually(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 10.0) -> None:
    """Wait for the bot to have handled a gateway event (its effect is in the database)."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def marks(bot: JudgeBot) -> dict[str, dt.datetime]:
    return await retention.marked(bot.rulings.db)


async def add_ruling(fake: FakeDiscord, guild: FakeGuild, title: str) -> int:
    opened = await fake.invoke_command("ruling add", {"applies_to": "glossary:terrain"}, user=fake.admin, guild=guild)
    saved = await fake.submit_modal(opened, {"title": title, "text": f"{title}: no Terrain may be played."})
    content = saved.message["content"]
    assert "Saved ruling #" in content, content
    return int(content.split("ruling #")[1].split(" ")[0])


async def listed(fake: FakeDiscord, guild: FakeGuild) -> str:
    rec = await fake.invoke_command("ruling list", {"private": True}, user=fake.admin, guild=guild)
    return text_of(rec.message)


async def define_terrain(fake: FakeDiscord, guild: FakeGuild) -> str:
    rec = await fake.invoke_command("define", {"term": "terrain"}, user=fake.member, guild=guild)
    return text_of(rec.message)


async def test_an_outage_marks_nothing_and_deletes_nothing(world) -> None:
    fake, bot, clock, two = world["fake"], world["bot"], world["clock"], world["two"]
    await add_ruling(fake, two, "Outage ruling")
    await fake.guild_outage(two)  # GUILD_DELETE with unavailable: true
    await fake.wait_for(lambda: bot.get_guild(two.id).unavailable, 5, "the guild to be unavailable")
    await bot.rulings.try_flush_membership()
    clock.now = T0 + 400 * DAY  # far past any grace period while the guild is out
    assert await bot.rulings.purge_expired() == {}
    assert await marks(bot) == {}
    await fake.guild_recovers(two)  # GUILD_CREATE with unavailable: false
    await fake.wait_for(lambda: not bot.get_guild(two.id).unavailable, 5, "the guild to be back")
    assert "Outage ruling" in await listed(fake, two) and "Outage ruling" in await define_terrain(fake, two)
    clock.now = T0


async def test_a_removal_marks_the_server_and_a_reinvite_within_the_grace_period_restores_everything(world) -> None:
    fake, bot, clock, one = world["fake"], world["bot"], world["clock"], world["one"]
    await add_ruling(fake, one, "Kept ruling")
    await fake.remove_bot(one)  # kicked: GUILD_DELETE without unavailable
    await eventually(lambda: _has_mark(bot, one), "the removal to be marked")
    assert (await marks(bot))[scope_of(one.id)] == T0
    assert bot.rulings.overlay(scope_of(one.id)) is None  # nothing of it held in memory any more

    clock.now = T0 + 29 * DAY
    assert await bot.rulings.purge_expired() == {}  # within the grace period: nothing deleted
    await fake.invite_bot(one)  # invited again: GUILD_CREATE (a join)
    await eventually(lambda: _no_mark(bot, one), "the mark to be cleared")
    clock.now = T0 + 90 * DAY
    assert await bot.rulings.purge_expired() == {}  # no mark: never purged
    assert "Kept ruling" in await listed(fake, one)
    assert "Kept ruling" in await define_terrain(fake, one)  # in its answers again


async def test_after_the_grace_period_the_servers_data_is_gone(world) -> None:
    fake, bot, clock, one, two = world["fake"], world["bot"], world["clock"], world["one"], world["two"]
    clock.now = T0 + 100 * DAY
    await fake.remove_bot(one)
    await eventually(lambda: _has_mark(bot, one), "the removal to be marked")
    clock.now = T0 + 130 * DAY + dt.timedelta(minutes=1)
    purged = await bot.rulings.purge_expired()
    assert list(purged) == [scope_of(one.id)] and purged[scope_of(one.id)].rulings == 1
    assert await bot.rulings.purge_expired() == {}  # a second run (or another process) finds nothing
    assert await retention.export_scope(bot.rulings.db, scope_of(one.id)) == {
        "scope": scope_of(one.id), "settings": None, "rulings": [], "feedback": []
    }  # fmt: skip
    await fake.invite_bot(one)  # too late: a fresh start
    await fake.wait_for(lambda: bot.get_guild(one.id) is not None, 5, "the guild to be back")
    assert "This server has no rulings" in await listed(fake, one)
    assert "Kept ruling" not in await define_terrain(fake, one)
    assert "Outage ruling" in await listed(fake, two)  # the other server is untouched


def _button(rec: InteractionRecord, label: str) -> str:
    return next(c["custom_id"] for c in FakeDiscord.components_of(rec.message) if c.get("label") == label)


async def test_delete_all_asks_first_then_says_what_it_deleted(world) -> None:
    fake, bot, two = world["fake"], world["bot"], world["two"]
    await add_ruling(fake, two, "Second ruling")
    refused = await fake.invoke_command("ruling delete-all", {}, user=fake.member, guild=two)
    assert "Only members with the Manage Server permission" in text_of(refused.message)

    asked = await fake.invoke_command("ruling delete-all", {}, user=fake.admin, guild=two)
    assert asked.ephemeral and "2 rulings (active and retired), 2 versions in their history" in text_of(asked.message)
    cancelled = await fake.click(asked.message, _button(asked, "Cancel"), user=fake.admin)
    assert text_of(cancelled.message) == "Cancelled: nothing was deleted."
    assert "Second ruling" in await listed(fake, two)

    asked = await fake.invoke_command("ruling delete-all", {}, user=fake.admin, guild=two)
    done = await fake.click(asked.message, _button(asked, "Delete everything"), user=fake.admin)
    assert text_of(done.message).startswith("Deleted 2 rulings (active and retired), 2 versions in their history")
    assert FakeDiscord.components_of(done.message) == []  # the buttons are gone
    assert "This server has no rulings" in await listed(fake, two)
    assert "Second ruling" not in await define_terrain(fake, two)
    again = await fake.invoke_command("ruling delete-all", {}, user=fake.admin, guild=two)
    assert "nothing stored" in text_of(again.message)
    assert bot.rulings.available


async def test_an_expired_confirmation_deletes_nothing(world) -> None:
    fake, two = world["fake"], world["two"]
    await add_ruling(fake, two, "Third ruling")
    asked = await fake.invoke_command("ruling delete-all", {}, user=fake.admin, guild=two)
    custom_id = _button(asked, "Delete everything")
    stale = custom_id.rsplit(":", 1)[0] + f":{int(time.time()) - 1}"  # as if clicked after the 5 minutes
    for component in FakeDiscord.components_of(asked.message):
        if component.get("custom_id") == custom_id:
            component["custom_id"] = stale
    clicked = await fake.click(asked.message, stale, user=fake.admin)
    assert "expired and nothing was deleted" in text_of(clicked.message)
    assert "Third ruling" in await listed(fake, two)


async def _has_mark(bot: JudgeBot, guild: FakeGuild) -> bool:
    return scope_of(guild.id) in await marks(bot)


async def _no_mark(bot: JudgeBot, guild: FakeGuild) -> bool:
    return scope_of(guild.id) not in await marks(bot)


async def test_a_server_that_removed_the_bot_while_it_was_not_running_is_marked_at_ready(world) -> None:
    from fakediscord.models import snowflake_for_shard

    from bot.rulings.repository import Author, Draft

    fake, bot, two = world["fake"], world["bot"], world["two"]
    gone = scope_of(snowflake_for_shard(0, 2))  # a server on this process's shard that READY did not list
    await bot.rulings.add(gone, Draft("Left while we slept", "Text."), Author("5", "Eve"))
    await fake.guild_outage(two)  # in an outage: listed (as unavailable), so not gone
    await fake.wait_for(lambda: bot.get_guild(two.id).unavailable, 5, "the guild to be unavailable")
    cog = bot.get_cog("Rulings")
    cog._reconciled = False  # as at the next start
    await cog.on_ready()
    assert set(await marks(bot)) == {gone}
    await fake.guild_recovers(two)
    await fake.wait_for(lambda: not bot.get_guild(two.id).unavailable, 5, "the guild to be back")


async def test_about_points_to_the_privacy_statement(world) -> None:
    fake = world["fake"]
    about = await fake.invoke_command("about", user=fake.member)
    fields = {f["name"]: f["value"] for f in about.message["embeds"][0].get("fields", [])}
    assert "`docs/privacy.md`" in fields["Privacy"] and "how to have it deleted" in fields["Privacy"]


async def test_only_servers_of_this_processs_shards_count_as_gone() -> None:
    from bot.discord_bot.cogs.rulings import absent_scopes

    on_0, on_1 = 0 << 22 | 4, 1 << 22 | 5  # (id >> 22) % 2 is the shard
    stored = [f"guild:{on_0}", f"guild:{on_1}", "guild:x", "other:1"]
    assert absent_scopes(stored, set(), {0}, 2) == [f"guild:{on_0}"]
    assert absent_scopes(stored, {on_0}, {0, 1}, 2) == [f"guild:{on_1}"]
