"""Message context menu "Look up rules": runs /ask on the selected message's text, privately."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.discord_bot.cogs import user_cooldown
from bot.discord_bot.replies import answer, send_error


class LookupMenu(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot
        # Context menus cannot be cog-method decorators; they are added to the tree by hand.
        self.menu = user_cooldown()(app_commands.ContextMenu(name="Look up rules", callback=self.look_up))

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.menu)

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.menu.name, type=self.menu.type)

    async def look_up(self, interaction: discord.Interaction, message: discord.Message) -> None:
        text = " ".join((message.content or "").split())
        if not text:
            interaction.extras["outcome"] = "user_error"
            await send_error(interaction, "That message has no text to look up.")
            return
        await answer(interaction, lambda judge: judge.ask(text), private=True)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(LookupMenu(bot))
