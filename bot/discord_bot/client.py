"""The Discord bot: ``JudgeBot`` (an AutoShardedBot) and its startup.

setup_hook opens the engine in a thread, loads one extension per feature, registers the
dynamic buttons and syncs commands only when their definitions changed. ``apply_api_base``
points discord.py at another Discord-compatible base (an HTTP proxy, or the tests' fake).

``close`` stops like a service: the gateway is closed first (code 1000, so Discord sends no
more interactions here), the answers already in flight are finished (up to SHUTDOWN_GRACE
seconds), then the HTTP session and the health endpoint are closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import discord
import yarl
from discord import app_commands
from discord.ext import commands

from bot.app.judge import Judge, UserError
from bot.app.settings import Settings
from bot.app.startup import open_engine
from bot.discord_bot import heap
from bot.discord_bot.admission import EXPIRE_AT, Expired, Lookups, Responder, UserCooldowns, age, slow_down
from bot.discord_bot.gateway_guard import guard_frames, guard_parsers
from bot.discord_bot.health import HealthServer
from bot.discord_bot.intake import Intake
from bot.discord_bot.logs import log_answer, log_dropped
from bot.discord_bot.metrics import Metrics
from bot.discord_bot.replies import DYNAMIC_ITEMS, send_error

if TYPE_CHECKING:
    from bot.discord_bot.digest_posts import DigestPoster
    from bot.rulings.service import RulingsService
    from index.engine import Engine

log = logging.getLogger("bot")


def scope_of(guild_id: int) -> str:
    """The rulings scope of a Discord server (an opaque string to the layers below)."""
    return f"guild:{guild_id}"

EXTENSIONS = (
    "bot.discord_bot.cogs.define",
    "bot.discord_bot.cogs.ask",
    "bot.discord_bot.cogs.rule",
    "bot.discord_bot.cogs.changes",
    "bot.discord_bot.cogs.banned",
    "bot.discord_bot.cogs.history",
    "bot.discord_bot.cogs.meta",
    "bot.discord_bot.cogs.admin",
    "bot.discord_bot.cogs.lookup_menu",
    "bot.discord_bot.cogs.rulings",
    "bot.discord_bot.cogs.feedback",  # after rulings: /ruling feedback joins its group
)
COMMAND_HASH_FILE = "commands.sha256"
# Tasks discord.py starts for each received interaction (commands and autocomplete; buttons):
# a stop waits for these to finish.
INTERACTION_TASKS = ("CommandTree-invoker", "discord-ui-dynamic-item-", "discord-ui-view-dispatch-")


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


class _QuietExpired(logging.Filter):
    """discord.py logs any exception from an autocomplete callback with a traceback; an autocomplete
    dropped because its interaction expired (``Expired``) is expected under load, not an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], Expired))


logging.getLogger("discord.app_commands.tree").addFilter(_QuietExpired())


def _command_name(interaction: discord.Interaction) -> str:
    if interaction.command is not None:
        return interaction.command.qualified_name
    return str((interaction.data or {}).get("name") or "?")


class JudgeTree(app_commands.CommandTree):
    """Drops interactions too old to answer, and turns every error into a short ephemeral note
    (traceback to the log) with the interaction's one log line."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        interaction.extras["received"] = time.perf_counter()
        if age(interaction) >= EXPIRE_AT:  # no response could reach Discord in time: send none
            name = _command_name(interaction)
            if interaction.type is discord.InteractionType.autocomplete:
                log_answer(interaction, f"{name}:autocomplete", "expired", level=logging.DEBUG)
            else:
                log_answer(interaction, name, "expired")
            return False
        return True

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError, /) -> None:
        name = _command_name(interaction)
        original = getattr(error, "original", error)
        if isinstance(error, app_commands.CommandOnCooldown):
            outcome, message = "cooldown", slow_down(error.retry_after)
        elif isinstance(error, app_commands.CheckFailure):
            outcome, message = "not_allowed", str(error) or "You can't use this command here."
        elif isinstance(original, UserError):
            outcome, message = "user_error", str(original)
        elif isinstance(original, Expired):
            log_answer(interaction, name, "expired")
            return
        else:
            log.error("command %s failed", name, exc_info=original)
            outcome, message = "error", "Sorry, something went wrong answering that. The error has been logged."
        await send_error(interaction, message)
        log_answer(interaction, name, outcome)


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
        guard_parsers(self._connection)  # a malformed gateway event is skipped, never fatal
        guard_frames()  # so is a frame that cannot be read (a corrupt zlib frame: the socket is replaced)
        # The Judge holds the one engine every command uses; it is opened once, in setup_hook.
        self._judge: Judge | None = Judge.from_settings(engine, settings) if engine is not None else None
        self.synced: bool | None = None  # whether the last start pushed commands to Discord
        self.rulings: RulingsService | None = None  # each server's own rulings (opened in setup_hook)
        self.digests: DigestPoster | None = None  # digests of source changes for subscribed channels (setup_hook)
        self.started = time.monotonic()
        self.lookups = Lookups(settings.lookup_workers, settings.max_wait)
        self.responder = Responder()
        self.lookups.hold = self.backlogged  # a burst: acknowledge everyone first, then look up
        self.button_cooldowns = UserCooldowns.from_settings(settings)
        self.command_cooldowns = UserCooldowns.from_settings(settings)  # keyed by command and user
        self.metrics = Metrics()
        self.metrics.watch(self)
        self.full_passes = heap.FullPasses()  # the collector's full passes wait while a burst is acknowledged
        # Interactions read from the gateway start newest first; expired ones are dropped unparsed.
        self.intake = Intake(
            lambda data: log_dropped(data, self.metrics),
            room=lambda: self.responder.first_pending < self.responder.senders,
            pause=self._pause_gateway,
            backlog=lambda working: self.full_passes.hold() if working else None,
        )
        self.intake.install(self._connection)
        self.health: HealthServer | None = None
        self.stopping = False  # set when close() begins: the health endpoint then says so
        # Shards whose gateway session has had READY or RESUMED since the socket last closed: an open socket
        # is not yet a session (HELLO comes before IDENTIFY is answered), and health says so.
        self.sessions_ready: set[int] = set()
        self._stop_task: asyncio.Task[None] | None = None

    def _pause_gateway(self, paused: bool) -> int:
        """Stop or resume reading the shards' gateway sockets (asyncio's ``pause_reading``): discord.py reads
        every buffered event before giving the event loop back, so without this a burst's reading took the
        time its first responses needed. Reached through discord.py's and aiohttp's attributes (no public
        API has the transport); where they are missing, reading simply goes on. Returns the sockets changed."""
        changed = 0
        for info in self.shards.values():
            socket = getattr(getattr(getattr(info, "_parent", None), "ws", None), "socket", None)
            transport = getattr(getattr(socket, "_writer", None), "transport", None)
            if transport is None or transport.is_closing():
                continue
            if paused:
                transport.pause_reading()
            else:
                transport.resume_reading()
            changed += 1
        return changed

    def backlogged(self) -> bool:
        """A burst is being acknowledged: interactions read but not started, or many first responses queued."""
        return self.intake.waiting > 0 or self.responder.backlogged()

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
        if self.settings.health_port is not None:  # first, so a slow start reports "starting"
            self.health = HealthServer(self, self.settings.health_host, self.settings.health_port)
            await self.health.start()
        if self._judge is None:
            started = time.perf_counter()
            engine = await asyncio.to_thread(open_engine, self.settings)
            log.info("engine opened in %.2f s", time.perf_counter() - started)
            self._judge = Judge.from_settings(engine, self.settings)
        for error in self.judge.engine.corpus.errors:  # e.g. a house-rulings file with no ruling in it
            log.warning("source not loaded: %s", error)
        if self.settings.api_base:
            url = await discover_gateway(self.http)
            log.info("using API base %s, gateway %s", self.settings.api_base, url)
        await self.open_rulings()
        for extension in EXTENSIONS:
            await self.load_extension(extension)
        self.add_dynamic_items(*DYNAMIC_ITEMS)
        from bot.discord_bot.digest_posts import DigestPage, DigestPoster

        self.add_dynamic_items(DigestPage)
        self.digests = DigestPoster(self)
        self.digests.start()  # the sources served now against the last digest's (in the background)
        self.synced = await self.sync_commands()
        heap.settle()  # what start-up made lives as long as the process: out of the collector's full passes

    async def open_rulings(self) -> None:
        """The rulings database (DATABASE_URL, else SQLite in the state folder); a database that is down
        does not stop the bot: it answers from the rules and keeps trying."""
        from bot.rulings.db import resolve_url
        from bot.rulings.service import RulingsService

        url = resolve_url(self.settings.database_url, self.state_dir())
        self.rulings = RulingsService(
            url,
            lambda: self.judge.engine,
            poll_seconds=self.settings.rulings_poll_seconds,
            on_remote_reload=self._remote_reload,
            grace=dt.timedelta(days=self.settings.data_grace_days),
            db_timeout=self.settings.rulings_db_timeout,
        )
        await self.rulings.start()

    async def reload_rules(self) -> dict[str, Any]:
        """Re-read the rule documents and relink every server's rulings to the new entries."""
        stats = await asyncio.to_thread(self.judge.engine.reload)
        if self.rulings is not None:
            await self.rulings.relink()
        if self.digests is not None:  # subscribed channels get a digest when the sources changed
            self.digests.soon("reload")
        heap.settle()  # the old build's objects back to the collector, the new ones out of its passes
        return stats

    async def _remote_reload(self) -> None:
        """Another process reloaded the rule documents: reload here too, keeping this build if it is refused."""
        from index.build.rebuild import ReloadFailed, ReloadRefused

        try:
            await self.reload_rules()
        except (ReloadRefused, ReloadFailed) as exc:
            log.warning("reload asked by another process not applied here; still serving the old build: %s", exc)

    async def judge_for(self, interaction: discord.Interaction) -> Judge:
        """The commands as the interaction's server sees them: with its rulings (none in direct messages)."""
        if self.rulings is None or interaction.guild_id is None:
            return self.judge
        overlay, notice = await self.rulings.overlay_for(scope_of(interaction.guild_id))
        return self.judge.scoped(overlay, notice)

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
        """One log line per answered command: name, outcome, timings, and the entries it answered with."""
        log_answer(interaction, command.qualified_name, interaction.extras.get("outcome", "ok"))

    # -- stopping ---------------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop like a service: gateway first (code 1000), then the answers in flight, then the rest.

        Safe to call more than once and from several places (a signal, ``async with``, discord.py).
        """
        if self._stop_task is None:
            self._stop_task = asyncio.create_task(self._stop())
        await asyncio.shield(self._stop_task)

    async def _stop(self) -> None:
        self.stopping = True
        self.full_passes.release()  # the collector as it was (the process may go on: tests, an embedding host)
        for shard in list(self.shards.values()):
            with contextlib.suppress(Exception):
                await shard.disconnect()  # closes with 1000 and stops that shard's reconnect loop
        await self.drain(self.settings.shutdown_grace)
        await self.responder.close()
        if self.digests is not None:
            await self.digests.close()
        if self.rulings is not None:  # after the answers in flight, which may read this server's rulings
            await self.rulings.close()
        await super().close()
        self.lookups.shutdown()
        if self.health is not None:
            await self.health.stop()

    def interactions_in_flight(self) -> list[asyncio.Task[Any]]:
        """The tasks discord.py runs for interactions received and not yet finished."""
        current = asyncio.current_task()
        return [
            t
            for t in asyncio.all_tasks()
            if t is not current and not t.done() and t.get_name().startswith(INTERACTION_TASKS)
        ]

    async def drain(self, grace: float) -> bool:
        """Wait up to ``grace`` seconds for the interactions in flight; True when all finished."""
        await asyncio.sleep(0)  # let events read just before the gateway closed start their tasks
        await self.intake.wait_idle(grace)  # those still waiting in the intake start (or expire) first
        pending = self.interactions_in_flight()
        if not pending:
            return True
        log.info("stopping: finishing %d answer(s) in flight", len(pending))
        _done, left = await asyncio.wait(pending, timeout=grace)
        if left:
            log.warning("stopping: %d answer(s) still running after %.1f s; not waiting longer", len(left), grace)
        return not left

    async def on_shard_connect(self, shard_id: int) -> None:
        """discord.py dispatches this on a shard's READY."""
        self.sessions_ready.add(shard_id)

    async def on_shard_resumed(self, shard_id: int) -> None:
        self.sessions_ready.add(shard_id)

    async def on_shard_disconnect(self, shard_id: int) -> None:
        self.sessions_ready.discard(shard_id)

    async def on_ready(self) -> None:
        log.info("ready as %s in %d guilds (shards %s)", self.user, len(self.guilds), self.shard_ids or "all")
