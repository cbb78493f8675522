"""/define: a glossary term in full, with "did you mean" buttons when unknown."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.app.commands import AS_OF
from bot.discord_bot.cogs import completer, lookup_command
from bot.discord_bot.replies import answer


class Define(commands.Cog):
    @lookup_command(
        "define", "A rules term in full: verbatim text, change dates, citation",
        term="The term to look up, e.g. Target", as_of=AS_OF.description,
    )
    @app_commands.autocomplete(term=completer("complete"))
    async def define(
        self, interaction: discord.Interaction, term: app_commands.Range[str, 1, 200],
        private: bool = False,
        as_of: app_commands.Range[str, 1, 20] | None = None,
    ) -> None:
        await answer(interaction, lambda judge: judge.define(term, as_of), private=private)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Define())
