"""Opening the rules engine for the configured sources: shared by the console and the Discord bot.

Discord-free on purpose: ``python -m bot`` without a token (the console) never imports discord.
A first start builds the index (tens of seconds on a small, loaded machine): the bot logs its stages
(``LogProgress``: every start's parse, and a build's stages), the console and ``ask`` show them on stderr
(``index.cli_progress``).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bot.app.settings import Settings

if TYPE_CHECKING:
    from index.build.progress import Progress
    from index.engine import Engine

log = logging.getLogger("bot.startup")


class LogProgress:
    """An index build's stages as log lines (stage, counts, seconds): what the bot's log shows while a first
    start builds. A long stage also gets a line every ``every`` seconds."""

    def __init__(self, logger: logging.Logger = log, every: float = 5.0) -> None:
        self.log, self.every = logger, every
        self._stage: str | None = None
        self._began = self._said = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage != self._stage:
            self._stage, self._began, self._said = stage, now, now
            from index.cli_progress import describe

            self.log.info("index: %s", describe(stage, total))
        if done >= total:
            self.log.info("index: %s done, %d of %d in %.1f s", stage, done, total, now - self._began)
            self._stage = None
        elif now - self._said >= self.every:
            self._said = now
            self.log.info("index: %s, %d of %d after %.1f s", stage, done, total, now - self._began)


def source_paths(settings: Settings) -> list[Path]:
    """The configured source files and folders (the shipped corpus when none are), plus house rulings:
    always explicit, so the loader never reads the environment on the bot's behalf."""
    from glossary.loader import SHIPPED_SOURCES

    sources = list(settings.sources or [SHIPPED_SOURCES])
    if settings.house_rulings is not None:
        sources.append(settings.house_rulings)
    return sources


def open_engine(settings: Settings, progress: Progress | None = None) -> Engine:
    """Open (building if needed) the index for the configured sources; a build's stages go to ``progress``,
    by default to the log (the Discord bot)."""
    from index.engine import Engine

    progress = progress if progress is not None else LogProgress()
    return Engine.open(source_paths(settings), settings.index_dir, model=settings.model, progress=progress)
