"""/reload: rebuild the index from the sources and swap it in (owner or Manage Server only).

The parse and the build run in a child process (``Engine.reload``), so the event loop keeps serving
everyone else meanwhile. A reload that would lose a source file or most entries is refused and the
rules being served stay; the reply (and the log) says why. The time reported is the whole reload,
from the command to the swap, not just the index build.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time

import discord
from discord import app_commands
from discord.ext import commands

from bot.app.renderers.discord_markdown import escape
from index.engine import ReloadFailed, ReloadRefused

log = logging.getLogger("bot.admin")


class NotAllowed(app_commands.CheckFailure):
    """Shown to the user as is (ephemeral)."""


async def owner_or_manager(interaction: discord.Interaction) -> bool:
    bot: commands.Bot = interaction.client  # type: ignore[assignment]
    if interaction.user.id in bot.settings.owner_ids:  # type: ignore[attr-defined]  (OWNER_IDS: extra owners)
        return True
    try:
        if await bot.is_owner(interaction.user):  # the application's owner (or team), fetched once
            return True
    except discord.HTTPException:
        log.warning("could not fetch the application owner", exc_info=True)
    if interaction.guild is not None and interaction.permissions.manage_guild:
        return True
    raise NotAllowed("Only the bot's owner or members with Manage Server can reload the rules.")


_HOST_PATH = re.compile(r"(?<![\w/.])/(?:[\w.@+-]+/)+[\w.@+-]*")


def without_host_paths(text: str) -> str:
    """``text`` with every absolute path cut to its last part: a reply in Discord never shows where the
    host keeps its files (an OS error while building names the full path). Dates such as 10/25/2015 are
    not paths (they do not start with a slash)."""
    return _HOST_PATH.sub(lambda m: m[0].rstrip("/").rsplit("/", 1)[-1] or "/", text)


def is_known_owner(bot: commands.Bot, user_id: int) -> bool:
    """Whether ``user_id`` is one of the bot's owners, from what is already known (``OWNER_IDS``, and the
    application's owner once ``owner_or_manager`` has fetched it): no request to Discord."""
    owners = set(bot.settings.owner_ids)  # type: ignore[attr-defined]
    owners |= set(bot.owner_ids or ()) | ({bot.owner_id} if bot.owner_id else set())
    return user_id in owners


class Admin(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot
        self.lock = asyncio.Lock()
        # When each server last reloaded, and when any server admin last did (monotonic seconds): a reload
        # keeps a core busy for seconds, so a server's admin cannot run it in a loop.
        self.last_in: dict[int | None, float] = {}
        self.last_any = -math.inf

    def wait_before_reload(self, guild_id: int | None, user_id: int) -> float:
        """Seconds until this user may reload here (0: now). The bot's owners are never made to wait."""
        if is_known_owner(self.bot, user_id):
            return 0.0
        settings = self.bot.settings  # type: ignore[attr-defined]
        now = time.monotonic()
        here = self.last_in.get(guild_id, -math.inf) + settings.reload_cooldown - now
        anywhere = self.last_any + settings.reload_cooldown_global - now
        return max(0.0, here, anywhere)

    @app_commands.command(name="reload", description="Rebuild the rules index from the sources (admins only)")
    @app_commands.check(owner_or_manager)
    async def reload(self, interaction: discord.Interaction) -> None:
        started = time.perf_counter()
        wait = self.wait_before_reload(interaction.guild_id, interaction.user.id)
        if wait > 0:
            settings = self.bot.settings  # type: ignore[attr-defined]
            when = int(time.time() + wait) + 1
            await interaction.response.send_message(
                f"Reloads are limited to one every {settings.reload_cooldown:g} s in a server (and one every "
                f"{settings.reload_cooldown_global:g} s across all servers): the next one is allowed "
                f"<t:{when}:R> (in {math.ceil(wait)} s).",
                ephemeral=True,
            )
            return
        self.last_in[interaction.guild_id] = self.last_any = time.monotonic()
        # Rebuilding takes longer than Discord's 3 seconds: acknowledge first. Queries keep being
        # served from the old index until the engine swaps the new one in.
        await interaction.response.defer(ephemeral=True, thinking=True)
        if self.lock.locked():
            await interaction.followup.send("A reload is already running.", ephemeral=True)
            return
        engine = self.bot.engine  # type: ignore[attr-defined]
        async with self.lock:
            try:
                stats = await self.bot.reload_rules()  # type: ignore[attr-defined]
            except (ReloadRefused, ReloadFailed) as exc:
                serving = engine.stats()
                verb = "Reload refused" if isinstance(exc, ReloadRefused) else "Reload failed"
                text = (
                    f"{verb}; still serving the {serving['entries']} entries from {len(serving['files'])} files "
                    f"loaded before: {escape(without_host_paths(str(exc)))}"
                )
                log.warning("reload by %s: %s (%s)", interaction.user.id, text, exc)  # the log keeps the paths
                await interaction.followup.send(text[:2000], ephemeral=True)
                return
        told = await self._tell_other_processes()
        seconds = time.perf_counter() - started
        build = stats.get("build_seconds")
        errors = stats.get("errors") or []
        text = f"Reloaded {stats.get('entries', '?')} entries from {len(stats.get('files', []))} files"
        text += f" in {seconds:.2f} s"
        text += f" (index build {float(build):.2f} s)." if build is not None else "."
        if errors:
            text += f"\n{len(errors)} file(s) failed to load: " + "; ".join(
                escape(without_host_paths(e)) for e in errors[:3]
            )
        if told:
            text += f"\n{told}"
        log.info("reload by %s: %s", interaction.user.id, text.replace("\n", " "))
        await interaction.followup.send(text[:2000], ephemeral=True)

    async def _tell_other_processes(self) -> str | None:
        """Other bot processes reload too: they poll the database's reload counter. Returns a note if not."""
        from bot.rulings.service import Unavailable

        rulings = getattr(self.bot, "rulings", None)
        if rulings is None:
            return None
        try:
            await rulings.announce_reload()
        except Unavailable:
            return "Other bot processes could not be told to reload (the rulings database is unreachable)."
        return None


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Admin(bot))
