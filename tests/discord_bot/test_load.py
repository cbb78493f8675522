"""Load against the real bot process through the fake Discord (loopback only, bounded).

A burst of 1,000 interactions created at the same moment, and a short steady rate with /reload in
the middle. What is asserted holds on any machine, however loaded: every interaction is answered
exactly once (a first response accepted within Discord's 3 seconds, then the answer), told "busy",
or skipped because it had expired (the bot logs ``outcome=expired``; nothing is accepted after the
deadline); some are answered; interactions delivered already expired (the fake's ``age=``) get
nothing; no answer mixes two index builds and the new build does answer. How many are answered in
time and how fast is the machine's business: those figures are benchmarks/load.py's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord
from fakediscord.load import LoadRun, Sent, Workload, expired_by_user, write_rulings
from fakediscord.process import BotProcess

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.load]

ROOT = Path(__file__).resolve().parents[2]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(
    tmp_path_factory: pytest.TempPathFactory, index_copy: Callable[..., Path]
) -> AsyncIterator[tuple[FakeDiscord, BotProcess, Path]]:
    work = tmp_path_factory.mktemp("load")
    index_copy(work / "bot" / "index")  # its vector cache: the bot's start embeds only the house rulings
    rulings = work / "rulings"
    write_rulings(rulings, "alpha")
    async with FakeDiscord() as fake:
        env = {"L5R_HOUSE_RULINGS": str(rulings), "OWNER_IDS": str(fake.owner.id), "LOG_FORMAT": "json"}
        async with BotProcess(fake, work / "bot", env) as bot:
            await bot.wait_healthy(120)
            yield fake, bot, rulings
    tracebacks = [line for line in bot.log_text().splitlines() if "Traceback" in line]
    assert tracebacks == [], "\n".join(t[-3000:] for t in tracebacks[:3])


def workload(fake: FakeDiscord, users: int) -> Workload:
    data = json.loads((ROOT / "benchmarks" / "eval_questions.json").read_text(encoding="utf-8"))
    return Workload(fake, [i["q"] for i in data["search"]], [i["q"] for i in data["define"]], users=users)


async def test_a_burst_of_1000_interactions_each_answered_once_busy_or_expired(served) -> None:
    fake, bot, _ = served
    load = LoadRun(fake, workload(fake, 1000))
    await load.burst(1000, stale=20)
    await load.settle(180)
    assert load.violations(expired_by_user(bot.log_text())) == [], load.outcomes()
    assert load.outcomes()["answered"] > 0, load.outcomes()
    assert sum(s.stale for s in load.sent) == 20
    status, health = await bot.health()
    assert status == 200, health


async def test_steady_load_with_a_reload_in_the_middle_mixes_no_builds_and_the_new_build_answers(served) -> None:
    fake, bot, rulings = served
    load = LoadRun(fake, workload(fake, 200))
    await load.steady(50, 6, reload_at=3, rulings=rulings)
    # However long the reload takes on this machine (the benchmark's business), it answers; if the
    # /reload itself expired in the crowd, it is sent again.
    reload = await load.ensure_reloaded(300)
    assert "Reloaded" in FakeDiscord.text_of(reload.message), FakeDiscord.text_of(reload.message)
    # After the reload replied, /define terrain shows the new build: ask until one is answered.
    user = fake.new_member("after-reload")
    for _ in range(120):
        rec = await fake.invoke_command("define", {"term": "terrain"}, user=user, settle=False)
        load.sent.append(Sent("define terrain", rec, "after reload"))
        await load.settle(30)
        if load.builds_seen()["beta"]:
            break
        await asyncio.sleep(1)
    await load.settle(180)
    assert load.violations(expired_by_user(bot.log_text())) == [], load.outcomes()
    assert load.build_problems() == []
    seen = load.builds_seen()
    assert seen["beta"] > 0, (seen, load.outcomes())  # the new build answers, each answer whole


async def test_the_build_check_catches_a_mixed_or_missing_ruling() -> None:
    """The checker itself: an answer with one build's title and the other's text, or none, is reported."""
    fake = FakeDiscord()
    load = LoadRun(fake, Workload.__new__(Workload))
    texts = {
        "whole alpha": "**Terrain marker ruling alpha** ... Marker text alpha: a ruling",
        "mixed": "**Terrain marker ruling alpha** ... Marker text beta: a ruling",
        "none": "Terrain: the entry without any house ruling",
    }
    for i, text in enumerate(texts.values()):
        rec = fake.create_interaction()
        rec.callbacks.append({"type": 4})
        rec.original_message_id = 1000 + i
        fake.messages[1000 + i] = {"content": text, "embeds": [], "flags": 0}
        load.sent.append(Sent("define terrain", rec, "steady"))
    problems = load.build_problems()
    assert len(problems) == 2
    assert "texts ['beta'], titles ['alpha']" in problems[0] and "texts [], titles []" in problems[1]


async def test_the_outcome_check_catches_a_lost_a_doubled_and_a_late_answer() -> None:
    """The checker itself: no response without an ``expired`` log line, two first responses, an answer to
    an interaction delivered expired and an acknowledgement never followed by the answer are reported;
    a logged expiry and a plain answer are not."""
    from collections import Counter

    fake = FakeDiscord()
    load = LoadRun(fake, Workload.__new__(Workload))
    users = [fake.new_member(f"u{i}") for i in range(6)]

    def sent(i: int, callbacks: list[dict], *, stale: bool = False, age: float = 10.0, message: str = "") -> None:
        rec = fake.create_interaction()
        rec.user = users[i]
        rec.created_at -= age
        rec.callbacks.extend(callbacks)
        if callbacks:
            rec.callback_at = rec.created_at + 1.0
        if message:
            rec.original_message_id = 2000 + i
            fake.messages[2000 + i] = {"content": message, "embeds": [], "flags": 0}
        load.sent.append(Sent("define", rec, "burst", stale=stale))

    sent(0, [{"type": 4}], message="Target: an answer")  # fine
    sent(1, [])  # no response, logged expired: fine
    sent(2, [])  # no response, nothing logged: lost
    sent(3, [{"type": 4}, {"type": 4}], message="Target: twice")
    sent(4, [{"type": 4}], stale=True, message="Target: answered though expired on arrival")
    sent(5, [{"type": 5}], message="")  # deferred, never followed up
    found = load.violations(Counter({users[1].id: 1}))
    assert len(found) == 4, found
    assert "lost" in found[-1] and str(users[2].id) in found[-1]
    assert any("2 first responses" in f for f in found) and any("delivered expired" in f for f in found)
    assert any("never answered" in f for f in found)
