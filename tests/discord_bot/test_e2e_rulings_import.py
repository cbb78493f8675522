"""End to end: /ruling import of big and bad files through the real bot on the fake Discord.

One JudgeBot with the real engine (words only: embedding thousands of generated paragraphs in the
background would only load the shared test machine) and a SQLite rulings database. Checks that an import
never stops other users' commands, that the bounds are said up front and a file over them is refused
before it is downloaded, that a report too long for one message arrives as a file, that the audit channel
gets one line per import, and that a change racing a retire, a restore or an import is told to the judge
in a short message with nothing half-written.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, FakeUser, InteractionRecord, bot_running, preserved_discord_urls
from sqlalchemy.exc import IntegrityError

import bot.rulings.markdown as markdown_module
from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot, scope_of
from bot.rulings.db import make_engine
from bot.rulings.importing import size_text
from bot.rulings.repository import Author, Draft, RulingsRepository
from index.engine import Engine
from tests.rulings.house_files import house_file

pytestmark = pytest.mark.asyncio(loop_scope="module")

text_of = FakeDiscord.text_of
BOUNDS = "at most 512 KB and 5,000 rulings"
BOB = Author("202", "Bob")


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("e2e-import", words_only=True), model=None)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict]:
    state = tmp_path_factory.mktemp("e2e-import-state")
    with preserved_discord_urls():
        async with FakeDiscord() as fake:
            role = fake.new_role("Judges")
            judge = fake.new_member("Ann", roles=[role])
            # The database's time limit is generous here: what is tested is that a big import runs beside
            # other users and is audited once, not how fast 3,000 rows are written (at load average 13, beside
            # two other test runs, the default 8 s was exceeded). tests/rulings cover the time limit itself.
            settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                                state_dir=state, cooldown_seconds=0, rulings_poll_seconds=0.5,
                                rulings_db_timeout=120.0)  # fmt: skip
            bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot, "fake-token"):
                await fake.invoke_command("ruling config judge-role", {"role": role}, user=fake.admin)
                other = RulingsRepository(make_engine(bot.rulings.url))  # a second bot process's view
                try:
                    yield {"fake": fake, "bot": bot, "judge": judge, "other": other}
                finally:
                    await other.engine.dispose()


async def import_file(world: dict, name: str, data: bytes, **options) -> InteractionRecord:
    fake = world["fake"]
    return await fake.invoke_command("ruling import", {"file": fake.upload(name, data)}, user=world["judge"],
                                     timeout=120, **options)  # fmt: skip


async def define(fake: FakeDiscord, user: FakeUser) -> str:
    rec = await fake.invoke_command("define", {"term": "terrain"}, user=user, timeout=60)
    return text_of(rec.message)


def scope(world: dict) -> str:
    return scope_of(world["fake"].guild.id)


async def titles(world: dict) -> set[str]:
    return {r.title for r in await world["bot"].rulings.list(scope(world), include_retired=True)}


async def test_the_command_says_its_bounds(world) -> None:
    ruling = next(c for c in world["fake"].registered_commands() if c["name"] == "ruling")
    command = next(o for o in ruling["options"] if o["name"] == "import")
    assert command["description"] == f"Add or update rulings from a house-rulings .md file (judges; {BOUNDS})"


async def test_a_file_over_the_size_is_refused_before_it_is_downloaded(world) -> None:
    fake = world["fake"]
    data = house_file(4000)
    assert len(data) > 512 * 1024
    upload = fake.upload("huge.md", data)
    del fake.files[int(upload["id"])]  # a download would fail: the refusal must come first, from the size alone
    rec = await fake.invoke_command("ruling import", {"file": upload}, user=world["judge"])
    assert rec.ephemeral and rec.message["content"] == (
        f"Nothing was imported: the file is {size_text(len(data))} ({len(data):,} bytes); an import takes "
        f"{BOUNDS} at once. Split it into smaller files."
    )


async def test_a_file_over_the_count_is_refused_with_the_bound(world) -> None:
    rec = await import_file(world, "many.md", b"## R\n\nx\n" * 5001)
    assert rec.message["content"] == (
        f"Nothing was imported: **many.md** has 1 problem:\n- the file holds 5,001 rulings; an import takes "
        f"{BOUNDS} at once. Split it into smaller files."
    )
    assert "R" not in await titles(world)


@pytest.mark.parametrize("bad", [20, 500])
async def test_a_report_too_long_for_a_message_arrives_as_a_file(world, bad: int) -> None:
    """20 bad dates made a 2,400-character reply, which Discord refused: the judge saw "something went wrong"."""
    before = await titles(world)
    rec = await import_file(world, "dates.md", house_file(600, bad_dates=bad))
    content = rec.message["content"]
    assert len(content) <= 2000 and content.startswith(f"Nothing was imported: **dates.md** has {bad} problems:")
    assert "- line 4: bad-date: ruling 'Generated ruling 0': 'Date: 2026-13-40' is not a date" in content
    assert content.endswith("more: every problem, with its line, is in the attached import-problems.txt.")
    assert rec.message["attachments"][0]["filename"] == "import-problems.txt"
    report = world["fake"].attachment_data(rec.message).decode().splitlines()
    assert len(report) == bad and report[-1].startswith(f"dates.md:{4 + 10 * (bad - 1)}: bad-date: ruling ")
    assert await titles(world) == before  # nothing imported


async def test_other_commands_are_answered_while_the_file_is_parsed(world, monkeypatch) -> None:
    """The parse is held in its worker thread until a /define has been answered: were it on the event loop,
    nothing (the /define included) could be answered until the hold gave up."""
    fake, player = world["fake"], world["fake"].member
    parsing, release, gave_up = threading.Event(), threading.Event(), []
    parse = markdown_module.parse_import

    def held_parse(*args, **kwargs):
        parsing.set()
        if not release.wait(30):
            gave_up.append(True)
        return parse(*args, **kwargs)

    monkeypatch.setattr(markdown_module, "parse_import", held_parse)
    started = asyncio.create_task(import_file(world, "held.md", house_file(50, start=90_000)))
    while not parsing.is_set():
        await asyncio.sleep(0.01)
    assert "Terrain" in await define(fake, player)  # answered while the import is mid-parse
    release.set()
    rec = await started
    assert gave_up == [] and "Imported **held.md**: 50 added, 0 updated, 0 unchanged." in rec.message["content"]


async def test_a_big_import_runs_while_others_are_answered_and_is_audited_once(world) -> None:
    fake, player, admin = world["fake"], world["fake"].member, world["fake"].admin
    await fake.invoke_command("ruling config audit-channel", {"channel": fake.guild.channel_id}, user=admin)
    audited = len(fake.channel_messages())
    data = house_file(3000, start=10_000)  # 447 KB: inside the bounds
    started = asyncio.create_task(import_file(world, "big.md", data))
    answered: list[tuple[bool, float]] = []  # (the import still running, when)
    await asyncio.sleep(0.05)
    while not started.done():
        text = await define(fake, player)
        assert "Terrain" in text
        answered.append((not started.done(), time.perf_counter()))
    rec = await started
    assert "Imported **big.md**: 3000 added, 0 updated, 0 unchanged." in rec.message["content"]
    assert any(running for running, _ in answered), "no /define was answered while the import ran"
    await fake.wait_for(lambda: len(fake.channel_messages()) > audited, 10, "the audit line")
    await asyncio.sleep(0.5)  # nothing more may come
    lines = fake.channel_messages()[audited:]
    assert len(lines) == 1, [m["content"][:80] for m in lines]
    assert lines[0]["content"].startswith("Ann imported **big.md**: 3000 added, 0 updated, 0 unchanged. Added: `#")
    assert len(lines[0]["content"]) <= 2000 and fake.allowed_mentions(lines[0]) == {"parse": []}
    assert "Generated ruling 12999" in await titles(world)
    await fake.invoke_command("ruling config audit-channel", {}, user=admin)


# -- a change racing a retire, a restore, an import ---------------------------------------------------
async def test_a_retire_or_restore_racing_an_edit_says_so_and_changes_nothing(world, monkeypatch) -> None:
    fake, bot, other = world["fake"], world["bot"], world["other"]
    judge = Author(str(world["judge"].id), "Ann")
    active = await bot.rulings.add(scope(world), Draft("Race retire", "Text."), judge)
    retired = await bot.rulings.add(scope(world), Draft("Race restore", "Text."), judge)
    retired = await bot.rulings.retire(scope(world), retired.id, judge)
    repo = bot.rulings._repo()
    write = repo._write

    async def edited_meanwhile(conn, current, *args):  # read by the command; another judge's edit lands first
        await other.edit(scope(world), current.id, current.version, Draft(current.title, "Bob's edit."), BOB)
        return await write(conn, current, *args)

    monkeypatch.setattr(repo, "_write", edited_meanwhile)
    for command, ruling, doing, version, status in (
        ("ruling retire", active, "retiring", 2, "active"),
        ("ruling restore", retired, "restoring", 3, "retired"),
    ):
        rec = await fake.invoke_command(command, {"ruling": str(ruling.id)}, user=world["judge"])
        assert rec.ephemeral and rec.message["content"] == (
            f"Nothing was changed: ruling #{ruling.id} changed while you were {doing} it (it is now version "
            f"{version}, {status}). Check it with `/ruling history ruling:{ruling.id}`, then run the command "
            "again if you still mean it."
        )
        history = await bot.rulings.history(scope(world), ruling.id)
        assert [v.action for v in history][-1] == "edit" and history[-1].status == status


async def test_an_import_racing_an_edit_imports_nothing(world, monkeypatch) -> None:
    bot, other = world["bot"], world["other"]
    judge = Author(str(world["judge"].id), "Ann")
    target = await bot.rulings.add(scope(world), Draft("Generated ruling 70000", "Old."), judge)
    before = await titles(world)
    repo = bot.rulings._repo()
    insert = repo._insert_batch

    async def edited_meanwhile(*args):  # after the import read the file's rulings, before it writes any
        if not edited:
            edited.append(await other.edit(scope(world), target.id, 1, Draft(target.title, "Bob's edit."), BOB))
        return await insert(*args)

    edited: list = []
    monkeypatch.setattr(repo, "_insert_batch", edited_meanwhile)
    rec = await import_file(world, "raced.md", house_file(700, start=70_000))  # 699 new, 1 update
    monkeypatch.undo()
    assert rec.message["content"] == (
        "Nothing was imported: another judge changed some of these rulings while the file was being imported. "
        "Run the import again: it will build on their change (rulings the file does not change stay as they are)."
    )
    assert await titles(world) == before  # none of the 699 new rulings
    assert (await bot.rulings.get(scope(world), target.id)).text == "Bob's edit."
    assert bot.rulings.available  # a race, not an outage
    again = await import_file(world, "raced.md", house_file(700, start=70_000))
    assert "Imported **raced.md**: 699 added, 1 updated, 0 unchanged." in again.message["content"]


async def test_a_broken_unique_key_is_a_short_try_again_not_an_outage(world, monkeypatch) -> None:
    fake, bot = world["fake"], world["bot"]
    judge = Author(str(world["judge"].id), "Ann")
    ruling = await bot.rulings.add(scope(world), Draft("Unique key", "Text."), judge)

    async def unique_key_broken(*_args, **_kwargs):
        raise IntegrityError("INSERT INTO ruling_versions", {}, Exception("UNIQUE constraint failed"))

    monkeypatch.setattr(bot.rulings._repo(), "set_status", unique_key_broken)
    rec = await fake.invoke_command("ruling retire", {"ruling": str(ruling.id)}, user=world["judge"])
    assert rec.message["content"] == (
        "Another change to this server's rulings was being saved at the same moment, so nothing was changed. "
        "Please try again."
    )
    assert bot.rulings.available


async def test_every_request_was_valid_and_known(world) -> None:
    fake = world["fake"]
    assert fake.unknown_calls == []
    assert [(c.path, c.response) for c in fake.rejected] == []
