"""/banned: is a card banned in the Obsidian Hand format, in which category, since when."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from ..views import answer
from . import PRIVATE, completer, user_cooldown


class Banned(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="banned", description="Is a card on the Obsidian Hand banned list?")
    @app_commands.describe(card="Card name, e.g. Moshi Eihime", private=PRIVATE)
    @app_commands.autocomplete(card=completer("complete_banned"))
    @user_cooldown()
    async def banned(
        self, interaction: discord.Interaction, card: app_commands.Range[str, 1, 200], private: bool = False
    ) -> None:
        await answer(interaction, lambda judge: judge.banned(card), private=private)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Banned(bot))
