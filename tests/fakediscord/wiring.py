"""Point discord.py at a fake Discord for the duration of a block, and restore it afterwards."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import discord
import discord.gateway
import discord.http
import discord.webhook.async_
import yarl

from .models import shard_of

if TYPE_CHECKING:
    from .server import FakeDiscord


@contextlib.contextmanager
def preserved_discord_urls() -> Iterator[None]:
    """Restore discord.py's API base and default gateway afterwards (code under test may change them)."""
    saved = (
        discord.http.Route.BASE,
        discord.webhook.async_.Route.BASE,
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY,
    )
    try:
        yield
    finally:
        (
            discord.http.Route.BASE,
            discord.webhook.async_.Route.BASE,
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY,
        ) = saved


@contextlib.contextmanager
def point_discord_at(api_base: str, gateway_url: str | None = None) -> Iterator[None]:
    """Send REST, interaction callbacks, webhooks and (optionally) the default gateway to ``api_base``.

    A non-sharded discord.py client connects to ``DiscordWebSocket.DEFAULT_GATEWAY`` without asking
    ``/gateway/bot``, so tests of a plain ``commands.Bot`` pass ``gateway_url`` too.
    """
    with preserved_discord_urls():
        discord.http.Route.BASE = api_base
        discord.webhook.async_.Route.BASE = api_base
        if gateway_url is not None:
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)
        yield


@contextlib.asynccontextmanager
async def bot_running(
    fake: FakeDiscord, bot: discord.Client, token: str = "fake-token", timeout: float = 10.0
) -> AsyncIterator[discord.Client]:
    """Run ``bot.start(token)`` against ``fake`` until the block ends; fail fast if the bot dies.

    Waits for every shard's gateway session and for the guilds' GUILD_CREATE to be processed (not
    for ``on_ready``, which discord.py delays by ``guild_ready_timeout``).
    """
    with point_discord_at(fake.api_base, fake.gateway_url):
        task = asyncio.create_task(bot.start(token))

        def connected() -> bool:
            if task.done():
                return True
            count = bot.shard_count or 1
            wanted = set(getattr(bot, "shard_ids", None) or range(count))
            live = {s.shard_id for s in fake.live_sessions()}
            guilds = [g for g in fake.guilds if shard_of(g.id, count) in wanted]
            return wanted <= live and all(bot.get_guild(g.id) is not None for g in guilds)

        try:
            await fake.wait_for(connected, timeout, "the bot to connect")
            if task.done():
                task.result()  # re-raise why the bot stopped
                raise RuntimeError("bot.start() returned before connecting")
            yield bot
        finally:
            await bot.close()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 5)
