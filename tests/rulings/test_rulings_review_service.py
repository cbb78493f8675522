"""RulingsService and rulings whose rule changed: two services are two bot processes sharing one database.
After both reload changed sources, the flagged ruling is handed to exactly one process's ``on_review`` (the
one that posts it), every process's answers carry the note after its next poll, "still stands" clears it,
and a process starting later reports nothing again."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.rulings.db import resolve_url
from bot.rulings.repository import Author, Draft
from bot.rulings.review import Flagged
from bot.rulings.service import RulingsService
from glossary.loader import SHIPPED_SOURCES
from glossary.model import Entry
from index.engine import Engine

ANN = Author("1", "Ann")
TERRAIN = "glossary:terrain"
SCOPE = "guild:1"


class Sources:
    """The engine as a process sees it after a reload that changed Terrain's second paragraph (or not)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.changed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def get(self, entry_id: str, overlay: Any = None) -> Entry | None:
        found = self.engine.get(entry_id, overlay)
        if self.changed and found is not None and entry_id == TERRAIN:
            return replace(found, paragraphs=[found.paragraphs[0], "A second Terrain replaces the first.",
                                              *found.paragraphs[2:]])  # fmt: skip
        return found


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    yield Engine.open([SHIPPED_SOURCES], default_index)


@pytest_asyncio.fixture
async def world(database_url: str, engine: Engine, tmp_path: Path) -> AsyncIterator[dict]:
    sources = Sources(engine)
    posted: list[tuple[str, list[Flagged]]] = []
    services = []
    for name in ("a", "b"):
        service = RulingsService(resolve_url(database_url, tmp_path), lambda: sources, poll_seconds=3600)  # type: ignore[arg-type, return-value]

        async def post(flagged: list[Flagged], name: str = name) -> None:
            posted.append((name, flagged))

        service.on_review = post
        await service.start()
        services.append(service)
    try:
        yield {"a": services[0], "b": services[1], "sources": sources, "posted": posted, "url": database_url,
               "tmp": tmp_path}  # fmt: skip
    finally:
        for service in services:
            await service.close()


async def test_two_processes_reloading_report_the_change_once(world) -> None:
    a, b, sources, posted = world["a"], world["b"], world["sources"], world["posted"]
    await a.poll(), await b.poll()  # the first poll's check: nothing to say
    assert posted == []
    ruling = await a.add(SCOPE, Draft("Two Terrains", "The second is not played.", (TERRAIN,)), ANN)
    assert (await b.overlay_for(SCOPE))[0] is not None
    today = dt.datetime.now(dt.UTC).date().isoformat()

    sources.changed = True  # both processes reloaded the changed sources
    await asyncio.gather(a.relink(), b.relink())
    assert [(len(f), f[0].ruling.id, f[0].changed_on) for _, f in posted] == [(1, ruling.id, today)]
    await a.poll(), await b.poll()
    for service in (a, b):
        assert service.overlay(SCOPE).get(f"house:#{ruling.id}").changed_since == today

    stood = await b.stands(SCOPE, ruling.id, ANN)
    assert stood.review_since is None and stood.version == 2
    await a.poll()
    assert a.overlay(SCOPE).get(f"house:#{ruling.id}").changed_since is None

    late = RulingsService(resolve_url(world["url"], world["tmp"]), lambda: sources, poll_seconds=3600)  # type: ignore[arg-type, return-value]
    seen: list[list[Flagged]] = []

    async def post(flagged: list[Flagged]) -> None:
        seen.append(flagged)

    late.on_review = post
    await late.start()
    try:
        await late.poll()  # a process starting now checks too, and finds nothing new
        assert seen == [] and len(posted) == 1
    finally:
        await late.close()
