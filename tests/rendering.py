"""Test helpers: an answer as each front end shows it."""

from __future__ import annotations

from bot.app.answer import Answer
from bot.app.renderers import discord_markdown, text
from bot.app.renderers.discord_markdown import Message, plain


def to_text(answer: Answer) -> str:
    """The console's text of an answer."""
    return text.render(answer)


def to_discord(answer: Answer) -> Message:
    """The answer as Discord embed pages."""
    return discord_markdown.render(answer)


def discord_text(answer: Answer) -> str:
    """Every Discord page of an answer read back as plain text (descriptions and fields)."""
    message = to_discord(answer)
    return "\n".join(discord_markdown.page_text(message, n) for n in range(len(message.pages)))


__all__ = ["discord_text", "plain", "to_discord", "to_text"]
