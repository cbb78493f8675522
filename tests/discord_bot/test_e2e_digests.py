"""Digests of source changes, end to end: two real bot processes (``python -m bot run``, shards 0 and 1) sharing
one database, on the fake Discord.

Server one subscribes its channel; server two subscribes a channel the bot then loses access to (403), with an
audit channel. The sources change and ``/reload`` runs in one process (the other follows through the database):
server one's channel gets exactly one digest (two pages, the second opened by its button); server two's channel is
tried once, its audit channel is told, and its subscription is marked failed. Server one then chooses to play no
format; the sources change again (a glossary paragraph and a banned card) while both processes are stopped; both
start: exactly one more digest, without the banned card but saying the Obsidian Hand has changes, and the failed
channel not tried again.
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord
from fakediscord.process import BotProcess

from bot.app.digest import TITLE
from bot.app.renderers.discord_markdown import plain
from bot.app.settings import Settings
from bot.discord_bot.client import open_engine
from bot.rulings.db import make_engine, resolve_url
from bot.rulings.digests import DigestStore
from glossary.loader import SHIPPED_SOURCES

GLOSSARY_T = "000_99c7513ab738c7d1.txt"
GLOSSARY_R = "001_043f9cd10b383175.txt"
GLOSSARY_E = "002_6da8b4809aadefbe.txt"
GLOSSARY_F = "003_d8672a9bda4ff19e.txt"
OBSIDIAN = "004_f05ef39847fd66e3.txt"


def text_of(message: dict[str, Any]) -> str:
    """What a reader sees (the Markdown read back as text)."""
    return plain(FakeDiscord.text_of(message))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def digests_in(fake: FakeDiscord, channel_id: int) -> list[dict[str, Any]]:
    return [m for m in fake.channel_messages(channel_id=channel_id)
            if any(e.get("title") == TITLE for e in m.get("embeds") or [])]  # fmt: skip


def posts_to(fake: FakeDiscord, channel_id: int) -> int:
    """How many times the bot tried to post in the channel (accepted or refused)."""
    return sum(1 for c in fake.calls if c.method == "POST" and c.path.endswith(f"/channels/{channel_id}/messages"))


async def checked(procs: list[BotProcess], why: str, count: int, timeout: float = 120.0) -> None:
    """Wait until each process logged ``count`` source checks for ``why`` (start or reload)."""
    needle = f"sources checked ({why})"
    deadline = asyncio.get_running_loop().time() + timeout
    while not all(p.log_text().count(needle) >= count for p in procs):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {needle!r} x{count} in every process")
        await asyncio.sleep(0.25)


@pytest_asyncio.fixture(params=["sqlite", "postgresql"])
async def cluster(
    request: pytest.FixtureRequest, tmp_path: Path, index_copy: Callable[..., Path]
) -> AsyncIterator[dict[str, Any]]:
    sources = tmp_path / "sources"
    shutil.copytree(SHIPPED_SOURCES, sources)
    index_dir = index_copy(tmp_path / "index")  # the same sources' bytes: opened, not built again
    open_engine(Settings(sources=(sources,), index_dir=index_dir)).close()  # built once; both processes open it
    env: dict[str, str | None] = {
        "L5R_SOURCES": str(sources), "L5R_INDEX_DIR": str(index_dir), "L5R_STATE_DIR": str(tmp_path / "state"),
        "L5R_HOUSE_RULINGS": None, "DATABASE_URL": None, "COOLDOWN_SECONDS": "0", "RULINGS_POLL_SECONDS": "0.5",
        "SHARD_COUNT": "2",
    }  # fmt: skip
    if request.param == "postgresql":
        env["DATABASE_URL"] = request.getfixturevalue("postgres").create_database("d_" + uuid.uuid4().hex[:12])
    url = resolve_url(env["DATABASE_URL"], tmp_path / "state")
    async with FakeDiscord(shard_count=2) as fake:
        made: list[BotProcess] = []

        async def start(round_: int) -> list[BotProcess]:
            procs = [BotProcess(fake, tmp_path / f"bot{n}-{round_}", {**env, "SHARD_IDS": str(n)}) for n in range(2)]
            made.extend(procs)
            for proc in procs:
                await proc.start()
            for proc in procs:
                await proc.wait_healthy(180)
            return procs

        db = make_engine(url)
        try:
            yield {"fake": fake, "start": start, "sources": sources, "store": DigestStore(db)}
        except BaseException:
            for proc in made:
                print(f"--- {proc.workdir.name} log ---\n{proc.log_text()[-4000:]}")
            raise
        finally:
            for proc in made:
                await proc.stop()
            await db.dispose()


async def test_one_digest_per_change_across_two_processes_and_a_forbidden_channel(cluster: dict[str, Any]) -> None:
    fake: FakeDiscord = cluster["fake"]
    store: DigestStore = cluster["store"]
    sources: Path = cluster["sources"]
    one, two = fake.guilds
    audit = fake.new_channel("audit", guild=two)  # before the start: the bot learns of it with the server
    procs = await cluster["start"](1)
    await checked(procs, "start", 1)  # the first start records the sources; nothing to compare with yet
    assert (await store.head()) is not None and await store.digest_rows() == []

    player = fake.new_member("player", guild=one)
    refused = await fake.invoke_command("changes subscribe", {"channel": one.channel_id}, user=player, guild=one)
    assert "Only members with Manage Server" in (refused.message or {}).get("content", "")
    rec = await fake.invoke_command("changes subscribe", {"channel": one.channel_id}, user=fake.admin, guild=one)
    assert f"<#{one.channel_id}> will get a digest" in rec.message["content"]
    await fake.invoke_command("ruling config audit-channel", {"channel": audit}, user=fake.admin, guild=two)
    rec = await fake.invoke_command("changes subscribe", {"channel": two.channel_id}, user=fake.admin, guild=two)
    assert f"<#{two.channel_id}> will get a digest" in rec.message["content"]
    fake.forbid_channel(two.channel_id)  # the bot's access to that channel is taken away

    # Five changes: four paragraphs reworded on three pages of the glossary, and a new banned card.
    edit(sources / GLOSSARY_T, "is not targeting.", "is never targeting.")
    edit(sources / GLOSSARY_T, "Each Tactician can only perform", "Each Tactician may only perform")
    edit(sources / GLOSSARY_R, "\n", "\n\n")  # every line of that page moves: not a change by itself
    edit(sources / GLOSSARY_E, "does not mean “every alternating one,”", "does not mean “every second one,”")
    edit(sources / GLOSSARY_F, "A card state in which only", "A card state where only")
    edit(sources / OBSIDIAN, "Nanashi Mura\n", "Nanashi Mura\nKyuden Hida\n")
    rec = await fake.invoke_command("reload", {}, user=fake.admin, guild=one, timeout=120)
    assert "Reloaded" in text_of(rec.message), text_of(rec.message)
    await checked(procs, "reload", 1)  # both reloaded (one by the command, one told through the database)
    await fake.wait_for(lambda: len(digests_in(fake, one.channel_id)) == 1, 30, "the digest in server one")
    await fake.wait_for(lambda: len(fake.channel_messages(channel_id=audit)) == 1, 30, "the audit line")
    await asyncio.sleep(2)  # time for a second (wrong) copy to arrive, if one were coming
    [posted] = digests_in(fake, one.channel_id)
    text = text_of(posted)  # three changes a page: Tactical, Target, Each other
    assert "Changed · L5R Comprehensive Rules — Glossary T › Tactical" in text
    assert "is not targeting." in text and "is never targeting." in text and "every second one" in text
    assert "Kyuden Hida" not in text and "page 1/2" in text
    assert posts_to(fake, two.channel_id) == 1  # tried once, refused (403)
    assert "can no longer be posted in" in text_of(fake.channel_messages(channel_id=audit)[0])
    subs = {int(s.channel_id): s for s in await store.subscriptions()}
    assert subs[two.channel_id].status == "failed" and "403" in (subs[two.channel_id].failure or "")
    assert subs[one.channel_id].status == "active"
    [row] = await store.digest_rows()
    assert "4 paragraphs reworded" in row["summary"] and "1 card banned" in row["summary"]

    # The second page, through the button (served by whichever process gets the click).
    button = f"l5r:dg:{row['id']}:1"
    clicked = await fake.click(posted, button, user=player)
    page = text_of(clicked.message)
    assert "A card state where only" in page and "Banned: Kyuden Hida (Strongholds)" in page
    assert f"· {GLOSSARY_F}" in page and "page 2/2" in page

    # Server one plays no format from now on. Stopped, changed, started again: one more digest, from one of the
    # two, without the format's change; subscriptions kept.
    rec = await fake.invoke_command("ruling config formats", {"formats": "none"}, user=fake.admin, guild=one)
    assert "no format" in text_of(rec.message).lower(), text_of(rec.message)
    for proc in procs:
        assert await proc.stop() == 0
    edit(sources / GLOSSARY_T, "is never targeting.", "is not targeting.")
    edit(sources / OBSIDIAN, "Kyuden Hida\n", "Kyuden Hida\nShiro Kitsuki\n")
    procs = await cluster["start"](2)
    await checked(procs, "start", 1)
    await fake.wait_for(lambda: len(digests_in(fake, one.channel_id)) == 2, 60, "the second digest")
    await asyncio.sleep(2)
    assert len(digests_in(fake, one.channel_id)) == 2
    assert posts_to(fake, two.channel_id) == 1  # the failed subscription is not tried again
    assert len(await store.digest_rows()) == 2
    second = text_of(digests_in(fake, one.channel_id)[1])
    assert "Reworded — paragraph 1" in second and "is never targeting." in second
    assert "Shiro Kitsuki" not in second
    assert "The Obsidian Hand Ruleset also has changes; this server does not play it." in second

    rec = await fake.invoke_command("changes unsubscribe", {"channel": one.channel_id}, user=fake.admin, guild=one)
    assert f"<#{one.channel_id}> gets no more digests." in rec.message["content"]
    assert [int(s.channel_id) for s in await store.subscriptions()] == [two.channel_id]
