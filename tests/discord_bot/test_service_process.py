"""The bot as a service: the real ``python -m bot run`` in a child process against the fake Discord.

Stopping on SIGTERM/SIGINT (gateway closed with 1000, answers in flight finished, exit 0 quickly),
refusing to run without a token, the health endpoint and metrics, structured logs that hold no
token and no user text, and recovery from gateway faults without a restart.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fakediscord import FakeDiscord
from fakediscord.process import ROOT, BotProcess, get_json

from index.engine import Engine

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def index_dir(index_copy: Callable[..., Path]) -> Path:
    """One index for the module, built already, so each child process opens it instead of building."""
    return index_copy("service")


def bot_process(fake: FakeDiscord, tmp_path: Path, index_dir: Path, **env: str | None) -> BotProcess:
    return BotProcess(fake, tmp_path, {"L5R_INDEX_DIR": str(index_dir), "COOLDOWN_SECONDS": "0", **env})


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_signal_closes_the_gateway_with_1000_finishes_the_answer_in_flight_and_exits_0(
    tmp_path: Path, index_dir: Path, signum: signal.Signals
) -> None:
    async with FakeDiscord() as fake:
        bot = await bot_process(fake, tmp_path, index_dir).start()
        try:
            await bot.wait_healthy()
            fake.inject_delay(1, "callback", seconds=1.0)  # the answer is still on its way when the signal comes
            rec = await fake.invoke_command("define", {"term": "target"}, settle=False)
            await fake.wait_for(lambda: bool(fake.delayed), 5, "the bot's answer to reach the fake")
            started = time.monotonic()
            bot.send_signal(signum)
            code = await bot.wait(timeout=10)
            took = time.monotonic() - started
        finally:
            await bot.stop()
        log = bot.log_text()
        assert code == 0, log[-2000:]
        assert took < 5.0, f"stopping took {took:.1f} s"
        assert rec.response_type == 4 and rec.message["embeds"][0]["title"] == "Target"  # finished, not dropped
        assert fake.close_codes == [1000], fake.close_codes  # closed by the bot, cleanly
        assert f"{signum.name} received" in log
        assert "Traceback" not in log


async def test_run_without_a_token_exits_2_with_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "run"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr == "error: DISCORD_TOKEN is not set (set it, or use `python -m bot console`)\n"
    assert proc.stdout == ""


async def test_health_endpoint_metrics_and_health_command(tmp_path: Path, index_dir: Path) -> None:
    async with FakeDiscord() as fake:
        async with bot_process(fake, tmp_path, index_dir) as bot:
            body = await bot.wait_healthy()
            entries = len(Engine.open(None, index_dir).corpus.entries)
            assert body["status"] == "ok" and body["problems"] == []
            assert body["index"] == {"loaded": True, "entries": entries, "built_at": body["index"]["built_at"]}
            shard = body["gateway"]["shards"]["0"]
            assert shard["connected"] is True and 0 <= shard["heartbeat_ack_age_s"] < 60

            rec = await fake.invoke_command("define", {"term": "target"})
            assert rec.message["embeds"][0]["title"] == "Target"
            await fake.invoke_command("changes list", {"since": "not a date"})
            await asyncio.sleep(0.2)  # the answer's line and counters are written just after the reply
            metrics = await bot.metrics()
            assert 'l5r_answers_total{command="define",outcome="ok"} 1.0' in metrics
            assert 'l5r_answers_total{command="changes list",outcome="user_error"} 1.0' in metrics
            assert 'l5r_answer_latency_seconds_count{command="define"} 1.0' in metrics
            assert re.search(r"^l5r_first_response_age_seconds_bucket\{le=\"3\.0\"\} 2\.0$", metrics, re.M)
            assert f"l5r_index_entries {float(entries)}" in metrics
            assert 'l5r_gateway_connected{shard="0"} 1.0' in metrics

            health = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "bot", "health"],
                cwd=tmp_path,
                env=bot.env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert health.returncode == 0, health.stderr
            assert health.stdout.startswith(f"healthy: {entries} entries")
        # Stopped: nothing answers any more, and the health command says so in one line.
        assert get_json(bot.health_url + "/healthz") == (0, None)
        down = subprocess.run(
            [sys.executable, "-m", "bot", "health"], cwd=tmp_path, env=bot.env, capture_output=True, text=True
        )
        assert down.returncode == 1 and down.stderr.startswith("unhealthy: no answer from http://127.0.0.1:")


async def test_json_logs_one_line_per_answer_without_token_or_user_text(tmp_path: Path, index_dir: Path) -> None:
    # four update records named by their days lead the answer, so it has several pages (3 a page) and a Next
    # button whatever the ranking does with the rest; an answer that says no rule stands out is one page
    secret_question = "zebra quokka updates of 10/05/2015, 10/20/2015, 10/25/2015 and 10/27/2015"
    menu_text = "wombat platypus terrain"
    async with FakeDiscord(valid_tokens={"fake-token-0123456789"}) as fake:
        bot = bot_process(
            fake, tmp_path, index_dir, LOG_FORMAT="json", DISCORD_TOKEN="fake-token-0123456789", COOLDOWN_SECONDS=None
        )
        async with bot:
            await bot.wait_healthy()
            asked = await fake.invoke_command("ask", {"question": secret_question})
            await fake.context_menu("Look up rules", fake.user_message(menu_text), user=fake.admin)
            await fake.autocomplete("define", "term", "narwhal")
            nxt = next(c for c in fake.components_of(asked.message) if c.get("label", "").startswith("Next"))
            assert secret_question in nxt["custom_id"]  # the question travels in the button's custom id
            await fake.click(asked.message, nxt["custom_id"], user=fake.other_member)
            await asyncio.sleep(0.3)
    log = bot.log_text()
    lines = [json.loads(line) for line in log.splitlines() if line.strip()]  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    answers = [line for line in lines if line["message"] == "answer"]
    assert [(a["command"], a["outcome"]) for a in answers] == [
        ("ask", "ok"),
        ("Look up rules", "ok"),
        ("button:page", "ok"),
    ]
    assert all(isinstance(a["latency_ms"], float) and a["response_age_ms"] < 3000 for a in answers)
    assert answers[0]["hits"] and answers[0]["user"] == fake.member.id and answers[0]["guild"] == fake.guild.id
    for text in ("fake-token-0123456789", "zebra", "quokka", "wombat", "platypus", "narwhal"):
        assert text not in log, text


async def test_gateway_faults_recover_without_a_restart(tmp_path: Path, index_dir: Path) -> None:
    """RESUME after a dropped socket, a new session after an invalidated one, a 429 on a callback and
    a REST base that hangs: each time the same process goes on answering."""
    async with FakeDiscord() as fake, bot_process(fake, tmp_path, index_dir) as bot:
        await bot.wait_healthy()
        await fake.force_reconnect("close", code=4000)
        await fake.wait_for_resume(1)
        rec = await fake.invoke_command("define", {"term": "target"}, timeout=10)
        assert rec.message["embeds"][0]["title"] == "Target"

        identifies = len(fake.identifies)
        await fake.force_reconnect("invalidate")
        await fake.wait_for(lambda: len(fake.identifies) > identifies, 15, "a new IDENTIFY")
        await bot.wait_healthy()
        rec = await fake.invoke_command("define", {"term": "terrain"}, timeout=10)
        assert rec.message["embeds"][0]["title"] == "Terrain"

        fake.inject_rate_limit(1, "callback", retry_after=0.3)
        rec = await fake.invoke_command("define", {"term": "enemy"})
        assert [c.status for c in fake.calls if f"/{rec.id}/" in c.path] == [429, 200]

        fake.inject_stall(1, "callback", seconds=8.0)
        lost = await fake.invoke_command("define", {"term": "target"}, settle=False)
        await fake.wait_for(lambda: fake.stalled, 5, "the stalled callback")
        rec = await fake.invoke_command("define", {"term": "target"})  # answered while the other hangs
        assert rec.message["embeds"][0]["title"] == "Target"
        assert lost.callbacks == []
        status, body = await bot.health()
        assert status == 200, body
    log = bot.log_text()
    assert '"outcome": "timeout"' in log or "outcome=timeout" in log, log[-3000:]


async def test_a_taken_health_port_stops_the_start_with_one_line(tmp_path: Path, index_dir: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        async with FakeDiscord() as fake:
            bot = BotProcess(fake, tmp_path, {"L5R_INDEX_DIR": str(index_dir)}, health_port=port)
            await bot.start()
            code = await bot.wait(timeout=30)
    errors = [line for line in bot.log_text().splitlines() if "ERROR" in line]
    assert code == 1
    assert len(errors) == 1 and f"could not serve the health endpoint: HEALTH_PORT {port} on 127.0.0.1" in errors[0]
    assert "Traceback" not in bot.log_text()
