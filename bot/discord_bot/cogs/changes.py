"""/changes: dated rule changes (``/changes list``, paged; dates validated with a clear message), and a digest
posted to a channel whenever the rule sources change (``/changes subscribe`` / ``unsubscribe``, Manage Server).

Discord cannot have a command that is both callable and a group, so the listing is the ``list`` subcommand here;
the console keeps ``/changes since:…``. The digests themselves are sent by ``bot.discord_bot.digest_posts``.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.discord_bot.client import scope_of
from bot.discord_bot.cogs import PRIVATE, user_cooldown
from bot.discord_bot.digest_posts import NONE, DigestPoster
from bot.discord_bot.replies import answer
from bot.rulings.service import Unavailable
from glossary.kinds import SOURCE_LABELS

log = logging.getLogger("bot.digests")

SOURCES = [app_commands.Choice(name=label, value=key) for key, label in SOURCE_LABELS.items()]
NOT_ADMIN = "Only members with Manage Server can choose where rule-change digests are posted."
NO_DM = "Digests are posted in a server's channels: use this command in a server."
DOWN = "The rulings database is unreachable right now, so nothing was changed. Please try again in a minute."


class NotAllowed(app_commands.CheckFailure):
    """Shown to the user as is (ephemeral)."""


def _admin_scope(interaction: discord.Interaction) -> str:
    if interaction.guild_id is None:
        raise NotAllowed(NO_DM)
    perms = interaction.permissions
    if not (perms.manage_guild or perms.administrator):
        raise NotAllowed(NOT_ADMIN)
    return scope_of(interaction.guild_id)


def _poster(interaction: discord.Interaction) -> DigestPoster:
    poster: DigestPoster | None = getattr(interaction.client, "digests", None)
    if poster is None:
        raise NotAllowed("Digests are not available in this bot (it has no rulings database).")
    return poster


class Changes(commands.Cog):
    changes = app_commands.Group(name="changes", description="Rule changes: list them, or have them posted")

    @changes.command(name="list", description="Rule changes, newest first")
    @app_commands.describe(
        since="From this date, e.g. 2008-01-01 (or 2008-01, 2008)",
        until="Up to this date, e.g. 2008-12-31",
        source="Only this document",
        private=PRIVATE,
    )
    @app_commands.choices(source=SOURCES)
    @user_cooldown()
    async def list_(
        self,
        interaction: discord.Interaction,
        since: app_commands.Range[str, 1, 20] | None = None,
        until: app_commands.Range[str, 1, 20] | None = None,
        source: app_commands.Choice[str] | None = None,
        private: bool = False,
    ) -> None:
        key = source.value if source else None
        await answer(interaction, lambda judge: judge.changes(since, until, key), private=private)

    @changes.command(name="subscribe", description="Post a digest in a channel whenever the rule sources change")
    @app_commands.describe(channel="Where to post each digest of what changed in the rules")
    async def subscribe(self, interaction: discord.Interaction, channel: discord.TextChannel) -> None:
        scope, poster = _admin_scope(interaction), _poster(interaction)
        user = str(interaction.user.id)
        try:
            outcome = await poster.read(lambda store: store.subscribe(scope, str(channel.id), user))
        except Unavailable:
            await interaction.response.send_message(DOWN, ephemeral=True)
            return
        text = {
            "new": f"<#{channel.id}> will get a digest of what changed whenever the rule sources change "
                   "(after a reload or a restart that finds them changed).",
            "again": f"<#{channel.id}> is subscribed again (its digests had stopped because the bot could not post "
                     "there).",
            "already": f"<#{channel.id}> already gets the digests.",
        }[outcome]  # fmt: skip
        log.info("digests: %s subscribed channel %s of %s (%s)", interaction.user.id, channel.id, scope, outcome)
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NONE)

    @changes.command(name="unsubscribe", description="Stop posting rule-change digests in a channel")
    @app_commands.describe(channel="The channel that gets the digests")
    async def unsubscribe(self, interaction: discord.Interaction, channel: discord.TextChannel) -> None:
        scope, poster = _admin_scope(interaction), _poster(interaction)
        try:
            removed = await poster.read(lambda store: store.unsubscribe(scope, str(channel.id)))
        except Unavailable:
            await interaction.response.send_message(DOWN, ephemeral=True)
            return
        text = f"<#{channel.id}> gets no more digests." if removed else f"<#{channel.id}> was not subscribed."
        log.info("digests: %s unsubscribed channel %s of %s (%s)", interaction.user.id, channel.id, scope, removed)
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NONE)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Changes())
