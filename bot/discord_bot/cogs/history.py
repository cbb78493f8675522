"""/history: every dated change of an entry, oldest first, each with the text it dates and the format's updates."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.app.commands import command
from bot.discord_bot.cogs import completer, lookup_command
from bot.discord_bot.replies import answer


class History(commands.Cog):
    @lookup_command("history", command("history").summary, term="The term or entry, e.g. Terrain")
    @app_commands.autocomplete(term=completer("complete"))
    async def history(
        self, interaction: discord.Interaction, term: app_commands.Range[str, 1, 200], private: bool = False
    ) -> None:
        await answer(interaction, lambda judge: judge.history(term), private=private)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(History())
