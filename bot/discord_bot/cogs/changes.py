"""/changes: dated rule changes, newest first, paged; dates are validated with a clear message."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.discord_bot.cogs import lookup_command
from bot.discord_bot.replies import answer
from glossary.kinds import SOURCE_LABELS

SOURCES = [app_commands.Choice(name=label, value=key) for key, label in SOURCE_LABELS.items()]


class Changes(commands.Cog):
    @lookup_command(
        "changes",
        "Rule changes, newest first",
        since="From this date, e.g. 2008-01-01 (or 2008-01, 2008)",
        until="Up to this date, e.g. 2008-12-31",
        source="Only this document",
    )
    @app_commands.choices(source=SOURCES)
    async def changes(
        self,
        interaction: discord.Interaction,
        since: app_commands.Range[str, 1, 20] | None = None,
        until: app_commands.Range[str, 1, 20] | None = None,
        source: app_commands.Choice[str] | None = None,
        private: bool = False,
    ) -> None:
        key = source.value if source else None
        await answer(interaction, lambda judge: judge.changes(since, until, key), private=private)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Changes())
