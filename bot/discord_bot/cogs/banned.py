"""/banned: is a card banned in the Obsidian Hand format, in which category, since when; or the whole list."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.app.commands import AS_OF
from bot.discord_bot.cogs import completer, lookup_command
from bot.discord_bot.replies import answer


class Banned(commands.Cog):
    @lookup_command(
        "banned",
        "Is a card on the Obsidian Hand banned list? Leave the card out for the whole list",
        card="Card name, e.g. Moshi Eihime (leave out for the whole list)",
        as_of=AS_OF.description,
    )
    @app_commands.autocomplete(card=completer("complete_banned"))
    async def banned(
        self,
        interaction: discord.Interaction,
        card: app_commands.Range[str, 1, 200] | None = None,
        private: bool = False,
        as_of: app_commands.Range[str, 1, 20] | None = None,
    ) -> None:
        await answer(interaction, lambda judge: judge.banned(card, as_of), private=private)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Banned())
