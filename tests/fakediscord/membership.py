"""The bot's membership of a guild: removed from it, invited (back) into it, and the guild's outages.

Discord tells a bot both with the same two gateway events, told apart by one field: GUILD_DELETE
without ``unavailable`` means the bot was removed (kicked, banned, or the guild deleted); with
``unavailable: true`` the guild is in an outage and the bot is still in it. GUILD_CREATE without
``unavailable`` is a join; with ``unavailable: false`` the guild is back after an outage.
"""

from __future__ import annotations

from .models import FakeGuild


class MembershipMixin:
    """``FakeDiscord``'s guild-membership events (a removed guild leaves ``guilds``: a new READY omits it)."""

    async def remove_bot(self, guild: FakeGuild) -> None:
        """The bot is kicked from ``guild``: GUILD_DELETE without ``unavailable``."""
        session = self.session_for_guild(guild)
        if guild in self.guilds:
            self.guilds.remove(guild)
        await self.dispatch_event(session, "GUILD_DELETE", {"id": str(guild.id)})

    async def invite_bot(self, guild: FakeGuild) -> None:
        """The bot is invited into ``guild`` (again): GUILD_CREATE for a join."""
        if guild not in self.guilds:
            self.guilds.append(guild)
        payload = guild.create_payload(self.bot_user)
        del payload["unavailable"]  # a join carries no outage flag (discord.py then reports on_guild_join)
        await self.dispatch_event(self.session_for_guild(guild), "GUILD_CREATE", payload)

    async def guild_outage(self, guild: FakeGuild) -> None:
        """``guild`` becomes unavailable (a Discord outage): GUILD_DELETE with ``unavailable: true``."""
        await self.dispatch_event(
            self.session_for_guild(guild), "GUILD_DELETE", {"id": str(guild.id), "unavailable": True}
        )

    async def guild_recovers(self, guild: FakeGuild) -> None:
        """``guild`` is available again after an outage: GUILD_CREATE with ``unavailable: false``."""
        await self.dispatch_event(self.session_for_guild(guild), "GUILD_CREATE", guild.create_payload(self.bot_user))
