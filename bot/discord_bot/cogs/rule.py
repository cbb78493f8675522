"""/rule: a ruleset section by number or name, with autocomplete over section names."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.app.commands import AS_OF
from bot.discord_bot.cogs import completer, lookup_command
from bot.discord_bot.replies import answer


class Rule(commands.Cog):
    @lookup_command(
        "rule", "A rule section, e.g. Cardinal Rule 2 or Deck Construction", section="Section number or name",
        as_of=AS_OF.description,
    )
    @app_commands.autocomplete(section=completer("complete_section"))
    async def rule(
        self,
        interaction: discord.Interaction,
        section: app_commands.Range[str, 1, 200],
        private: bool = False,
        as_of: app_commands.Range[str, 1, 20] | None = None,
    ) -> None:
        await answer(interaction, lambda judge: judge.rule(section, as_of), private=private)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Rule())
