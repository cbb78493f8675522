"""/ask: a free-text ruling question -> the best answering paragraphs, cited and dated."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.app.commands import AS_OF
from bot.discord_bot.cogs import lookup_command
from bot.discord_bot.replies import answer


class Ask(commands.Cog):
    @lookup_command(
        "ask", "Search the rules for a ruling question", question="e.g. is a terrain an enemy card?",
        as_of=AS_OF.description,
    )
    async def ask(
        self,
        interaction: discord.Interaction,
        question: app_commands.Range[str, 1, 300],
        private: bool = False,
        as_of: app_commands.Range[str, 1, 20] | None = None,
    ) -> None:
        await answer(interaction, lambda judge: judge.ask(question, as_of), private=private)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Ask())
