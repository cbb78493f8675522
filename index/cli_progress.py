"""An index build's progress on stderr, for the command lines (``python -m index``, ``python -m bot``
console, ``ask`` and ``export``): the build reports stages (``index.build.progress``), this shows them.

At a terminal each stage is a tqdm bar (what it is doing, how far, how fast); otherwise (a pipe, a log
file, a test) one plain line per stage as it starts, so a log shows what the first start spent its time
on. Every line starts with ``PREFIX``, and nothing goes to stdout: scripts parse that.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from index.build.progress import ARRAYS, EMBEDDING, INDEXING, PARSING

if TYPE_CHECKING:
    from tqdm import tqdm

PREFIX = "index build: "


def describe(stage: str, total: int) -> str:
    """What a stage is doing, in words (its count included)."""
    if stage == PARSING:
        return f"parsing {total} source file{'s' * (total != 1)}"
    if stage == INDEXING:
        return f"indexing {total} entries"
    if stage == ARRAYS:
        return "computing the word arrays"
    if stage == EMBEDDING:
        return f"embedding {total} texts (paragraphs, their sentences and players' questions)"
    return f"{stage} ({total})"


class StderrProgress:
    """``progress(stage, done, total)`` for ``Engine.open``; use it as a context manager, which closes the
    last bar and, if anything was built, says how long it took.

    Every start parses the sources, built or not: the parsing stage is held back and shown (as done) only
    when a build stage follows, so a start that only opens the index prints nothing at all.
    """

    def __init__(self, stream: TextIO | None = None, *, bar: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.bar = _is_terminal(self.stream) if bar is None else bar
        self.stages: list[str] = []  # shown, in the order they began (tests read it)
        self._stage: str | None = None  # the stage being shown
        self._ended: str | None = None  # the stage that ended last (a repeated final report is ignored)
        self._tqdm: tqdm | None = None
        self._started: float | None = None  # when the build began (its parse included)
        self._parse: tuple[int, float] | None = None  # a parse not shown yet: its total and start

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == PARSING and self._stage is None:
            if self._parse is None:
                self._parse = (total, time.monotonic())
            return
        if stage != self._stage:
            if stage == self._ended and done >= total:
                return
            self._begin(stage, total)
        if self._tqdm is not None:
            self._tqdm.update(max(0, done - self._tqdm.n))
        if done >= total:
            self._end()

    def _begin(self, stage: str, total: int) -> None:
        self._end()
        if self._parse is not None:  # a build follows the parse: show it, done
            parsed, self._started = self._parse
            self._parse = None
            self.stages.append(PARSING)
            self._write(PREFIX + describe(PARSING, parsed))
        if self._started is None:
            self._started = time.monotonic()
        self._stage = stage
        self.stages.append(stage)
        label = PREFIX + describe(stage, total)
        if self.bar:
            from tqdm import tqdm  # here: importing it costs a tenth of a second, and most runs build nothing

            unit = {EMBEDDING: " texts", INDEXING: " entries"}.get(stage, "")
            self._tqdm = tqdm(total=total, desc=label, unit=unit, file=self.stream, leave=True, dynamic_ncols=True)
        else:
            self._write(label)

    def _end(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
            self._tqdm = None
        if self._stage is not None:
            self._ended, self._stage = self._stage, None

    def _write(self, line: str) -> None:
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # stderr closed or gone: the build goes on without being watched
            pass

    def __enter__(self) -> StderrProgress:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._end()
        if exc_type is None and self._started is not None:
            self._write(f"{PREFIX}done in {time.monotonic() - self._started:.1f} s")
        # the same object may watch a later build (a rebuild) too
        self._started = self._parse = self._ended = None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
