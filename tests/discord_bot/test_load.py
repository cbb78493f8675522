"""Load against the real bot process through the fake Discord (loopback only, bounded).

A burst of 1,000 interactions created at the same moment, and a short steady rate with /reload
in the middle: every interaction gets exactly one valid first response within Discord's 3
seconds of its creation and then its answer (or the busy reply), none is lost or refused, and
no answer mixes two index builds. The one-minute run with figures is benchmarks/load.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord
from fakediscord.load import LoadRun, Workload, write_rulings
from fakediscord.process import BotProcess

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROOT = Path(__file__).resolve().parents[2]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[FakeDiscord, BotProcess, Path]]:
    work = tmp_path_factory.mktemp("load")
    rulings = work / "rulings"
    write_rulings(rulings, "alpha")
    async with FakeDiscord() as fake:
        env = {"L5R_HOUSE_RULINGS": str(rulings), "OWNER_IDS": str(fake.owner.id)}
        async with BotProcess(fake, work / "bot", env) as bot:
            await bot.wait_healthy(120)
            yield fake, bot, rulings
    assert "Traceback" not in bot.log_text(), bot.log_text()[-3000:]


def workload(fake: FakeDiscord, users: int) -> Workload:
    data = json.loads((ROOT / "benchmarks" / "eval_questions.json").read_text(encoding="utf-8"))
    return Workload(fake, [i["q"] for i in data["search"]], [i["q"] for i in data["define"]], users=users)


async def test_a_burst_of_1000_interactions_each_gets_one_valid_response_in_time(served) -> None:
    fake, bot, _ = served
    load = LoadRun(fake, workload(fake, 1000))
    await load.burst(1000)
    await load.settle(60)
    assert load.problems() == []
    summary = load.summary()
    assert summary["sent"] == 1000 and summary["lost"] == 0
    assert summary["answered"] + summary["busy"] == 1000
    assert summary["first_max_ms"] < 3000
    status, health = await bot.health()
    assert status == 200, health


async def test_steady_load_with_a_reload_in_the_middle_fails_nothing_and_mixes_no_builds(served) -> None:
    fake, _, rulings = served
    load = LoadRun(fake, workload(fake, 200))
    await load.steady(50, 6, reload_at=3, rulings=rulings)
    # On a loaded machine the reload can outlast the run; keep the load on until it has answered, so that
    # answers from after the reload are seen too (the reload's length is the benchmark's business, not this test's).
    assert load.reload is not None
    await load.reload.wait_until(lambda r: r.settled, 120)
    await load.steady(50, 1, phase="after reload")
    await load.settle(60)
    assert load.problems() == []
    assert load.build_problems() == []
    seen = load.builds_seen()
    assert seen["alpha"] > 0 and seen["beta"] > 0, seen  # answers came from both builds, each whole
    assert load.reload is not None and "Reloaded" in FakeDiscord.text_of(load.reload.message)


async def test_the_build_check_catches_a_mixed_or_missing_ruling() -> None:
    """The checker itself: an answer with one build's title and the other's text, or none, is reported."""
    from fakediscord.load import Sent

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
