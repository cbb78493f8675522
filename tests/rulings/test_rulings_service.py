"""RulingsService: overlays kept fresh across processes by the poll (two services = two processes' view)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from bot.rulings.db import resolve_url
from bot.rulings.repository import Author, Draft
from bot.rulings.service import UNAVAILABLE_NOTE, RulingsService, Unavailable
from index.engine import Engine

ANN = Author("1", "Ann")


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("svc"))  # its own copy: a test reloads it


@pytest_asyncio.fixture
async def pair(database_url: str, engine: Engine, tmp_path: Path) -> AsyncIterator[list[RulingsService]]:
    reloads: list[int] = []

    async def remote_reload() -> None:
        reloads.append(1)

    services = [
        RulingsService(resolve_url(database_url, tmp_path), lambda: engine, poll_seconds=3600,
                       on_remote_reload=remote_reload)  # fmt: skip
        for _ in range(2)
    ]
    for service in services:
        await service.start()
    services[1].reloads = reloads  # type: ignore[attr-defined]
    try:
        yield services
    finally:
        for service in services:
            await service.close()


async def test_a_change_in_one_process_reaches_the_others_overlay_at_its_next_poll(pair) -> None:
    a, b = pair
    assert (await b.overlay_for("guild:1"))[0] is not None  # b serves guild 1 and has loaded it (empty)
    ruling = await a.add("guild:1", Draft("Duel terrain", "Text.", ("glossary:terrain",)), ANN)
    assert a.overlay("guild:1").get(f"house:#{ruling.id}") is not None  # the writer: at once
    assert b.overlay("guild:1").get(f"house:#{ruling.id}") is None  # the other: not yet
    await b.poll()
    overlay = b.overlay("guild:1")
    assert overlay.get(f"house:#{ruling.id}").title == "Duel terrain"
    assert [e.id for e in overlay.applying_to("glossary:terrain")] == [f"house:#{ruling.id}"]
    await a.retire("guild:1", ruling.id, ANN, "gone")
    await b.poll()
    assert b.overlay("guild:1").get(f"house:#{ruling.id}") is None
    assert b.overlay("guild:2") is None  # never asked for: nothing loaded


async def test_reload_is_announced_to_the_other_processes(pair) -> None:
    a, b = pair
    await b.poll()
    await a.announce_reload()
    await b.poll()
    assert b.reloads == [1]
    await b.poll()
    assert b.reloads == [1]  # once per reload
    await a.poll()
    assert b.reloads == [1]


async def test_relink_after_reload_keeps_rulings_attached(pair, engine: Engine) -> None:
    a, _ = pair
    ruling = await a.add("guild:1", Draft("Duel terrain", "Text.", ("glossary:terrain",)), ANN)
    before = a.overlay("guild:1")
    await asyncio.to_thread(engine.reload)
    await a.relink()
    after = a.overlay("guild:1")
    assert after is not before and after.get(f"house:#{ruling.id}").overrides == ["glossary:terrain"]


async def test_down_database_notes_once_refuses_writes_and_recovers(engine: Engine, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    url = resolve_url(f"sqlite:///{blocker}/db.sqlite3", tmp_path)
    service = RulingsService(url, lambda: engine, poll_seconds=3600)
    await service.start()
    try:
        assert not service.available
        assert await service.overlay_for("guild:1") == (None, UNAVAILABLE_NOTE)
        assert await service.overlay_for("guild:1") == (None, None)  # once
        assert await service.overlay_for("guild:2") == (None, UNAVAILABLE_NOTE)  # once per server
        with pytest.raises(Unavailable):
            await service.add("guild:1", Draft("T", "Text."), ANN)
        blocker.unlink()  # the "database" comes back
        await service.poll()
        assert service.available and service.overlay("guild:1") is not None and service.overlay("guild:2") is not None
    finally:
        await service.close()


async def test_rulings_are_embedded_at_once_when_few_else_in_the_background(
    pair, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bot.rulings.service as service_module

    a, _ = pair
    question = "can I swap my castle mid-event?"
    text = "Strongholds may not be changed between rounds of a tournament."
    first = await a.add("guild:1", Draft("Changing strongholds", text), ANN)
    overlay = a.overlay("guild:1")
    assert overlay.unembedded == 0 and "guild:1" not in a._embedding  # one ruling: embedded before publishing
    assert f"house:#{first.id}" in [h.entry.id for h in engine.search(question, 10, overlay=overlay)]
    monkeypatch.setattr(service_module, "EMBED_AT_ONCE", 0)  # as if a server's first load brought hundreds
    second = await a.add("guild:1", Draft("Lunch break", "The lunch break lasts forty-five minutes."), ANN)
    words = a.overlay("guild:1")
    assert words.get(f"house:#{second.id}") is not None and words.unembedded == 1  # searchable by words at once
    assert f"house:#{first.id}" in [h.entry.id for h in engine.search(question, 10, overlay=words)]  # reused
    if (task := a._embedding.get("guild:1")) is not None:
        await task
    embedded = a.overlay("guild:1")
    assert embedded is not words and embedded.revision == words.revision and embedded.unembedded == 0
    assert f"house:#{second.id}" in [h.entry.id for h in engine.search("when do we eat", 10, overlay=embedded)]


async def test_a_full_disk_is_told_apart_from_an_outage(engine: Engine, tmp_path: Path, caplog) -> None:
    """Issue 20 item 7: a full disk was reported as "database unreachable". SQLite's max_page_count makes the
    file full exactly as a full volume does (SQLITE_FULL: "database or disk is full")."""
    import sqlite3

    from sqlalchemy import event

    from bot.rulings.service import StorageFull

    path = tmp_path / "rulings.sqlite3"
    service = RulingsService(resolve_url(f"sqlite:///{path}", tmp_path), lambda: engine, poll_seconds=3600)
    await service.start()
    try:
        await service.add("guild:1", Draft("First", "Text."), ANN)
        connection = sqlite3.connect(path)
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.close()
        raw = service._db()  # the service's own engine: max_page_count is per connection, so every one
        async with raw.begin() as conn:
            await conn.exec_driver_sql(f"PRAGMA max_page_count = {pages}")

        def cap(dbapi_connection, _record) -> None:  # noqa: ANN001 (SQLAlchemy's event signature)
            dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")

        event.listen(raw.sync_engine, "connect", cap)
        with pytest.raises(StorageFull) as refused:
            await service.add("guild:1", Draft("Big", "Text. " * 20000), ANN)
        assert isinstance(refused.value, Unavailable)  # callers that only know outages still refuse the write
        assert service.available  # reads keep working: the database is up
        assert [r.title for r in await service.list("guild:1")] == ["First"]  # nothing half-written
        assert "no room to write (disk full)" in caplog.text
    finally:
        await service.close()


async def test_a_server_left_while_its_overlay_was_being_built_stays_forgotten(
    pair, engine: Engine, monkeypatch
) -> None:
    """Seen once in a suite run beside a CPU-bound process: a ruling's save was still building the server's new
    overlay (on a worker thread) when the bot was removed from the server; ``left`` dropped the overlay, then the
    build finished and put it back, so the server's rulings stayed in memory. Here the build waits until the
    removal has happened, every time."""
    a, _ = pair
    await a.add("guild:7", Draft("Before", "Text.", ("glossary:terrain",)), ANN)
    assert a.overlay("guild:7") is not None
    building, go_on = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    real_build = engine.build_overlay

    def slow_build(*args, **kwargs):
        loop.call_soon_threadsafe(building.set)
        asyncio.run_coroutine_threadsafe(go_on.wait(), loop).result(10)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(engine, "build_overlay", slow_build)
    save = asyncio.create_task(a.add("guild:7", Draft("During", "Text.", ("glossary:terrain",)), ANN))
    await asyncio.wait_for(building.wait(), 10)
    a.left("guild:7")  # removed from the server while the new overlay is being built
    go_on.set()
    await asyncio.wait_for(save, 10)
    assert a.overlay("guild:7") is None  # nothing of it held in memory any more
    monkeypatch.setattr(engine, "build_overlay", real_build)
    assert (await a.overlay_for("guild:8"))[0] is not None  # other servers load and publish as before


async def test_a_server_left_while_its_rulings_were_being_read_stays_forgotten(pair, monkeypatch) -> None:
    """Seen once in a fresh clone's suite run: the removal came while a ruling's save was still reading the
    server's rulings back from the database (before the overlay was built); the read then held them and published
    the overlay again. Here the read waits until the removal has happened, every time. The save still answers."""
    a, _ = pair
    await a.add("guild:9", Draft("Before", "Text.", ("glossary:terrain",)), ANN)
    assert a.repo is not None
    reading, go_on = asyncio.Event(), asyncio.Event()
    real_active = a.repo.active

    async def slow_active(scope: str):
        reading.set()
        await go_on.wait()
        return await real_active(scope)

    monkeypatch.setattr(a.repo, "active", slow_active)
    save = asyncio.create_task(a.add("guild:9", Draft("During", "Text.", ("glossary:terrain",)), ANN))
    await asyncio.wait_for(reading.wait(), 10)
    a.left("guild:9")  # removed from the server while its rulings are read back
    go_on.set()
    saved = await asyncio.wait_for(save, 10)
    assert saved.title == "During"
    assert a.overlay("guild:9") is None  # nothing of it held in memory any more
    monkeypatch.setattr(a.repo, "active", real_active)
    assert (await a.overlay_for("guild:10"))[0] is not None  # other servers load and publish as before
