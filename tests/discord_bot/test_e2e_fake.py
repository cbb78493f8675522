"""The fake Discord itself, proven with a tiny discord.py bot written here (independent of bot/).

If these pass, a failure in test_e2e_bot.py is the judge bot's fault, not the fake's.
"""

from __future__ import annotations

import asyncio
import re
import zlib
from collections.abc import AsyncIterator

import aiohttp
import discord
import pytest
import pytest_asyncio
from discord import app_commands
from discord.ext import commands
from fakediscord import FakeDiscord, bot_running
from fakediscord import validation as v

pytestmark = pytest.mark.asyncio(loop_scope="module")


class AgainButton(discord.ui.DynamicItem[discord.ui.Button], template=r"demo:again:(?P<word>\w+)"):
    """A restart-proof button: its state (the word) lives in the custom id."""

    def __init__(self, word: str) -> None:
        word = re.sub(r"\W", "", word) or "x"
        super().__init__(discord.ui.Button(label="Again", custom_id=f"demo:again:{word}"))
        self.word = word

    @classmethod
    async def from_custom_id(cls, interaction, item, match):  # type: ignore[override]
        return cls(match["word"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.edit_message(content=f"again: {self.word}")


class DemoCog(commands.Cog):
    """One of each interaction kind the judge bot uses."""

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot
        self.ctx_menu = app_commands.ContextMenu(name="Shout", callback=self.shout)
        bot.tree.add_command(self.ctx_menu)

    @app_commands.command(description="Echo a word back")
    @app_commands.describe(word="The word to echo")
    async def echo(self, interaction: discord.Interaction, word: str, private: bool = False) -> None:
        view = discord.ui.View(timeout=None)
        view.add_item(AgainButton(word))
        await interaction.response.send_message(
            f"echo: {discord.utils.escape_mentions(word)}",
            view=view,
            ephemeral=private,
            allowed_mentions=discord.AllowedMentions.none(),
        )

    @echo.autocomplete("word")
    async def echo_word(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        words = [f"{current}{i}" for i in range(40)]  # more than Discord allows: the bot must trim
        return [app_commands.Choice(name=w, value=w) for w in words[:25]]

    @app_commands.command(description="Answer after thinking")
    async def slow(self, interaction: discord.Interaction, seconds: float) -> None:
        await asyncio.sleep(seconds)
        await interaction.response.send_message("too late?")

    @app_commands.command(description="Defer then answer")
    async def deferred(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True, ephemeral=True)
        await interaction.followup.send("done thinking")

    @app_commands.command(description="Break the embed limit")
    async def huge(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(embed=discord.Embed(title="t", description="x" * 4097))

    async def shout(self, interaction: discord.Interaction, message: discord.Message) -> None:
        await interaction.response.send_message(message.content.upper(), ephemeral=True)


class DemoBot(commands.AutoShardedBot):
    def __init__(self) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned, intents=discord.Intents.default(), guild_ready_timeout=0.1
        )

    async def setup_hook(self) -> None:
        await self.add_cog(DemoCog(self))
        self.add_dynamic_items(AgainButton)
        await self.tree.sync()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """No 5 s pause between shard IDENTIFYs: the fake has no identify rate limit."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def demo() -> AsyncIterator[tuple[FakeDiscord, commands.Bot]]:
    async with FakeDiscord() as fake, bot_running(fake, DemoBot()) as bot:
        yield fake, bot


async def test_login_sync_and_ready(demo) -> None:
    fake, bot = demo
    assert bot.user is not None and bot.user.id == fake.app_id
    assert bot.application_id == fake.app_id
    assert [g.id for g in bot.guilds] == [fake.guild.id]
    assert sorted((c["type"], c["name"]) for c in fake.registered_commands()) == [
        (1, "deferred"),
        (1, "echo"),
        (1, "huge"),
        (1, "slow"),
        (3, "Shout"),
    ]
    assert len(fake.sync_calls) == 1
    query = fake.gateway_queries[0]
    assert (query["v"], query["encoding"], query["compress"]) == ("10", "json", "zlib-stream")
    assert fake.identifies[0]["shard"] == [0, 1]
    assert fake.heartbeats >= 1  # discord.py beats once right after HELLO, and got its ACK
    assert fake.unknown_calls == []


async def test_command_button_and_mention_safety(demo) -> None:
    fake, _ = demo
    rec = await fake.invoke_command("echo", {"word": "@everyone <@123>"})
    assert rec.response_type == 4
    msg = rec.message
    assert msg["content"] == "echo: @\u200beveryone <@123>"
    assert fake.allowed_mentions(msg) == {"parse": []}
    assert fake.pings(msg) == {"everyone": False, "users": [], "roles": []}
    [button] = fake.components_of(msg)
    assert button["label"] == "Again"
    click = await fake.click(msg, button["custom_id"])
    assert click.response_type == 7
    assert click.message["id"] == msg["id"]
    assert button["custom_id"] == "demo:again:everyone123"
    assert fake.messages[int(msg["id"])]["content"] == "again: everyone123"


async def test_pings_are_computed_like_discord() -> None:
    assert v.mentions_that_ping("hi @everyone <@5>", None) == {"everyone": True, "users": [5], "roles": []}
    assert v.mentions_that_ping("hi @everyone <@5>", {"parse": ["users"]}) == {
        "everyone": False,
        "users": [5],
        "roles": [],
    }


async def test_autocomplete_choices(demo) -> None:
    fake, _ = demo
    rec = await fake.autocomplete("echo", "word", "ta")
    assert rec.response_type == 8
    assert len(rec.choices) == 25
    assert rec.choices[0] == {"name": "ta0", "value": "ta0"}


async def test_context_menu_gets_resolved_message(demo) -> None:
    fake, _ = demo
    target = fake.user_message("is a terrain an enemy card")
    rec = await fake.context_menu("Shout", target)
    assert rec.message["content"] == "IS A TERRAIN AN ENEMY CARD"
    assert rec.ephemeral


async def test_deferred_then_followup_becomes_original(demo) -> None:
    fake, _ = demo
    rec = await fake.invoke_command("deferred")
    assert rec.response_type == 5
    assert rec.message["content"] == "done thinking"
    assert rec.ephemeral
    assert rec.followups == []


async def test_limit_violation_is_rejected_like_discord(demo) -> None:
    fake, _ = demo
    rec = await fake.invoke_command("huge", settle=False)
    await rec.wait_until(lambda r: bool(r.rejected))
    err = rec.rejected[0]
    assert err.status == 400
    assert err.response["code"] == 50035
    assert err.response["errors"]["data"]["embeds"]["0"]["description"]["_errors"][0]["code"] == (
        "BASE_TYPE_MAX_LENGTH"
    )
    assert rec.callbacks == []


async def test_late_first_response_is_unknown_interaction(demo) -> None:
    fake, _ = demo
    fake.response_deadline = 0.1
    try:
        rec = await fake.invoke_command("slow", {"seconds": 0.3}, settle=False)
        await rec.wait_until(lambda r: bool(r.rejected))
    finally:
        fake.response_deadline = 3.0
    assert rec.rejected[0].status == 404
    assert rec.rejected[0].response == {"message": "Unknown interaction", "code": 10062}


async def test_second_acknowledgement_is_rejected(demo) -> None:
    fake, _ = demo
    rec = await fake.invoke_command("echo", {"word": "once"})
    url = f"{fake.api_base}/interactions/{rec.id}/{rec.token}/callback"
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json={"type": 4, "data": {"content": "twice"}}) as resp,
    ):
        assert resp.status == 400
        assert (await resp.json())["code"] == 40060


async def test_rate_limited_callback_is_retried(demo) -> None:
    fake, _ = demo
    fake.inject_rate_limit(1, "callback", retry_after=0.2)
    rec = await fake.invoke_command("echo", {"word": "patience"})
    assert rec.message["content"] == "echo: patience"
    statuses = [c.status for c in fake.calls if c.route == "callback" and f"/{rec.id}/" in c.path]
    assert statuses == [429, 200]
    assert rec.latency is not None and rec.latency >= 0.2


@pytest.mark.parametrize("mode", ["reconnect", "close"])
async def test_reconnect_resumes_and_replays(demo, mode) -> None:
    fake, _ = demo
    before = sum(s.resumes for s in fake.sessions.values())
    identifies = len(fake.identifies)
    await fake.force_reconnect(mode)
    # Dispatched while the bot is away: must arrive through RESUME's replay.
    rec = await fake.invoke_command("echo", {"word": "still"}, timeout=8)
    assert rec.message["content"] == "echo: still"
    await fake.wait_for_resume(before + 1)
    assert len(fake.identifies) == identifies
    [event] = [e for s in fake.sessions.values() for e in s.events if (e["d"] or {}).get("id") == str(rec.id)]
    assert fake.resume_requests[-1]["seq"] < event["s"]  # the bot had not seen it: it came by replay
    assert fake.resume_requests[-1]["path"] == "/resume-gateway"


@pytest.mark.parametrize("how", [{"mode": "invalidate"}, {"mode": "close", "expire": True}])
async def test_lost_session_makes_the_bot_identify_again(demo, how) -> None:
    fake, _ = demo
    identifies = len(fake.identifies)
    await fake.force_reconnect(**how)
    await fake.wait_for(lambda: len(fake.identifies) > identifies, 5, "a new IDENTIFY")
    await fake.wait_until_connected()
    rec = await fake.invoke_command("echo", {"word": "again"})
    assert rec.message["content"] == "echo: again"


async def test_unknown_route_recorded(demo) -> None:
    fake, bot = demo
    with pytest.raises(discord.NotFound):
        await bot.http.request(discord.http.Route("GET", "/nothing/here"))
    assert fake.unknown_calls[-1].path == "/nothing/here"
    fake.unknown_calls.clear()


async def test_zlib_stream_frames_end_with_sync_flush() -> None:
    url = "?v=10&encoding=json&compress=zlib-stream"
    async with (
        FakeDiscord() as fake,
        aiohttp.ClientSession() as session,
        session.ws_connect(fake.gateway_url + url) as ws,
    ):
        frame = await ws.receive_bytes()
        assert frame.endswith(b"\x00\x00\xff\xff")
        hello = zlib.decompressobj().decompress(frame)
        assert b'"heartbeat_interval":41250' in hello


async def test_sharded_bot_gets_interactions_on_the_right_shard() -> None:
    async with FakeDiscord(shard_count=2) as fake, bot_running(fake, DemoBot()) as bot:
        assert bot.shard_count == 2
        assert sorted(i["shard"][0] for i in fake.identifies) == [0, 1]
        second = fake.guilds[1]
        rec = await fake.invoke_command("echo", {"word": "two"}, guild=second)
        assert rec.message["content"] == "echo: two"
        assert bot.get_guild(second.id).shard_id == 1
