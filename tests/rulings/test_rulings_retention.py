"""The data's life (bot/rulings/retention.py and the service around it), on SQLite and on PostgreSQL.

A server that removed the bot is marked, kept through the grace period (a re-invite clears the mark) and
deleted after it; an admin or the host deletes a server at once; a user's deletion request replaces their
id and names. Time is passed in (``now``, the service's clock), never waited for.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import inspect, select, text

from bot.rulings import retention
from bot.rulings.db import head_revision, make_engine, migrate, resolve_url
from bot.rulings.repository import Author, Draft, RulingsRepository
from bot.rulings.schema import scopes
from bot.rulings.service import RulingsService
from index.engine import Engine

ANN = Author("101", "Ann (judge)")
BOB = Author("102", "Bob")
ONE, TWO = "guild:1", "guild:2"
T0 = dt.datetime(2026, 1, 10, 12, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
ALL_OF_ONE = retention.Stored(rulings=2, versions=4, settings=True, row=True)  # what ``fill`` stores for ONE


@pytest_asyncio.fixture
async def repo(database_url: str, tmp_path: Path) -> AsyncIterator[RulingsRepository]:
    engine = make_engine(resolve_url(database_url, tmp_path))
    await migrate(engine)
    try:
        yield RulingsRepository(engine)
    finally:
        await engine.dispose()


async def fill(repo: RulingsRepository) -> dict[str, int]:
    """Two servers: ONE with two rulings (one edited by Bob, one retired) and settings, TWO with one ruling."""
    duel = await repo.add(ONE, Draft("Duel terrain", "No Terrain during a duel."), ANN)
    await repo.edit(ONE, duel.id, 1, Draft("Duel terrain", "No Terrain while a duel resolves."), BOB)
    old = await repo.add(ONE, Draft("Old ruling", "Superseded."), ANN)
    await repo.set_status(ONE, old.id, "retired", ANN, "superseded")
    await repo.set_config(ONE, ANN, judge_role_id="555", audit_channel_id="777")
    other = await repo.add(TWO, Draft("Proxies", "Proxies are allowed."), BOB)
    return {"duel": duel.id, "old": old.id, "other": other.id}


async def test_migration_0002_adds_the_mark_to_a_database_holding_rulings(database_url: str, tmp_path: Path) -> None:
    engine = make_engine(resolve_url(database_url, tmp_path))
    try:
        assert await migrate(engine, "0001") == "0001"
        repo = RulingsRepository(engine)
        async with engine.begin() as conn:  # a ruling as the 0001 schema holds it (today's code reads later columns)
            await conn.execute(text("INSERT INTO scopes (scope, revision) VALUES (:s, 1)"), {"s": ONE})
            await conn.execute(text(
                "INSERT INTO rulings (id, scope, version, status, title, text, applies_to, judge, ruled_on, created_at,"
                " created_by, updated_at, updated_by) VALUES (1, :s, 1, 'active', 'Duel terrain', 'Text.', '[]', 'Ann',"
                " '2026-01-10', :t, '101', :t, '101')"), {"s": ONE, "t": T0})
            await conn.execute(text(
                "INSERT INTO ruling_versions (ruling_id, version, action, status, title, text, applies_to, judge,"
                " ruled_on, author_id, author_name, created_at) VALUES (1, 1, 'add', 'active', 'Duel terrain',"
                " 'Text.', '[]', 'Ann', '2026-01-10', '101', 'Ann', :t)"), {"t": T0})
        async with engine.connect() as conn:
            columns = await conn.run_sync(lambda c: {col["name"] for col in inspect(c).get_columns("scopes")})
        assert "left_at" not in columns
        assert await migrate(engine, "0002") == "0002"
        async with engine.connect() as conn:
            columns = await conn.run_sync(lambda c: {col["name"] for col in inspect(c).get_columns("scopes")})
            marks = (await conn.execute(select(scopes.c.scope, scopes.c.left_at))).all()
        assert "left_at" in columns and marks == [(ONE, None)]  # nobody left: nothing marked
        assert await migrate(engine, "0002") == "0002"  # a second process starting: nothing to do
        assert await migrate(engine) == head_revision()  # and on to the newest, the ruling kept
        assert [r.id for r in await repo.list(ONE)] == [1] and len(await repo.history(ONE, 1)) == 1
    finally:
        await engine.dispose()


async def test_a_server_that_left_is_kept_through_the_grace_period_then_deleted(repo: RulingsRepository) -> None:
    ids = await fill(repo)
    assert await retention.mark_left(repo.engine, {ONE: T0, "guild:9": T0}) == [ONE]  # no data: nothing to mark
    assert await retention.mark_left(repo.engine, {ONE: T0 + DAY}) == []  # marked once: the first time counts
    assert await retention.marked(repo.engine) == {ONE: T0}
    assert await retention.purge(repo.engine, T0 + 29 * DAY - 30 * DAY) == {}  # 29 days on, 30 days' grace
    assert len(await repo.list(ONE, include_retired=True)) == 2
    counter = (await repo.counters())["rulings"]

    purged = await retention.purge(repo.engine, T0 + 31 * DAY - 30 * DAY)
    assert purged == {ONE: ALL_OF_ONE}
    assert await repo.list(ONE, include_retired=True) == [] and (await repo.config(ONE)).judge_role_id is None
    assert await repo.history(TWO, ids["other"])  # the other server is untouched
    assert await retention.stored(repo.engine, ONE) == retention.Stored()
    assert (await repo.counters())["rulings"] == counter + 1  # the other processes reload
    assert await retention.purge(repo.engine, T0 + 60 * DAY) == {}  # run again: nothing left to do
    empty = {"scope": ONE, "settings": None, "rulings": [], "feedback": []}
    assert await retention.export_scope(repo.engine, ONE) == empty


async def test_an_invitation_within_the_grace_period_keeps_everything(repo: RulingsRepository) -> None:
    await fill(repo)
    await retention.mark_left(repo.engine, {ONE: T0})
    assert await retention.clear_left(repo.engine, [ONE, TWO, "guild:9"]) == [ONE]
    assert await retention.marked(repo.engine) == {}
    assert await retention.purge(repo.engine, T0 + 365 * DAY) == {}
    assert len(await repo.list(ONE, include_retired=True)) == 2 and (await repo.config(ONE)).judge_role_id == "555"


async def test_two_processes_purging_at_once_delete_each_server_once(repo: RulingsRepository, database_url: str,
                                                                     tmp_path: Path) -> None:  # fmt: skip
    await fill(repo)
    await retention.mark_left(repo.engine, {ONE: T0, TWO: T0 + DAY})
    other = make_engine(resolve_url(database_url, tmp_path))
    try:
        first, second = await asyncio.gather(
            retention.purge(repo.engine, T0 + 40 * DAY), retention.purge(other, T0 + 40 * DAY, batch=1)
        )
    finally:
        await other.dispose()
    assert sorted([*first, *second]) == [ONE, TWO]  # each deleted by exactly one of them
    assert await repo.list(ONE, include_retired=True) == [] and await repo.list(TWO) == []


async def test_delete_now_says_what_went_and_a_new_start_never_repeats_a_revision(repo: RulingsRepository) -> None:
    await fill(repo)
    before = (await repo.revisions([ONE]))[ONE]
    assert await retention.delete_scope(repo.engine, ONE) == ALL_OF_ONE
    assert await repo.revisions([ONE]) == {} and len(await repo.list(TWO)) == 1
    assert await retention.delete_scope(repo.engine, ONE) == retention.Stored()  # nothing left
    await repo.add(ONE, Draft("Fresh start", "Text."), ANN)
    assert (await repo.revisions([ONE]))[ONE] > before  # a process still holding `before` sees the change


async def test_a_users_deletion_request_replaces_their_id_and_names_and_keeps_the_rulings(
    repo: RulingsRepository,
) -> None:
    ids = await fill(repo)
    judged = await repo.add(TWO, Draft("Named judge", "Text.", judge="Ann the Elder"), BOB)
    revision = (await repo.revisions([ONE]))[ONE]
    forgotten = await retention.forget_user(repo.engine, ANN.id, ["Ann the Elder"])
    assert forgotten.names == ("Ann (judge)", "Ann the Elder") and forgotten.changed
    history = await repo.history(ONE, ids["duel"])
    assert [(v.author_id, v.author_name, v.judge) for v in history] == [
        (retention.DELETED_ID, retention.DELETED_NAME, retention.DELETED_NAME),
        (BOB.id, "Bob", retention.DELETED_NAME),  # Bob's edit stays his; the judge named is Ann
    ]
    duel = await repo.get(ONE, ids["duel"])
    assert duel.text == "No Terrain while a duel resolves." and duel.judge == retention.DELETED_NAME
    assert duel.created_by == retention.DELETED_ID and duel.updated_by == BOB.id
    assert (await repo.get(TWO, judged.id)).judge == retention.DELETED_NAME  # a name the host gave
    assert (await repo.get(TWO, ids["other"])).judge == "Bob"
    assert (await repo.revisions([ONE]))[ONE] > revision  # answers are rebuilt without the name
    data = await retention.export_scope(repo.engine, ONE)
    ids_left = {r[k] for r in data["rulings"] for k in ("created_by", "updated_by")}
    ids_left |= {v["author_id"] for r in data["rulings"] for v in r["versions"]} | {data["settings"]["updated_by"]}
    assert ANN.id not in ids_left and "Ann" not in json.dumps(data)
    again = await retention.forget_user(repo.engine, ANN.id)
    assert not again.changed and again.names == ()


async def test_the_export_holds_every_version_and_setting(repo: RulingsRepository) -> None:
    ids = await fill(repo)
    await retention.mark_left(repo.engine, {ONE: T0})
    data = json.loads(json.dumps(await retention.export_scope(repo.engine, ONE)))
    assert data["settings"]["judge_role_id"] == "555" and data["settings"]["left_at"].startswith("2026-01-10T12:00")
    assert [r["id"] for r in data["rulings"]] == [ids["duel"], ids["old"]]
    duel = data["rulings"][0]
    assert [(v["version"], v["action"], v["author_name"]) for v in duel["versions"]] == [
        (1, "add", "Ann (judge)"),
        (2, "edit", "Bob"),
    ]
    assert data["rulings"][1]["status"] == "retired" and data["rulings"][1]["versions"][-1]["note"] == "superseded"


# -- the service: what a bot process does with it ------------------------------------------------------------


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("retention"))


class Clock:
    def __init__(self, now: dt.datetime) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now


@pytest_asyncio.fixture
async def pair(database_url: str, engine: Engine, tmp_path: Path) -> AsyncIterator[tuple[RulingsService, ...]]:
    """Two processes sharing one database, with one clock the test moves."""
    clock = Clock(T0)
    services = tuple(
        RulingsService(resolve_url(database_url, tmp_path), lambda: engine, poll_seconds=3600,
                       grace=dt.timedelta(days=30), clock=clock)  # fmt: skip
        for _ in range(2)
    )
    for service in services:
        await service.start()
        service.clock_ = clock  # type: ignore[attr-defined]
    try:
        yield services
    finally:
        for service in services:
            await service.close()


async def test_the_service_marks_keeps_restores_and_purges(pair) -> None:
    a, b = pair
    ruling = await a.add(ONE, Draft("Duel terrain", "Text.", ("glossary:terrain",)), ANN)
    await a.add(TWO, Draft("Proxies", "Allowed."), ANN)
    a.left(ONE)
    assert a.overlay(ONE) is None  # nothing of it held in memory any more
    await a.try_flush_membership()
    assert await retention.marked(a.repo.engine) == {ONE: T0}
    a.clock_.now = T0 + 10 * DAY
    assert await a.purge_expired() == {}
    a.present(ONE)  # invited again within the grace period
    await a.poll()  # the poll writes the clear
    a.clock_.now = T0 + 100 * DAY
    assert await a.purge_expired() == {}
    assert (await a.overlay_for(ONE))[0].get(f"house:#{ruling.id}") is not None  # everything back

    a.left(ONE)
    await a.try_flush_membership()  # marked at day 100
    assert (await b.overlay_for(ONE))[0].get(f"house:#{ruling.id}") is not None  # another process holds it
    a.clock_.now = T0 + 131 * DAY
    both = await asyncio.gather(a.purge_expired(), b.purge_expired())
    assert sorted(s for run in both for s in run) == [ONE] and a.last_purge is not None
    await b.poll()
    assert b.overlay(ONE) is None or b.overlay(ONE).get(f"house:#{ruling.id}") is None
    assert await a.list(TWO) != []


async def test_a_mark_that_could_not_be_written_is_written_by_the_next_poll(pair) -> None:
    a, _ = pair
    await a.add(ONE, Draft("Duel terrain", "Text."), ANN)
    real = a.db
    a.db = make_engine(resolve_url("sqlite:////nonexistent/folder/x.sqlite3", Path("/")))
    try:
        a.left(ONE)
        await a.try_flush_membership()  # the database is "down": kept pending, no error
        assert not a.available
    finally:
        await a.db.dispose()
        a.db = real
    assert await retention.marked(real) == {}
    await a.poll()
    assert await retention.marked(real) == {ONE: T0}


async def test_delete_all_empties_the_servers_answers_here_and_in_the_other_process(pair) -> None:
    a, b = pair
    ruling = await a.add(ONE, Draft("Duel terrain", "Text.", ("glossary:terrain",)), ANN)
    await b.poll()
    assert (await b.overlay_for(ONE))[0].get(f"house:#{ruling.id}") is not None
    assert await a.stored(ONE) == retention.Stored(rulings=1, versions=1, row=True)
    assert await a.delete_all(ONE) == retention.Stored(rulings=1, versions=1, row=True)
    assert a.overlay(ONE) is not None and a.overlay(ONE).get(f"house:#{ruling.id}") is None
    await b.poll()  # its older revision (none: the rows are gone) replaces the one it held
    assert b.overlay(ONE).get(f"house:#{ruling.id}") is None


# -- the host's command line (python -m bot.rulings) --------------------------------------------------------


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from bot.rulings.__main__ import main

    try:
        status = main(args)
    except SystemExit as exc:  # argparse refusing the arguments
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_the_host_exports_forgets_a_user_and_forgets_a_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env from the working folder
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("L5R_STATE_DIR", str(tmp_path))

    async def setup() -> dict[str, int]:
        engine = make_engine(resolve_url(None, tmp_path))
        try:
            await migrate(engine)
            return await fill(RulingsRepository(engine))
        finally:
            await engine.dispose()

    ids = asyncio.run(setup())
    status, out, err = cli(["export-server", "1"], capsys)
    data = json.loads(out)
    assert status == 0 and err == "" and [r["id"] for r in data["rulings"]] == [ids["duel"], ids["old"]]
    assert data["rulings"][0]["versions"][0]["author_name"] == "Ann (judge)"

    status, out, _ = cli(["forget-user", ANN.id], capsys)
    assert status == 0 and "user 101 replaced by 'deleted user': 3 history entries" in out
    assert "'Ann (judge)'" in out and "texts are kept" in out
    status, out, _ = cli(["export-server", "1"], capsys)
    assert "Ann" not in out and json.loads(out)["rulings"][0]["text"] == "No Terrain while a duel resolves."
    status, out, _ = cli(["forget-user", ANN.id], capsys)
    assert status == 0 and out.strip() == "nothing recorded for user 101: nothing changed"

    status, out, _ = cli(["forget-server", "1"], capsys)
    assert status == 0 and out.strip() == "deleted everything stored for server 1: 2 rulings, 4 versions, its settings"
    status, out, _ = cli(["forget-server", "1"], capsys)
    assert status == 0 and out.strip() == "nothing stored for server 1: nothing deleted"
    assert json.loads(cli(["export-server", "2"], capsys)[1])["rulings"][0]["title"] == "Proxies"  # untouched

    status, _, err = cli(["forget-server", "guild:1"], capsys)
    assert status == 2 and "expected a Discord id" in err
    monkeypatch.setenv("DATABASE_URL", "postgresql://judge:s3cret@127.0.0.1:1/nowhere")
    status, out, err = cli(["forget-server", "1"], capsys)
    assert status == 1 and out == "" and err.startswith("error: forget-server failed on ") and "s3cret" not in err


def test_the_scope_of_a_guild_is_the_bots() -> None:
    from bot.discord_bot.client import scope_of

    assert retention.guild_scope(123) == scope_of(123) == "guild:123"


def test_the_grace_period_setting() -> None:
    from bot.app.settings import Settings, SettingsError

    assert Settings.from_env({}).data_grace_days == 30
    assert Settings.from_env({"L5R_DATA_GRACE_DAYS": "0"}).data_grace_days == 0  # deleted at the next check
    assert Settings.from_env({"L5R_DATA_GRACE_DAYS": "90"}).data_grace_days == 90
    for bad in ("-1", "two weeks", "1.5"):
        with pytest.raises(SettingsError, match="L5R_DATA_GRACE_DAYS"):
            Settings.from_env({"L5R_DATA_GRACE_DAYS": bad})
