"""The formats a server plays (/ruling config formats): stored by migration 0006, carried by its overlay, and
followed by the other processes, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import inspect, select

from bot.rulings import retention
from bot.rulings.db import head_revision, make_engine, migrate, resolve_url
from bot.rulings.repository import Author, Draft, RulingsRepository
from bot.rulings.schema import scopes
from bot.rulings.service import RulingsService
from index.engine import Engine

ANN = Author("101", "Ann (admin)")
ONE, TWO = "guild:1", "guild:2"
OH = "the-obsidian-hand-ruleset"


@pytest.fixture(scope="module")
def engine(words_only_index: Path) -> Engine:
    return Engine.open(None, words_only_index, model=None)  # no vectors needed here


@pytest_asyncio.fixture
async def pair(database_url: str, engine: Engine, tmp_path: Path) -> AsyncIterator[list[RulingsService]]:
    services = [RulingsService(resolve_url(database_url, tmp_path), lambda: engine, poll_seconds=3600)
                for _ in range(2)]  # fmt: skip
    for service in services:
        await service.start()
    try:
        yield services
    finally:
        for service in services:
            await service.close()


async def test_migration_0006_adds_the_choice_to_a_database_holding_rulings(database_url: str, tmp_path: Path) -> None:
    engine = make_engine(resolve_url(database_url, tmp_path))
    try:
        assert await migrate(engine, "0005") == "0005"
        repo = RulingsRepository(engine)
        await repo.add(ONE, Draft("Duel terrain", "Text."), ANN)
        async with engine.connect() as conn:
            columns = await conn.run_sync(lambda c: {col["name"] for col in inspect(c).get_columns("scopes")})
        assert "formats" not in columns
        assert await migrate(engine, "0006") == "0006" == head_revision()
        async with engine.connect() as conn:
            rows = (await conn.execute(select(scopes.c.scope, scopes.c.formats))).all()
        assert rows == [(ONE, None)]  # a server that held rulings before has chosen nothing: every format shown
        assert (await repo.config(ONE)).formats is None
    finally:
        await engine.dispose()


async def test_a_choice_is_stored_as_ids_none_and_all_are_told_apart(database_url: str, tmp_path: Path) -> None:
    engine = make_engine(resolve_url(database_url, tmp_path))
    try:
        await migrate(engine)
        repo = RulingsRepository(engine)
        assert (await repo.config(ONE)).formats is None
        before = (await repo.counters())["rulings"]
        config = await repo.set_config(ONE, ANN, formats=[OH, OH])
        assert config.formats == (OH,)  # stable ids, once each
        assert config.revision > 0 and (await repo.counters())["rulings"] == before + 1  # other processes notice
        assert (await repo.set_config(ONE, ANN, formats=[])).formats == ()  # plays no format
        assert (await repo.set_config(ONE, ANN, judge_role_id="7")).formats == ()  # other settings leave it be
        assert (await repo.set_config(ONE, ANN, formats=None)).formats is None  # back to "chose nothing"
        assert (await repo.config(TWO)).formats is None  # another server: untouched
        await repo.set_config(ONE, ANN, formats=[OH])
        stored = await retention.stored(engine, ONE)
        assert stored.settings  # a choice of formats is a setting: deleted with the server's data
        data = json.loads(json.dumps(await retention.export_scope(engine, ONE)))
        assert data["settings"]["formats"] == [OH]
    finally:
        await engine.dispose()


async def test_the_writers_overlay_carries_the_choice_at_once_the_others_after_their_poll(pair) -> None:
    a, b = pair
    assert (await a.overlay_for(ONE))[0].formats is None
    assert (await b.overlay_for(ONE))[0].formats is None
    assert (await b.overlay_for(TWO))[0].formats is None
    ruling = await a.add(ONE, Draft("Duel terrain", "Text.", ("glossary:terrain",)), ANN)

    config = await a.set_formats(ONE, ANN, [])
    assert config.formats == ()
    assert a.overlay(ONE).formats == frozenset()  # the writer: at once
    assert a.overlay(ONE).get(f"house:#{ruling.id}") is not None  # the rulings stay
    assert b.overlay(ONE).formats is None  # the other process: not yet
    await b.poll()
    assert b.overlay(ONE).formats == frozenset()
    assert b.overlay(TWO).formats is None  # another server is not touched

    await b.set_formats(ONE, ANN, [OH])
    await a.poll()
    assert a.overlay(ONE).formats == b.overlay(ONE).formats == frozenset({OH})
    await a.set_formats(ONE, ANN, None)
    await b.poll()
    assert b.overlay(ONE).formats is None


async def test_the_choice_survives_a_restart_and_a_reload_of_the_rules(pair, database_url: str, engine: Engine,
                                                                       tmp_path: Path) -> None:  # fmt: skip
    a, _b = pair
    await a.set_formats(ONE, ANN, [])
    await a.relink()  # what /reload does to every overlay
    assert a.overlay(ONE).formats == frozenset()
    fresh = RulingsService(resolve_url(database_url, tmp_path), lambda: engine, poll_seconds=3600)
    await fresh.start()
    try:
        assert (await fresh.overlay_for(ONE))[0].formats == frozenset()
    finally:
        await fresh.close()
