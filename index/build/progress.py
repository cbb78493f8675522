"""Progress of an index build, reported to whoever asked for the build: stage name, done, total.

A cold build takes tens of seconds on a small, loaded machine (embedding every paragraph and kept
question is most of it), and used to print nothing. The build reports what it is doing through a
``Progress`` callback; the index never prints or logs it itself. Its callers show it: the command lines
as a bar or one line per stage on stderr (``index.cli_progress``), the bot as log lines
(``bot.app.startup``).

Each stage is reported as ``(stage, 0, total)`` when it starts, then ``(stage, done, total)`` as it goes
(at most every ``EVERY`` items for long ones), and ``(stage, total, total)`` when it ends.
"""

from __future__ import annotations

from collections.abc import Callable

#: ``progress(stage, done, total)``: called on the building thread; it should be quick and must not raise.
Progress = Callable[[str, int, int], None]

PARSING = "parsing"  # the source files, counted in files
INDEXING = "indexing"  # entries written to the Whoosh index
ARRAYS = "word arrays"  # the search arrays (one step)
EMBEDDING = "embedding"  # paragraphs and kept questions the vector cache did not have, counted in texts
STAGES = (PARSING, INDEXING, ARRAYS, EMBEDDING)

EVERY = 16  # items between two reports within a stage


def silent(stage: str, done: int, total: int) -> None:
    """The default: nobody is watching."""
