"""One extension per feature (define, ask, rule, changes, banned, meta, admin, the context menu).

Shared here: the per-user cooldown read from settings, and the autocomplete adapters.
"""

from __future__ import annotations

from collections.abc import Callable

import discord
from discord import app_commands

from ..views import choices

PRIVATE = "Only you see the answer (you can still post it in the channel)"


def _cooldown(interaction: discord.Interaction) -> app_commands.Cooldown | None:
    settings = interaction.client.settings  # type: ignore[attr-defined]
    if settings.cooldown_seconds <= 0:
        return None
    return app_commands.Cooldown(settings.cooldown_rate, settings.cooldown_seconds)


def user_cooldown() -> Callable:
    """Per-user rate limit from settings (COOLDOWN_RATE per COOLDOWN_SECONDS; 0 seconds turns it off)."""
    return app_commands.checks.dynamic_cooldown(_cooldown, key=lambda i: i.user.id)


def completer(method: str) -> Callable:
    """An autocomplete callback over one engine method (``complete``, ``complete_section``, ...)."""

    async def autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        engine = interaction.client.judge.engine  # type: ignore[attr-defined]
        try:
            return choices(getattr(engine, method)(current or "", 25))
        except Exception:  # autocomplete must never error out in the user's face
            import logging

            logging.getLogger("bot").exception("autocomplete %s failed for %r", method, current)
            return []

    return autocomplete
