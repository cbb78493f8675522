"""The console, ``ask`` and the bot show a first start's index build (issue 19): ``ask`` on stderr, one line
per stage, with stdout exactly what it is without a build; the bot (``open_engine``) in its log."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app.settings import Settings
from bot.app.startup import open_engine
from glossary.loader import SHIPPED_SOURCES
from index.cli_progress import PREFIX

ROOT = Path(__file__).resolve().parents[2]
SMALL = SHIPPED_SOURCES / "003_d8672a9bda4ff19e.txt"  # the smallest shipped page: builds in seconds


def ask(index_dir: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("L5R_", "DISCORD_"))}
    env.update(L5R_INDEX_DIR=str(index_dir), L5R_SOURCES=str(SMALL), L5R_EMBEDDING_MODEL="off")
    return subprocess.run(
        [sys.executable, "-m", "bot", "ask", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_ask_shows_the_build_on_stderr_and_answers_on_stdout_as_without_it(tmp_path: Path) -> None:
    first = ask(tmp_path / "ix", "/define focus pool")  # an empty index folder: the first start builds
    assert first.returncode == 0, first.stderr
    lines = first.stderr.splitlines()
    assert lines[:3] == [
        f"{PREFIX}parsing 1 source file",
        f"{PREFIX}indexing 18 entries",
        f"{PREFIX}computing the word arrays",
    ]
    assert lines[3].startswith(f"{PREFIX}done in ") and len(lines) == 4

    second = ask(tmp_path / "ix", "/define focus pool")  # built: nothing on stderr, the same answer
    assert second.returncode == 0 and second.stderr == ""
    assert first.stdout == second.stdout and "Focus pool" in first.stdout


def test_the_bot_logs_the_stages_of_a_build(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(index_dir=tmp_path / "ix", sources=(SMALL,), embedding_model="off")
    with caplog.at_level(logging.INFO, logger="bot.startup"):
        open_engine(settings).close()
    said = [r.getMessage() for r in caplog.records if r.name == "bot.startup"]
    assert said[:2] == [
        "index: parsing 1 source file",
        "index: parsing done, 1 of 1 in " + said[1].rsplit(" in ", 1)[1],
    ]
    assert "index: indexing 18 entries" in said and "index: computing the word arrays" in said
    assert any(line.startswith("index: indexing done, 18 of 18 in ") and line.endswith(" s") for line in said)

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="bot.startup"):
        open_engine(settings).close()  # opened, not built: only the parse every start makes
    said = [r.getMessage() for r in caplog.records if r.name == "bot.startup"]
    assert [line.split(",")[0] for line in said] == ["index: parsing 1 source file", "index: parsing done"]
