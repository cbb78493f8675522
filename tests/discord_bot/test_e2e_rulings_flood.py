"""A flood of ruling autocomplete (any member can type; every keystroke is an interaction) against the real
bot process: a judge's save sent in the middle of it is always confirmed, and no interaction is answered
twice. Three sizes, so a cost that grows faster than the flood shows. Autocomplete may be shed (no choices,
or no response once its window closed); the save may not. Nothing here depends on the machine's speed.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord
from fakediscord.models import FakeUser
from fakediscord.process import BotProcess
from fakediscord.server import InteractionRecord

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.load]

text_of = FakeDiscord.text_of
# The options members type into: a retired-or-active ruling (the listing read), an active one, an event.
TYPED = (("ruling history", "ruling"), ("ruling retire", "ruling"), ("ruling restore", "ruling"),
         ("ruling list", "event"))  # fmt: skip
KEYS = ("t", "te", "ter", "terr", "1", "#1", "x", "Kotei")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(
    tmp_path_factory: pytest.TempPathFactory, index_copy: Callable[..., Path]
) -> AsyncIterator[tuple[FakeDiscord, BotProcess, FakeUser]]:
    work = tmp_path_factory.mktemp("flood")
    index_copy(Path(work) / "bot" / "index")  # built already: the bot opens it instead of embedding every paragraph
    env = {"COOLDOWN_SECONDS": "0", "LOG_FORMAT": "json"}
    async with FakeDiscord() as fake, BotProcess(fake, Path(work) / "bot", env) as bot:
        await bot.wait_healthy(180)
        judge = fake.new_member("judge", manage_guild=True)
        for title, event in (("Terrain after a duel", "Kotei 2026"), ("Terrain in the dynasty row", None)):
            form = await fake.invoke_command("ruling add", {}, user=judge, timeout=30)
            saved = await fake.submit_modal(form, {"title": title, "text": "Text.", "applies": "Terrain",
                                                   "event": event or ""}, timeout=30)  # fmt: skip
            assert "Saved ruling #" in text_of(saved.message), text_of(saved.message)
        retired = await fake.invoke_command("ruling retire", {"ruling": "2"}, user=judge, timeout=30)
        assert "Retired ruling #2" in text_of(retired.message), text_of(retired.message)
        yield fake, bot, judge
    tracebacks = [line for line in bot.log_text().splitlines() if "Traceback" in line]
    assert tracebacks == [], "\n".join(t[-3000:] for t in tracebacks[:3])


async def _flood(fake: FakeDiscord, n: int, members: list[FakeUser]) -> list[InteractionRecord]:
    """``n`` autocomplete interactions sent at once, spread over the members and the options."""
    kinds = itertools.cycle(TYPED)
    keys = itertools.cycle(KEYS)
    users = itertools.cycle(members)

    async def one() -> InteractionRecord:
        name, option = next(kinds)
        return await fake.autocomplete(name, option, next(keys), user=next(users), settle=False)

    return list(await asyncio.gather(*(one() for _ in range(n))))


@pytest.mark.parametrize("size", [100, 500, 1000])
async def test_a_save_sent_during_an_autocomplete_flood_is_always_confirmed(served, size: int) -> None:
    fake, bot, judge = served
    members = [fake.new_member(f"typist-{size}-{i}") for i in range(50)]
    title = f"Saved during a flood of {size}"
    form = await fake.invoke_command("ruling add", {}, user=judge, timeout=30)  # opened before the flood

    async def save() -> InteractionRecord:
        return await fake.submit_modal(form, {"title": title, "text": "Written while members typed."},
                                       settle=False)  # fmt: skip

    before, submitted, after = await asyncio.gather(_flood(fake, size // 2, members), save(),
                                                    _flood(fake, size - size // 2, members))  # fmt: skip
    typed = before + after
    await submitted.wait_until(lambda r: r.settled, 60)
    assert "Saved ruling #" in text_of(submitted.message), text_of(submitted.message)

    # Every keystroke is answered once (choices, possibly none) or not at all (shed, its window closed).
    for rec in typed:
        await rec.wait_until(lambda r: bool(r.callbacks) or time.perf_counter() > r.created_at + 3.5, 30)
    assert [r.describe() for r in [*typed, submitted] if len(r.callbacks) > 1] == []
    refused = [(r.describe(), c.response) for r in [*typed, submitted] for c in r.rejected
               if not (isinstance(c.response, dict) and c.response.get("code") == 10062)]  # fmt: skip
    assert refused == []
    assert all(r.response_type == 8 for r in typed if r.callbacks)

    # Stored exactly once, and the bot still answers afterwards.
    listed = await fake.invoke_command("ruling list", {"private": True}, user=judge, timeout=30)
    assert text_of(listed.message).count(title) == 1, text_of(listed.message)
    status, health = await bot.health()
    assert status == 200, health
