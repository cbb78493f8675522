"""/ruling import below Discord: linear in the file's size, bounded, all or nothing (also when another
judge's change races it), and its report of problems always fits a Discord message.

The scaling tests count what grows with the file rather than timing it where they can: database
statements for the store; for the parser, this thread's own CPU time (``time.thread_time``: other
processes loading the machine do not add to it), with a bound far above linear growth and far below
quadratic growth.
"""

from __future__ import annotations

import gc
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import event, func, select
from sqlalchemy.exc import IntegrityError, OperationalError

from bot.rulings import present
from bot.rulings.db import make_engine, migrate, resolve_url
from bot.rulings.importing import ImportLimits, heading_count, size_text
from bot.rulings.markdown import parse_import
from bot.rulings.repository import ACTIVE, RETIRED, Author, Conflict, Draft, RulingsRepository
from bot.rulings.schema import ruling_versions, rulings
from bot.rulings.service import ConcurrentChange, RulingsService, _contended
from index.engine import Engine
from index.query.overlay import NameResolver
from tests.rulings.house_files import house_file

ANN, BOB = Author("101", "Ann"), Author("102", "Bob")
ONE = "guild:1"
UNBOUNDED = ImportLimits(10**9, 10**9)


@pytest.fixture(scope="module")
def engine(words_only_index: Path) -> Engine:
    return Engine.open(None, words_only_index, model=None)


@pytest.fixture(scope="module")
def resolver(engine: Engine) -> NameResolver:
    return NameResolver(engine.corpus)


@pytest_asyncio.fixture
async def repos(database_url: str, tmp_path: Path) -> AsyncIterator[tuple[RulingsRepository, RulingsRepository]]:
    """Two repositories on one database, each with its own engine: two bot processes."""
    engines = [make_engine(resolve_url(database_url, tmp_path)) for _ in range(2)]
    await migrate(engines[0])
    try:
        yield RulingsRepository(engines[0]), RulingsRepository(engines[1])
    finally:
        for engine in engines:
            await engine.dispose()


def drafts(count: int, tag: str = "") -> list[Draft]:
    return [Draft(f"Ruling {i}", f"Text {i}{tag}.", ("glossary:terrain",), "Kotei", "Ann", "2026-11-01")
            for i in range(count)]  # fmt: skip


async def stored_counts(repo: RulingsRepository) -> tuple[int, int]:
    async with repo.engine.connect() as conn:
        return (
            (await conn.execute(select(func.count()).select_from(rulings))).scalar_one(),
            (await conn.execute(select(func.count()).select_from(ruling_versions))).scalar_one(),
        )


# -- linear -------------------------------------------------------------------------------------------
def test_parsing_grows_linearly_with_the_file(resolver: NameResolver) -> None:
    """Each ruling used to split the whole file again (8,000 rulings: minutes; quadratic). Four times the
    rulings must cost about four times the CPU: the bound, 8, is half of what quadratic growth gives."""

    def cpu(count: int, repeat: int) -> float:
        data = house_file(count)
        best = float("inf")
        for _ in range(repeat):
            gc.collect()
            gc.disable()  # the collector's passes grow with everything the test process holds, not with the parser
            try:
                started = time.thread_time()
                found, problems = parse_import(data, "f.md", resolver, UNBOUNDED)
                best = min(best, time.thread_time() - started)
            finally:
                gc.enable()
            assert len(found) == count and problems == []
        return best

    small, medium, large = cpu(500, 3), cpu(2000, 2), cpu(8000, 2)
    assert medium / small < 8 and large / medium < 8, (small, medium, large)


async def test_storing_takes_a_few_statements_per_batch_not_per_ruling(tmp_path: Path) -> None:
    """Statements counted as the database driver receives them, for files of 500, 2,000 and 8,000 rulings:
    added, then imported again unchanged, then with every text changed. (Before: 5 statements a ruling.)"""
    counts: dict[tuple[int, str], int] = {}
    for size in (500, 2000, 8000):
        engine = make_engine(resolve_url(None, tmp_path / str(size)))
        await migrate(engine)
        executed: list[str] = []
        event.listen(engine.sync_engine, "before_cursor_execute", lambda *args, log=executed, **_: log.append(args[2]))
        repo = RulingsRepository(engine)
        try:
            for label, tag in (("new", ""), ("same", ""), ("changed", "!")):
                executed.clear()
                result = await repo.import_drafts(ONE, drafts(size, tag), ANN)
                counts[size, label] = len(executed)
                expected = {"new": (size, 0, 0), "same": (0, 0, size), "changed": (0, size, 0)}[label]
                assert (len(result.added), len(result.updated), len(result.unchanged)) == expected
        finally:
            await engine.dispose()
    for label in ("new", "same", "changed"):
        assert counts[8000, label] <= 4.5 * counts[2000, label] <= 4.5**2 * counts[500, label], counts
        assert counts[8000, label] <= 8000 // 100, counts  # batches of rulings, not one statement each


# -- all or nothing, and the result is what was stored --------------------------------------------------
async def test_an_import_adds_updates_and_keeps_and_reports_what_is_stored(repos) -> None:
    repo, _other = repos
    kept = await repo.add(ONE, drafts(1)[0], ANN)
    changed = await repo.add(ONE, Draft("Ruling 1", "Old text."), ANN)
    file = [*drafts(3), Draft("ruling 2", "Later copy wins."), Draft("New one", "Text.")]
    result = await repo.import_drafts(ONE, file, BOB)
    assert [r.id for r in result.unchanged] == [kept.id]
    assert [(r.id, r.version, r.text) for r in result.updated] == [(changed.id, 2, "Text 1.")]
    assert [(r.title, r.text) for r in result.added] == [("ruling 2", "Later copy wins."), ("New one", "Text.")]
    for ruling in [*result.added, *result.updated]:  # built without reading back: must equal the stored row
        assert await repo.get(ONE, ruling.id) == ruling
    assert [v.action for v in await repo.history(ONE, changed.id)] == ["add", "import"]
    assert (await repo.config(ONE)).revision == 3  # two adds, one import


async def test_a_change_landing_during_an_import_fails_it_whole(repos, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, other = repos
    target = await repo.add(ONE, Draft("Ruling 0", "Old."), ANN)
    before = await stored_counts(repo)
    read = repo._list

    async def read_then_race(conn, scope, *, include_retired):  # another process edits after the import read
        found = await read(conn, scope, include_retired=include_retired)
        await other.edit(ONE, target.id, 1, Draft("Ruling 0", "Bob's edit."), BOB)
        return found

    monkeypatch.setattr(repo, "_list", read_then_race)
    with pytest.raises(IntegrityError):
        await repo.import_drafts(ONE, drafts(600), ANN)  # 599 new rulings in two batches, one update
    assert await stored_counts(repo) == (before[0], before[1] + 1)  # only Bob's edit
    assert (await repo.get(ONE, target.id)).text == "Bob's edit."


async def test_a_status_change_racing_an_edit_is_a_conflict_and_writes_nothing(repos, monkeypatch) -> None:
    repo, other = repos
    one = await repo.add(ONE, Draft("Retire me", "Text."), ANN)
    two = await repo.add(ONE, Draft("Restore me", "Text."), ANN)
    two = await repo.set_status(ONE, two.id, RETIRED, ANN)
    write = repo._write

    async def race_then_write(conn, current, *args):  # the ruling was read; another judge edits it first
        await other.edit(ONE, current.id, current.version, Draft(current.title, "Edited."), BOB)
        return await write(conn, current, *args)

    monkeypatch.setattr(repo, "_write", race_then_write)
    for ruling, status in ((one, RETIRED), (two, ACTIVE)):
        with pytest.raises(Conflict) as caught:
            await repo.set_status(ONE, ruling.id, status, ANN)
        assert caught.value.current.version == ruling.version + 1 and caught.value.current.text == "Edited."
        assert [v.action for v in await repo.history(ONE, ruling.id)][-1] == "edit"  # no half-written status


# -- the service: a race is not an outage ---------------------------------------------------------------
async def test_the_service_reports_a_race_as_a_concurrent_change_not_an_outage(
    database_url: str, tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = RulingsService(resolve_url(database_url, tmp_path), lambda: engine, poll_seconds=3600)
    await service.start()
    try:
        ruling = await service.add(ONE, Draft("Ruling 0", "Old."), ANN)
        other = RulingsRepository(make_engine(service.url))
        repo = service._repo()
        read = repo._list

        async def read_then_race(conn, scope, *, include_retired):
            found = await read(conn, scope, include_retired=include_retired)
            await other.edit(ONE, ruling.id, 1, Draft("Ruling 0", "Bob's edit."), BOB)
            return found

        monkeypatch.setattr(repo, "_list", read_then_race)
        with pytest.raises(ConcurrentChange):
            await service.import_drafts(ONE, drafts(3), ANN)
        monkeypatch.undo()
        assert service.available  # not marked down: the next command works at once
        await other.engine.dispose()

        async def unique_key_broken(*_args, **_kwargs):
            raise IntegrityError("INSERT INTO ruling_versions", {}, Exception("UNIQUE constraint failed"))

        monkeypatch.setattr(repo, "set_status", unique_key_broken)
        with pytest.raises(ConcurrentChange):
            await service.retire(ONE, ruling.id, ANN)
        with pytest.raises(ConcurrentChange):
            await service.restore(ONE, ruling.id, ANN)
        assert service.available
    finally:
        await service.close()


class _PgError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("make", "contended"),
    [
        (lambda: IntegrityError("x", {}, Exception("UNIQUE constraint failed")), True),
        (lambda: OperationalError("x", {}, Exception("database is locked")), True),
        (lambda: OperationalError("x", {}, _PgError("40P01")), True),  # deadlock
        (lambda: OperationalError("x", {}, _PgError("40001")), True),  # serialization failure
        (lambda: OperationalError("x", {}, Exception("connection refused")), False),
        (lambda: ConnectionRefusedError("down"), False),
    ],
)
def test_which_errors_are_races_and_which_are_outages(make: Callable[[], BaseException], contended: bool) -> None:
    assert _contended(make()) is contended


# -- bounds and the report --------------------------------------------------------------------------------
def test_the_bounds_are_said_in_the_refusals(resolver: NameResolver) -> None:
    limits = ImportLimits(64 * 1024, 300)
    assert limits.describe() == "at most 64 KB and 300 rulings"
    assert size_text(512 * 1024) == "512 KB" and size_text(1536 * 1024) == "1.5 MB" and size_text(900) == "900 bytes"
    assert limits.size_problem(64 * 1024) is None and limits.count_problem(300) is None
    assert "the file is 64.1 KB (65,600 bytes); an import takes at most 64 KB and 300" in limits.size_problem(65_600)
    data = house_file(301)
    assert heading_count(data) == 301 and heading_count(b"## A\n### sub\n##B\n # no\n") == 2
    found, problems = parse_import(data, "f.md", resolver, limits)
    assert found == [] and [str(p) for p in problems] == [
        "the file holds 301 rulings; an import takes at most 64 KB and 300 rulings at once. "
        "Split it into smaller files."
    ]


def test_a_file_over_the_count_is_refused_before_it_is_parsed(resolver: NameResolver, monkeypatch) -> None:
    import bot.rulings.markdown as markdown_module

    def never(*_args, **_kwargs):
        raise AssertionError("the Markdown parser ran on a file over the bounds")

    monkeypatch.setattr(markdown_module, "parse_house_rulings", never)
    found, problems = parse_import(b"## R\n\nx\n" * 5001, "big.md", resolver)  # 45 KB: only the count is over
    assert found == [] and len(problems) == 1
    assert "holds 5,001 rulings; an import takes at most 512 KB and 5,000 rulings" in str(problems[0])


@pytest.mark.parametrize("bad", [1, 20, 500])
def test_the_problem_report_always_fits_one_message(resolver: NameResolver, bad: int) -> None:
    """20 bad dates made a 2,400-character message that Discord refused ("something went wrong")."""
    _found, problems = parse_import(house_file(600, bad_dates=bad), "kotei.md", resolver, UNBOUNDED)
    assert len(problems) == bad
    text, report = present.import_problems("kotei.md", problems)
    assert len(text) <= 2000 and text.startswith(f"Nothing was imported: **kotei.md** has {bad} problem")
    assert "- line 4: bad-date: ruling 'Generated ruling 0'" in text  # the first problem, with its line
    if bad == 1:
        assert report is None
        return
    assert report is not None and f"every problem, with its line, is in the attached {present.REPORT_FILE}" in text
    lines = report.splitlines()
    assert len(lines) == bad and all(line.startswith("kotei.md:") and "bad-date" in line for line in lines)
    assert lines[0].startswith("kotei.md:4: bad-date: ruling 'Generated ruling 0'")


def test_the_audit_channel_gets_one_line_for_a_whole_import() -> None:
    from bot.rulings.repository import ImportResult, Ruling

    def ruling(n: int) -> Ruling:
        import datetime as dt

        at = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
        return Ruling(n, ONE, 1, ACTIVE, f"T{n}", "x", (), None, "Ann", "2026-11-01", at, "1", at, "1")

    result = ImportResult(added=[ruling(n) for n in range(1, 1001)], updated=[ruling(2000)], unchanged=[ruling(3000)])
    line = present.audit_import("Ann @everyone", "kotei.md", result)
    assert line.startswith("Ann @\u200beveryone imported **kotei.md**: 1000 added, 1 updated, 1 unchanged.")
    assert len(line) <= 2000 and "Added: `#1`, `#2`" in line


def test_the_bounds_are_settings() -> None:
    from bot.app.settings import Settings, SettingsError

    assert (Settings().rulings_import_max_bytes, Settings().rulings_import_max_rulings) == (512 * 1024, 5000)
    env = {"RULINGS_IMPORT_MAX_BYTES": "65536", "RULINGS_IMPORT_MAX_RULINGS": "300"}
    settings = Settings.from_env(env, dotenv=False)
    assert (settings.rulings_import_max_bytes, settings.rulings_import_max_rulings) == (65536, 300)
    with pytest.raises(SettingsError, match="RULINGS_IMPORT_MAX_RULINGS"):
        Settings.from_env({"RULINGS_IMPORT_MAX_RULINGS": "many"}, dotenv=False)
