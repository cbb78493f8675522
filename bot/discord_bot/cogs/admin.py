"""/reload: rebuild the index from the sources and swap it in (owner or Manage Server only).

The parse and the build run in a child process (``Engine.reload``), so the event loop keeps serving
everyone else meanwhile. A reload that would lose a source file or most entries is refused and the
rules being served stay; the reply (and the log) says why. The time reported is the whole reload,
from the command to the swap, not just the index build.
"""

from __future__ import annotations

import asyncio
import logging
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


class Admin(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot
        self.lock = asyncio.Lock()

    @app_commands.command(name="reload", description="Rebuild the rules index from the sources (admins only)")
    @app_commands.check(owner_or_manager)
    async def reload(self, interaction: discord.Interaction) -> None:
        started = time.perf_counter()
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
                    f"loaded before: {escape(str(exc))}"
                )
                log.warning("reload by %s: %s", interaction.user.id, text)
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
            text += f"\n{len(errors)} file(s) failed to load: " + "; ".join(escape(e) for e in errors[:3])
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
