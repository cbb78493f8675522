"""The Discord bot: ``JudgeBot`` (an AutoShardedBot) and its startup.

setup_hook opens the engine in a thread, loads one extension per feature, registers the
dynamic buttons and syncs commands only when their definitions changed. ``apply_api_base``
points discord.py at another Discord-compatible base (an HTTP proxy, or the tests' fake).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import discord
import yarl
from discord import app_commands
from discord.ext import commands

from .service import Judge, UserError
from .settings import Settings
from .startup import open_engine
from .views import DYNAMIC_ITEMS, send_error

if TYPE_CHECKING:
    from index.engine import Engine

log = logging.getLogger("bot")

EXTENSIONS = (
    "bot.cogs.define",
    "bot.cogs.ask",
    "bot.cogs.rule",
    "bot.cogs.changes",
    "bot.cogs.banned",
    "bot.cogs.meta",
    "bot.cogs.admin",
    "bot.cogs.lookup_menu",
)
COMMAND_HASH_FILE = "commands.sha256"


def apply_api_base(base: str) -> None:
    """Send every REST call (including interaction callbacks and followups) to ``base``.

    discord.py builds URLs from ``Route.BASE``; the webhook module (interaction responses,
    followups) uses the Route it imported, so both names are set. The gateway URL is then
    discovered from ``GET {base}/gateway/bot`` (see ``discover_gateway``).
    """
    import discord.http
    import discord.webhook.async_

    base = base.rstrip("/")
    discord.http.Route.BASE = base
    discord.webhook.async_.Route.BASE = base  # type: ignore[attr-defined]


async def discover_gateway(http: discord.http.HTTPClient) -> str:
    """Ask the configured base for its gateway and make it discord.py's default.

    discord.py only asks ``/gateway/bot`` when it picks the shard count itself; with
    SHARD_COUNT set, or after an invalidated session, it falls back to DEFAULT_GATEWAY.
    """
    from discord.gateway import DiscordWebSocket

    _shards, url, _limits = await http.get_bot_gateway()
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
    return url


class JudgeTree(app_commands.CommandTree):
    """Times every command and turns every error into a short ephemeral note (traceback to the log)."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        interaction.extras["started"] = time.perf_counter()
        return True

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError, /) -> None:
        name = interaction.command.qualified_name if interaction.command else "?"
        if isinstance(error, app_commands.CommandOnCooldown):
            message = f"Slow down a little — try again in {math.ceil(error.retry_after)} s."
        elif isinstance(error, app_commands.CheckFailure):
            message = str(error) or "You can't use this command here."
        elif isinstance(error, app_commands.CommandInvokeError) and isinstance(error.original, UserError):
            message = str(error.original)
        else:
            original = getattr(error, "original", error)
            log.error("command %s failed", name, exc_info=original)
            message = "Sorry, something went wrong answering that. The error has been logged."
        log.info("command=%s refused_or_failed=%s", name, type(error).__name__)
        await send_error(interaction, message)


class JudgeBot(commands.AutoShardedBot):
    """The rules judge bot. ``engine`` may be injected (tests); otherwise it is opened at startup."""

    def __init__(self, settings: Settings, engine: Engine | None = None, **options: Any) -> None:
        if settings.api_base:
            apply_api_base(settings.api_base)
        # A text-only bot: the "voice will NOT be supported" warnings are noise in its log.
        discord.VoiceClient.warn_nacl = False
        discord.VoiceClient.warn_dave = False  # type: ignore[attr-defined]
        intents = discord.Intents.default()
        intents.message_content = False  # privileged and unneeded: everything is an interaction
        intents.members = False
        intents.presences = False
        super().__init__(
            command_prefix=commands.when_mentioned,
            help_command=None,
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            tree_cls=JudgeTree,
            shard_count=settings.shard_count,
            shard_ids=list(settings.shard_ids) if settings.shard_ids else None,
            # OWNER_IDS are checked in addition to the application's owner (see cogs.admin), so they are
            # not given to discord.py, whose owner_ids would replace the application owner instead.
            **options,
        )
        self.settings = settings
        # The Judge holds the one engine every command uses; it is opened once, in setup_hook.
        self._judge: Judge | None = Judge(engine, settings.rulebook_url) if engine is not None else None
        self.synced: bool | None = None  # whether the last start pushed commands to Discord

    @property
    def judge(self) -> Judge:
        if self._judge is None:
            raise RuntimeError("the engine is not open yet")
        return self._judge

    @property
    def engine(self) -> Engine | None:
        """The open engine (``None`` before setup_hook); ``/reload`` rebuilds it in place."""
        return self._judge.engine if self._judge is not None else None

    async def setup_hook(self) -> None:
        if self._judge is None:
            started = time.perf_counter()
            engine = await asyncio.to_thread(open_engine, self.settings)
            log.info("engine opened in %.2f s", time.perf_counter() - started)
            self._judge = Judge(engine, self.settings.rulebook_url)
        for error in self.judge.engine.corpus.errors:  # e.g. a house-rulings file with no ruling in it
            log.warning("source not loaded: %s", error)
        if self.settings.api_base:
            url = await discover_gateway(self.http)
            log.info("using API base %s, gateway %s", self.settings.api_base, url)
        for extension in EXTENSIONS:
            await self.load_extension(extension)
        self.add_dynamic_items(*DYNAMIC_ITEMS)
        self.synced = await self.sync_commands()

    def state_dir(self) -> Path:
        """Where the synced-commands hash is kept: L5R_STATE_DIR, else beside the index folder."""
        if self.settings.state_dir is not None:
            return self.settings.state_dir
        index_dir = self.settings.index_dir
        if index_dir is None and self.engine is not None:
            index_dir = self.engine.stats().get("index_dir")
        return Path(index_dir or "var/index").parent / "bot-state"

    def command_digest(self) -> str:
        """A hash of what Discord would be told: command definitions, target guilds, API base."""
        payload = {
            "commands": [c.to_dict(self.tree) for c in self.tree.get_commands()],
            "guilds": sorted(self.settings.guild_ids),
            "application": self.application_id,
            "api_base": self.settings.api_base,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    async def sync_commands(self, force: bool = False) -> bool:
        """Push commands only when their definitions changed (Discord rate-limits syncing)."""
        digest = self.command_digest()
        path = self.state_dir() / COMMAND_HASH_FILE
        try:
            previous = path.read_text().strip()
        except OSError:
            previous = None
        if previous == digest and not force:
            log.info("application commands unchanged; not syncing")
            return False
        if self.settings.guild_ids:
            for guild_id in self.settings.guild_ids:
                guild = discord.Object(guild_id)
                self.tree.copy_global_to(guild=guild)
                await self.tree.sync(guild=guild)
            log.info("synced %d commands to guilds %s", len(self.tree.get_commands()), self.settings.guild_ids)
        else:
            await self.tree.sync()
            log.info("synced %d commands globally", len(self.tree.get_commands()))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(digest + "\n")
        except OSError as exc:
            log.warning("could not record the command hash in %s: %s", path, exc)
        return True

    async def on_app_command_completion(
        self, interaction: discord.Interaction, command: app_commands.Command | app_commands.ContextMenu
    ) -> None:
        """One log line per answered command: name, latency, and the entries it answered with."""
        started = interaction.extras.get("started")
        ms = (time.perf_counter() - started) * 1000 if started else float("nan")
        log.info(
            "command=%s latency_ms=%.1f hits=%s user=%s guild=%s",
            command.qualified_name,
            ms,
            ",".join(interaction.extras.get("hits", [])) or "-",
            interaction.user.id,
            interaction.guild_id,
        )

    async def on_ready(self) -> None:
        log.info("ready as %s in %d guilds (shards %s)", self.user, len(self.guilds), self.shard_ids or "all")
