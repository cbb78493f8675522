"""End to end: a server ruling notices when its rule changed. The real bot against the fake Discord, its
own copy of the sources: two rulings on Terrain are made, Terrain's paragraph is changed in the source file
and /reload runs; both show flagged in /ruling list and in answers, each gets one post in the audit channel
with the rule before and after, "Still stands" clears one, and changing the text back clears the other by
itself (while the one confirmed on the new text is flagged again).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, FakeUser, InteractionRecord, bot_running, preserved_discord_urls

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from glossary.loader import SHIPPED_SOURCES
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")

text_of = FakeDiscord.text_of
FILE = "000_99c7513ab738c7d1.txt"  # the glossary page that holds Terrain
OLD = "If a Terrain is already in play at the current battlefield, no player can play another Terrain there."
NEW = "If a Terrain is already in play at the current battlefield, a player may play another Terrain to replace it."


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("review-sources")
    for path in sorted(Path(SHIPPED_SOURCES).iterdir()):
        if path.is_file():
            shutil.copy(path, folder / path.name)
    assert OLD in (folder / FILE).read_text(encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def engine(sources: Path, index_copy: Callable[..., Path]) -> Engine:
    return Engine.open([sources], index_copy("review-index"))  # the same sources' bytes: opened, not rebuilt


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(engine: Engine, sources: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict]:
    state = tmp_path_factory.mktemp("review-state")
    with preserved_discord_urls():
        async with FakeDiscord() as fake:
            role = fake.new_role("Judges")
            judge = fake.new_member("Ann", roles=[role])
            settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                                state_dir=state, cooldown_seconds=0, rulings_poll_seconds=0.5,
                                sources=(sources,))  # fmt: skip
            bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot, "fake-token"):
                await fake.invoke_command("ruling config judge-role", {"role": role}, user=fake.admin)
                await fake.invoke_command("ruling config audit-channel", {"channel": fake.guild.channel_id},
                                          user=fake.admin)  # fmt: skip
                yield {"fake": fake, "bot": bot, "judge": judge}


async def add_ruling(fake: FakeDiscord, judge: FakeUser, title: str, text: str) -> int:
    opened = await fake.invoke_command("ruling add", {"applies_to": "glossary:terrain"}, user=judge)
    saved = await fake.submit_modal(opened, {"title": title, "text": text})
    content = saved.message["content"]
    assert "Saved ruling #" in content, content
    return int(content.split("ruling #")[1].split(" ")[0])


def reply(rec: InteractionRecord) -> str:
    """What the user was told: the last followup after a deferral, else the response."""
    return text_of(rec.followups[-1]) if rec.followups else text_of(rec.message or {})


def reviews(fake: FakeDiscord, ruling_id: int) -> list[dict]:
    return [m for m in fake.channel_messages() if m["content"].startswith(f"⚠ Ruling `#{ruling_id}`")]


async def reload(fake: FakeDiscord, sources: Path, old: str, new: str) -> InteractionRecord:
    path = sources / FILE
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    rec = await fake.invoke_command("reload", user=fake.owner, timeout=120)
    assert rec.ephemeral and "Reloaded" in rec.message["content"], rec.message
    return rec


async def listed(fake: FakeDiscord, **options) -> str:
    rec = await fake.invoke_command("ruling list", options, timeout=15)
    return text_of(rec.message)


async def test_a_rule_change_flags_the_ruling_once_and_judges_clear_it(world, sources: Path) -> None:
    fake, judge = world["fake"], world["judge"]
    kept = await add_ruling(fake, judge, "Two Terrains", "The second Terrain cannot be played; it stays in hand.")
    undone = await add_ruling(fake, judge, "Terrain replaced", "A Terrain cannot be replaced by another.")
    assert "No ruling needs review" in await listed(fake, needs_review=True)

    today = dt.datetime.now(dt.UTC).date().isoformat()
    await reload(fake, sources, OLD, NEW)
    await fake.wait_for(lambda: reviews(fake, kept) and reviews(fake, undone), 30, "the audit posts")
    (post,) = reviews(fake, kept)
    assert f"needs review: the rule it applies to changed on {today}" in post["content"]
    assert f"> {OLD}" in post["content"] and f"> {NEW}" in post["content"]  # before and after, verbatim
    assert fake.allowed_mentions(post) == {"parse": []}

    flagged = await listed(fake, needs_review=True)
    assert "Two Terrains" in flagged and "Terrain replaced" in flagged
    assert f"needs review: the rule it applies to changed on {today}" in flagged
    define = await fake.invoke_command("define", {"term": "terrain"})
    assert f"made before the rule changed on {today}" in text_of(define.message)

    player = fake.new_member("Player")
    refused = await fake.click(post, f"l5r:rs:{kept}", user=player)
    assert "Only this server's judges" in reply(refused)
    await fake.click(post, f"l5r:rs:{kept}", user=judge)
    await fake.wait_for(lambda: "still stands" in fake.messages[int(post["id"])]["content"], 10, "the edited post")
    assert fake.components_of(fake.messages[int(post["id"])]) == []  # the button is gone
    flagged = await listed(fake, needs_review=True)
    assert "Two Terrains" not in flagged and "Terrain replaced" in flagged
    history = text_of((await fake.invoke_command("ruling history", {"ruling": str(kept)})).message)
    assert "confirmed still standing by Ann" in history

    await asyncio.sleep(1.5)  # polls in between post nothing again
    assert len(reviews(fake, kept)) == 1 and len(reviews(fake, undone)) == 1

    await reload(fake, sources, NEW, OLD)  # the change is undone
    await fake.wait_for(lambda: len(reviews(fake, kept)) == 2, 30, "the second post for the confirmed ruling")
    flagged = await listed(fake, needs_review=True)
    assert "Terrain replaced" not in flagged  # back to the text it was made on: cleared by itself
    assert "Two Terrains" in flagged  # confirmed on the new text: the old one is a change for it
    assert len(reviews(fake, undone)) == 1
    nothing = await fake.invoke_command("ruling stands", {"ruling": str(undone)}, user=judge)
    assert f"Ruling #{undone} needs no review" in reply(nothing)
    done = await fake.invoke_command("ruling stands", {"ruling": str(kept)}, user=judge)
    assert f"Ruling #{kept} **Two Terrains** still stands" in reply(done)
    assert "No ruling needs review" in await listed(fake, needs_review=True)
