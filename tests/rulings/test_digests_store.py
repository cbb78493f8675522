"""The digest tables (``bot.rulings.digests``) on SQLite and PostgreSQL: the first version sends nothing, a new
one is moved to by exactly one of several processes offering it at once, each subscribed channel gets one
delivery claimed by one process, a forbidden channel's subscription is marked failed and not tried again, and a
server's deletion takes its subscriptions with it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.rulings import retention
from bot.rulings.db import make_engine, migrate, resolve_url
from bot.rulings.digests import FAILED, MAX_ATTEMPTS, PENDING, SENT, DigestStore, compare, pack
from bot.rulings.schema import subscriptions
from glossary.loader import load_corpus
from glossary.model import Entry

ONE, TWO = "guild:1", "guild:2"


@pytest_asyncio.fixture
async def engines(database_url: str, tmp_path: Path) -> AsyncIterator[list[AsyncEngine]]:
    """Three engines on one database: three bot processes."""
    made = [make_engine(resolve_url(database_url, tmp_path)) for _ in range(3)]
    await migrate(made[0])
    try:
        yield made
    finally:
        for engine in made:
            await engine.dispose()


def reworded() -> tuple[list[Entry], list[Entry]]:
    old = load_corpus().entries
    new = load_corpus().entries
    target = next(e for e in new if e.id == "glossary:target")
    target.paragraphs[0] = target.paragraphs[0].replace("is not targeting", "is never targeting")
    return old, new


async def test_one_process_moves_the_head_and_each_channel_gets_one_delivery(engines: list[AsyncEngine]) -> None:
    stores = [DigestStore(e) for e in engines]
    old, new = reworded()
    fp_old, data_old = pack(old)
    fp_new, data_new = pack(new)
    assert await stores[0].offer(fp_old, data_old, compare) is None  # the first version: nothing to compare
    assert await stores[1].offer(fp_old, data_old, compare) is None
    assert await stores[0].head() == (fp_old, 0)
    assert await stores[0].subscribe(ONE, "111", "9") == "new"
    assert await stores[1].subscribe(ONE, "111", "9") == "already"
    assert await stores[0].subscribe(TWO, "222", "9") == "new"

    moved = await asyncio.gather(*(s.offer(fp_new, data_new, compare) for s in stores))
    winners = [m for m in moved if m is not None]
    assert len(winners) == 1, moved
    [won] = winners
    assert won.old == fp_old and won.new == fp_new and won.deliveries == 2
    assert "1 paragraph reworded" in won.summary
    assert await stores[2].head() == (fp_new, 1)
    assert len(await stores[0].digest_rows()) == 1
    assert await stores[0].offer(fp_new, data_new, compare) is None  # again: nothing new

    claimed = await asyncio.gather(*(s.claim() for s in stores))
    taken = sorted((d.channel_id, d.digest_id) for batch in claimed for d in batch)
    assert taken == [("111", won.digest_id), ("222", won.digest_id)]  # each once, across the three
    kept = await stores[0].entries_of(won.digest_id)
    assert kept is not None and compare(data_old, data_new).to_dict() == compare(*(pack(v)[1] for v in kept)).to_dict()


async def test_a_forbidden_channel_is_marked_failed_and_not_tried_again(engines: list[AsyncEngine]) -> None:
    store = DigestStore(engines[0])
    old, new = reworded()
    await store.offer(*pack(old), compare)
    await store.subscribe(ONE, "111", "9")
    await store.subscribe(ONE, "112", "9")
    moved = await store.offer(*pack(new), compare)
    assert moved is not None
    first, second = await store.claim()
    await store.sent(first, "5001")
    assert await store.failed(second, "403 Forbidden (error code: 50001): Missing Access", for_good=True)
    by_channel = {d["channel_id"]: d for d in await store.deliveries(moved.digest_id)}
    assert by_channel["111"]["status"] == SENT and by_channel["111"]["message_id"] == "5001"
    assert by_channel["112"]["status"] == FAILED
    subs = {s.channel_id: s for s in await store.subscriptions(ONE)}
    assert subs["112"].status == FAILED and "Missing Access" in (subs["112"].failure or "")
    assert await store.claim() == []

    # The next change is not delivered to the failed channel; subscribing it again makes it active.
    newer = [e for e in new if e.id != "glossary:tactician"]
    moved = await store.offer(*pack(newer), compare)
    assert moved is not None and moved.deliveries == 1
    assert [d.channel_id for d in await store.claim()] == ["111"]
    assert await store.subscribe(ONE, "112", "9") == "again"


async def test_an_outage_is_retried_a_bounded_number_of_times(engines: list[AsyncEngine]) -> None:
    store = DigestStore(engines[0])
    old, new = reworded()
    await store.offer(*pack(old), compare)
    await store.subscribe(ONE, "111", "9")
    await store.offer(*pack(new), compare)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        [delivery] = await store.claim()
        assert delivery.attempts == attempt
        gave_up = await store.failed(delivery, "503 Service Unavailable", for_good=False)
        assert gave_up == (attempt == MAX_ATTEMPTS)
    assert await store.claim() == []
    [row] = await store.deliveries()
    assert row["status"] == FAILED and row["status"] != PENDING
    assert [s.status for s in await store.subscriptions(ONE)] == ["active"]  # an outage is not the channel's fault


async def test_unsubscribe_and_deleting_a_server_take_its_subscriptions(engines: list[AsyncEngine]) -> None:
    store = DigestStore(engines[0])
    old, new = reworded()
    await store.offer(*pack(old), compare)
    await store.subscribe(ONE, "111", "9")
    await store.subscribe(TWO, "222", "9")
    await store.offer(*pack(new), compare)
    assert await store.unsubscribe(ONE, "111") and not await store.unsubscribe(ONE, "111")
    forgotten = await retention.forget_user(engines[0], "9")  # who subscribed is a user id: forgotten on request
    assert forgotten.settings == 1
    async with engines[0].connect() as conn:
        assert list((await conn.execute(select(subscriptions.c.created_by))).scalars()) == [retention.DELETED_ID]
    await retention.delete_scope(engines[0], TWO)
    assert await store.subscriptions() == [] and await store.deliveries() == []
