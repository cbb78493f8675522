"""Opening the rules engine for the configured sources: shared by the console and the Discord bot.

Discord-free on purpose: ``python -m bot`` without a token (the console) never imports discord.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bot.app.settings import Settings

if TYPE_CHECKING:
    from index.engine import Engine


def source_paths(settings: Settings) -> list[Path]:
    """The configured source files and folders (the shipped corpus when none are), plus house rulings:
    always explicit, so the loader never reads the environment on the bot's behalf."""
    from glossary.loader import SHIPPED_SOURCES

    sources = list(settings.sources or [SHIPPED_SOURCES])
    if settings.house_rulings is not None:
        sources.append(settings.house_rulings)
    return sources


def open_engine(settings: Settings) -> Engine:
    """Open (building if needed) the index for the configured sources."""
    from index.engine import Engine

    return Engine.open(source_paths(settings), settings.index_dir, model=settings.model)
