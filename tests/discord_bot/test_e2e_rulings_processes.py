"""Two real bot processes (``python -m bot``, shards 0 and 1) sharing one rulings database.

The same run on SQLite (one file both processes open) and on PostgreSQL (a server the test starts):
two servers on the fake Discord, two judges each, record, edit and retire rulings; each server's
answers are right, and a server never sees the other's. A change made in one process reaches the
other's in-memory rulings within seconds, and ``/reload`` in one process reloads the other too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, FakeGuild, FakeUser, InteractionRecord

from bot.app.settings import Settings
from bot.discord_bot.client import open_engine

ROOT = Path(__file__).resolve().parents[2]
text_of = FakeDiscord.text_of
PROPAGATION_TIMEOUT = 10.0  # seconds; the processes poll every 0.5 s


class BotProcess:
    """``python -m bot run`` as a child process, its log in a file (printed when a test fails)."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        handle = open(self.log, "wb")  # noqa: SIM115 - owned by the child until it exits
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "run", cwd=ROOT, env=self.env, stdout=handle, stderr=handle
        )
        handle.close()

    async def stop(self) -> None:
        if self.proc is None or self.proc.returncode is not None:
            return
        self.proc.terminate()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()

    def tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-4000:]
        return ""


async def eventually(check, what: str, timeout: float = PROPAGATION_TIMEOUT):  # type: ignore[no-untyped-def]
    """Retry ``check()`` (an async callable returning a truthy result) until it holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = await check()
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.25)


@pytest_asyncio.fixture(params=["sqlite", "postgresql"])
async def cluster(
    request: pytest.FixtureRequest, tmp_path: Path, index_copy: Callable[..., Path]
) -> AsyncIterator[dict]:
    house = tmp_path / "house"
    house.mkdir()
    (house / "host.md").write_text("## Host ruling\nJudge: Host\nApplies to: Target\n\nA host-wide ruling.\n")
    index_dir = index_copy(tmp_path / "index")  # its vector cache: only the host ruling is embedded here
    open_engine(Settings(index_dir=index_dir, house_rulings=house)).close()  # built once; both processes open it
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "L5R_", "DATABASE_", "SHARD_"))}
    env.update(
        DISCORD_TOKEN="fake-token",
        L5R_INDEX_DIR=str(index_dir),
        L5R_HOUSE_RULINGS=str(house),
        L5R_STATE_DIR=str(tmp_path / "state"),  # SQLite: both processes open the one file in it
        COOLDOWN_SECONDS="0",
        RULINGS_POLL_SECONDS="0.5",
        SHARD_COUNT="2",
        PYTHONPATH=str(ROOT),
    )
    if request.param == "postgresql":
        env["DATABASE_URL"] = request.getfixturevalue("postgres").create_database("c_" + uuid.uuid4().hex[:12])
    async with FakeDiscord(shard_count=2) as fake:
        env["DISCORD_API_BASE"] = fake.api_base
        procs = [BotProcess({**env, "SHARD_IDS": str(n)}, tmp_path / f"bot{n}.log") for n in range(2)]
        try:
            for proc in procs:
                await proc.start()
            await fake.wait_for(lambda: len({s.shard_id for s in fake.live_sessions()}) == 2, 60, "both processes")
            await fake.wait_for(lambda: any(c["name"] == "ruling" for c in fake.registered_commands()), 30,
                                "the commands")  # fmt: skip
            judges: dict[int, tuple[FakeUser, FakeUser]] = {}
            for n, guild in enumerate(fake.guilds):
                role = fake.new_role("Judges", guild=guild)
                names = (("Ann", "Bob"), ("Cat", "Dan"))[n]
                judges[n] = (fake.new_member(names[0], guild=guild, roles=[role]),
                             fake.new_member(names[1], guild=guild, roles=[role]))  # fmt: skip

                async def configured(guild: FakeGuild = guild, role: int = role) -> InteractionRecord | None:
                    rec = await fake.invoke_command("ruling config judge-role", {"role": role}, user=fake.admin,
                                                    guild=guild, timeout=15)  # fmt: skip
                    return rec if "Judges are now" in (rec.message or {}).get("content", "") else None

                await eventually(configured, "the judge role to be set", 30)
            yield {"fake": fake, "procs": procs, "judges": judges, "house": house, "kind": request.param}
        except BaseException:
            for n, proc in enumerate(procs):
                print(f"--- bot process {n} log ---\n{proc.tail()}")
            raise
        finally:
            for proc in procs:
                await proc.stop()


async def add(fake: FakeDiscord, guild: FakeGuild, judge: FakeUser, title: str, text: str, applies: str) -> int:
    opened = await fake.invoke_command("ruling add", {}, user=judge, guild=guild)
    saved = await fake.submit_modal(opened, {"title": title, "text": text, "applies": applies})
    content = saved.message["content"]
    assert "Saved ruling #" in content, content
    return int(content.split("ruling #")[1].split(" ")[0])


async def answer(fake: FakeDiscord, guild: FakeGuild, term: str, shard: int | None = None) -> str:
    rec = await fake.invoke_command("define", {"term": term}, guild=guild, shard=shard, timeout=10)
    assert rec.rejected == [], rec.rejected[0].response
    text = text_of(rec.message)
    fields = " ".join(f["value"] for e in rec.message["embeds"] for f in e.get("fields", []))
    return text + "\n" + fields


async def test_two_processes_two_servers_record_edit_retire(cluster: dict) -> None:
    fake: FakeDiscord = cluster["fake"]
    one, two = fake.guilds
    (ann, bob), (cat, dan) = cluster["judges"][0], cluster["judges"][1]

    duel = await add(fake, one, ann, "Terrain during a duel", "No Terrain during duels.", "Terrain")
    bows = await add(fake, two, cat, "Archers at night", "Archers may attack at night.", "Ranged Attack")
    assert "Server ruling — Terrain during a duel" in await answer(fake, one, "terrain")
    assert "Terrain during a duel" not in await answer(fake, two, "terrain")
    assert "Archers at night" in await answer(fake, two, "ranged attack")
    assert "Archers at night" not in await answer(fake, one, "ranged attack")

    edit = await fake.invoke_command("ruling edit", {"ruling": str(duel)}, user=bob, guild=one)
    done = await fake.submit_modal(edit, {"text": "No Terrain may be played during duels, by anyone."})
    assert "(version 2)" in done.message["content"]
    assert "by anyone" in await answer(fake, one, "terrain")

    retired = await fake.invoke_command("ruling retire", {"ruling": str(bows)}, user=dan, guild=two)
    assert "Retired ruling #" in retired.message["content"]
    assert "Archers at night" not in await answer(fake, two, "ranged attack")
    history = await fake.invoke_command("ruling history", {"ruling": str(bows)}, guild=two)
    assert "**Version 2** — retired by Dan" in text_of(history.message)
    other = await fake.invoke_command("ruling history", {"ruling": str(bows)}, guild=one)
    assert f"This server has no ruling #{bows}" in other.message["content"]

    # Server one's interactions delivered to the other process (as while a guild moves between shards):
    # it loads server one's rulings, and sees the next edit made in the first process within seconds.
    assert "by anyone" in await answer(fake, one, "terrain", shard=1)
    edit = await fake.invoke_command("ruling edit", {"ruling": str(duel)}, user=ann, guild=one)
    await fake.submit_modal(edit, {"text": "Terrains wait until the duel is over."})

    async def propagated() -> bool:
        return "wait until the duel is over" in await answer(fake, one, "terrain", shard=1)

    await eventually(propagated, "the edit to reach the other process")
    assert "Archers at night" not in await answer(fake, two, "ranged attack", shard=0)


async def test_reload_in_one_process_reloads_the_other(cluster: dict) -> None:
    fake: FakeDiscord = cluster["fake"]
    one, two = fake.guilds
    assert "Host ruling" in await answer(fake, two, "target")
    (cluster["house"] / "host.md").write_text(
        "## Host ruling, revised\nJudge: Host\nApplies to: Target\n\nA revised host-wide ruling.\n"
    )
    reload = await fake.invoke_command("reload", {}, user=fake.owner, guild=one, timeout=20)
    assert "Reloaded" in reload.message["content"], reload.message["content"]
    assert "Host ruling, revised" in await answer(fake, one, "target")

    async def reloaded() -> bool:
        return "Host ruling, revised" in await answer(fake, two, "target")

    await eventually(reloaded, "the other process to reload", 20)
    assert fake.unknown_calls == []
    assert [(c.path, c.response) for c in fake.rejected] == []
