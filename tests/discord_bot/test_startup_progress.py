"""``python -m bot run`` on a first start logs the index build's stages (stage, counts, seconds) before it
connects, so a slow start shows what it is doing (issue 19)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fakediscord import FakeDiscord
from fakediscord.process import BotProcess

from glossary.loader import SHIPPED_SOURCES

pytestmark = pytest.mark.asyncio

SMALL = SHIPPED_SOURCES / "003_d8672a9bda4ff19e.txt"  # the smallest shipped page: builds in seconds


async def test_a_first_start_logs_the_build_stages(tmp_path: Path) -> None:
    env = {"L5R_INDEX_DIR": str(tmp_path / "empty-index"), "L5R_SOURCES": str(SMALL), "L5R_EMBEDDING_MODEL": "off"}
    async with FakeDiscord() as fake, BotProcess(fake, tmp_path, env) as bot:
        await bot.wait_healthy()
    log = bot.log_text()
    for stage, line in (
        ("parsing", "index: parsing 1 source file"),
        ("indexing", "index: indexing 18 entries"),
        ("word arrays", "index: computing the word arrays"),
    ):
        assert f"] bot.startup: {line}" in log, log[-3000:]
        assert re.search(rf"bot\.startup: index: {stage} done, (\d+) of \1 in \d+\.\d s$", log, re.M), stage
    assert log.index("index: indexing 18 entries") < log.index("has connected to Gateway")  # before it connects
    assert "Traceback" not in log
