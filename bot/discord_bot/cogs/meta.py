"""/about and /help: what is loaded, and how to use the bot (both private to the asker)."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.discord_bot.cogs import user_cooldown
from bot.discord_bot.replies import answer


class Meta(commands.Cog):
    @app_commands.command(name="about", description="Sources loaded, entry counts, index build time, version")
    @user_cooldown()
    async def about(self, interaction: discord.Interaction) -> None:
        await answer(interaction, lambda judge: judge.about(), private=True)

    @app_commands.command(name="help", description="The judge's commands, with examples")
    @user_cooldown()
    async def help(self, interaction: discord.Interaction) -> None:
        await answer(interaction, lambda judge: judge.help(), private=True)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Meta())
