"""/reload's permission check: OWNER_IDS add owners; they do not replace the application's owner."""

from __future__ import annotations

from types import SimpleNamespace
from unittest import mock

import discord
import pytest

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from bot.discord_bot.cogs.admin import NotAllowed, owner_or_manager


def interaction_for(bot: JudgeBot, user_id: int, *, manage_guild: bool = False) -> mock.Mock:
    interaction = mock.create_autospec(discord.Interaction, instance=True)
    interaction.client = bot
    user = mock.create_autospec(discord.User, instance=True)
    user.id = user_id
    interaction.user = user
    interaction.guild = SimpleNamespace(id=5)
    interaction.permissions = discord.Permissions(manage_guild=manage_guild)
    return interaction


@pytest.fixture
async def bot() -> JudgeBot:
    b = JudgeBot(Settings(owner_ids=frozenset({7})))
    yield b
    await b.http.close()


async def test_owner_ids_are_extra_owners_beside_the_application_owner(bot: JudgeBot) -> None:
    app_owner = discord.Object(42)
    with mock.patch.object(
        bot, "application_info", autospec=True, return_value=SimpleNamespace(team=None, owner=app_owner)
    ) as info:
        assert await owner_or_manager(interaction_for(bot, 7))  # from OWNER_IDS
        assert info.call_count == 0  # no need to ask Discord for that
        assert await owner_or_manager(interaction_for(bot, 42))  # the application's owner still counts
        assert info.call_count == 1
        with pytest.raises(NotAllowed):
            await owner_or_manager(interaction_for(bot, 8))
        assert await owner_or_manager(interaction_for(bot, 8, manage_guild=True))


async def test_without_a_guild_manage_server_does_not_count(bot: JudgeBot) -> None:
    interaction = interaction_for(bot, 8, manage_guild=True)
    interaction.guild = None
    with mock.patch.object(
        bot, "application_info", autospec=True, return_value=SimpleNamespace(team=None, owner=discord.Object(42))
    ), pytest.raises(NotAllowed, match="Only the bot's owner or members with Manage Server"):
        await owner_or_manager(interaction)
