"""The rulings repository and migrations, on SQLite and on PostgreSQL (the same code, the same tests)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import inspect

from bot.rulings.db import head_revision, make_engine, migrate, resolve_url
from bot.rulings.repository import (
    ACTIVE,
    RETIRED,
    Author,
    Conflict,
    Draft,
    NotFound,
    RulingsRepository,
)

ANN = Author("101", "Ann (judge)")
BOB = Author("102", "Bob")
ONE, TWO = "guild:1", "guild:2"


@pytest_asyncio.fixture
async def repo(database_url: str, tmp_path: Path) -> AsyncIterator[RulingsRepository]:
    engine = make_engine(resolve_url(database_url, tmp_path))
    await migrate(engine)
    try:
        yield RulingsRepository(engine)
    finally:
        await engine.dispose()


def draft(title: str = "Terrain during a duel", text: str = "No Terrain may be played during a duel.") -> Draft:
    return Draft(title=title, text=text, applies_to=("glossary:terrain",), event="Kotei 2026")


async def test_migrations_create_the_schema_and_are_idempotent(database_url: str, tmp_path: Path) -> None:
    engine = make_engine(resolve_url(database_url, tmp_path))
    try:
        assert await migrate(engine) == head_revision() == "0006"
        assert await migrate(engine) == "0006"  # a second process starting: nothing to do
        async with engine.connect() as conn:
            tables = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
        assert {"scopes", "rulings", "ruling_versions", "counters", "alembic_version"} <= tables
        assert await RulingsRepository(engine).counters() == {"rulings": 0, "reload": 0}
    finally:
        await engine.dispose()


async def test_processes_migrating_at_once_do_not_trip_over_each_other(database_url: str, tmp_path: Path) -> None:
    engines = [make_engine(resolve_url(database_url, tmp_path)) for _ in range(3)]
    try:
        assert await asyncio.gather(*(migrate(e) for e in engines)) == ["0006"] * 3
    finally:
        for e in engines:
            await e.dispose()


async def test_add_edit_retire_restore_keep_every_version(repo: RulingsRepository) -> None:
    added = await repo.add(ONE, draft(), ANN)
    assert (added.version, added.status, added.judge, added.event) == (1, ACTIVE, "Ann (judge)", "Kotei 2026")
    assert added.applies_to == ("glossary:terrain",) and added.edited_on is None
    edited = await repo.edit(ONE, added.id, 1, draft(text="No Terrain may be played while a duel resolves."), BOB)
    assert edited.version == 2 and edited.judge == "Ann (judge)" and edited.updated_by == "102"
    assert edited.edited_on == edited.updated_at.date().isoformat()
    retired = await repo.set_status(ONE, added.id, RETIRED, BOB, "superseded")
    assert retired.version == 3 and not retired.active
    assert await repo.list(ONE) == [] and [r.id for r in await repo.list(ONE, include_retired=True)] == [added.id]
    restored = await repo.set_status(ONE, added.id, ACTIVE, ANN)
    assert restored.version == 4 and restored.active
    history = await repo.history(ONE, added.id)
    assert [(v.version, v.action, v.status, v.author_name) for v in history] == [
        (1, "add", ACTIVE, "Ann (judge)"),
        (2, "edit", ACTIVE, "Bob"),
        (3, "retire", RETIRED, "Bob"),
        (4, "restore", ACTIVE, "Ann (judge)"),
    ]
    assert history[0].text == "No Terrain may be played during a duel."
    assert history[2].note == "superseded"
    assert history[1].created_at.tzinfo is not None


async def test_the_second_of_two_edits_from_one_version_is_a_conflict(repo: RulingsRepository) -> None:
    ruling = await repo.add(ONE, draft(), ANN)
    first = await repo.edit(ONE, ruling.id, 1, draft(text="Ann's wording."), ANN)
    with pytest.raises(Conflict) as caught:
        await repo.edit(ONE, ruling.id, 1, draft(text="Bob's wording."), BOB)
    assert caught.value.current.text == "Ann's wording." and caught.value.current.version == first.version
    assert [v.text for v in await repo.history(ONE, ruling.id)] == ["No Terrain may be played during a duel.",
                                                                     "Ann's wording."]  # fmt: skip


async def test_simultaneous_edits_one_wins_one_conflicts(repo: RulingsRepository) -> None:
    ruling = await repo.add(ONE, draft(), ANN)
    results = await asyncio.gather(
        repo.edit(ONE, ruling.id, 1, draft(text="A"), ANN),
        repo.edit(ONE, ruling.id, 1, draft(text="B"), BOB),
        return_exceptions=True,
    )
    conflicts = [r for r in results if isinstance(r, Conflict)]
    assert len(conflicts) == 1, results
    assert len(await repo.history(ONE, ruling.id)) == 2


async def test_scopes_never_see_or_change_each_others_rulings(repo: RulingsRepository) -> None:
    ruling = await repo.add(ONE, draft(), ANN)
    await repo.add(TWO, draft("Other server's ruling"), BOB)
    assert [r.title for r in await repo.list(TWO)] == ["Other server's ruling"]
    assert await repo.get(TWO, ruling.id) is None
    with pytest.raises(NotFound):
        await repo.edit(TWO, ruling.id, 1, draft(text="hijack"), BOB)
    with pytest.raises(NotFound):
        await repo.set_status(TWO, ruling.id, RETIRED, BOB)
    with pytest.raises(NotFound):
        await repo.history(TWO, ruling.id)
    assert (await repo.get(ONE, ruling.id)).text == "No Terrain may be played during a duel."


async def test_revisions_and_counters_move_with_every_change(repo: RulingsRepository) -> None:
    assert await repo.revisions([ONE]) == {}
    ruling = await repo.add(ONE, draft(), ANN)
    await repo.edit(ONE, ruling.id, 1, draft(text="x"), ANN)
    assert await repo.revisions([ONE, TWO]) == {ONE: 2}
    revision, active = await repo.active(ONE)
    assert revision == 2 and [r.text for r in active] == ["x"]
    assert (await repo.counters())["rulings"] == 2
    assert await repo.bump_counter("reload") == 1 and (await repo.counters())["reload"] == 1


async def test_import_is_all_in_one_transaction(repo: RulingsRepository) -> None:
    kept = await repo.add(ONE, draft("Kept"), ANN)
    changed = await repo.add(ONE, draft("Changed"), ANN)
    drafts = [draft("Kept"), draft("Changed", "New text."), draft("Brand new")]
    result = await repo.import_drafts(ONE, drafts, BOB)
    assert [r.title for r in result.unchanged] == ["Kept"]
    assert [(r.title, r.version) for r in result.updated] == [("Changed", 2)]
    assert [r.title for r in result.added] == ["Brand new"]
    assert (await repo.get(ONE, kept.id)).version == 1
    assert [v.action for v in await repo.history(ONE, changed.id)] == ["add", "import"]


async def test_config_and_events(repo: RulingsRepository) -> None:
    assert (await repo.config(ONE)).judge_role_id is None
    config = await repo.set_config(ONE, ANN, judge_role_id="555")
    assert config.judge_role_id == "555" and config.audit_channel_id is None
    config = await repo.set_config(ONE, ANN, audit_channel_id="777")
    assert (config.judge_role_id, config.audit_channel_id) == ("555", "777")
    assert (await repo.config(TWO)).judge_role_id is None
    await repo.add(ONE, draft(), ANN)
    await repo.add(ONE, Draft("No event", "Text."), ANN)
    assert await repo.events(ONE) == ["Kotei 2026"]
    assert [r.title for r in await repo.list(ONE, event="kotei 2026")] == ["Terrain during a duel"]


def test_database_url_forms(tmp_path: Path) -> None:
    from bot.rulings.db import DatabaseURLError

    assert resolve_url(None, tmp_path).drivername == "sqlite+aiosqlite"
    assert str(resolve_url(None, tmp_path).database).endswith("rulings.sqlite3")
    pg = resolve_url("postgresql://u:secret@db.example/rulings?sslmode=require", tmp_path)
    assert pg.drivername == "postgresql+asyncpg" and pg.query == {"ssl": "require"}
    assert resolve_url("postgres://u@h/d", tmp_path).drivername == "postgresql+asyncpg"
    with pytest.raises(DatabaseURLError, match="unsupported database 'mysql'"):
        resolve_url("mysql://u@h/d", tmp_path)
    from bot.rulings.db import describe

    assert "secret" not in describe(pg)
