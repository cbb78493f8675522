"""The console front end, end to end through the real Engine on the shipped corpus."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.app.console import Console
from bot.app.judge import Judge
from index.engine import Engine

ROOT = Path(__file__).resolve().parents[2]
TARGET_PARAGRAPH = (
    "A special procedure that involves designating one or more cards or other game entity (such as a Province or "
    "player). The word “target” must appear as a verb or an adjective for the procedure to be considered targeting "
    "-- just “choosing” something is not targeting."
)


@pytest.fixture(scope="module")
def console(default_index: Path) -> Console:
    engine = Engine.open(None, default_index)
    yield Console(Judge(engine))
    engine.close()


@pytest.fixture
def bot_dir(tmp_path: Path, index_copy: Callable[..., Path]) -> Path:
    """A working folder for ``python -m bot`` with the default index already built in ``index`` (not the
    build under test here: a child embedding every paragraph again took most of a minute per test)."""
    index_copy(tmp_path / "index")
    return tmp_path


def run_bot(args: list[str], tmp_path: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "L5R_", "SHARD_"))}
    env.update(PYTHONPATH=str(ROOT), L5R_INDEX_DIR=str(tmp_path / "index"))
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=tmp_path,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ask_once_define_target(bot_dir: Path) -> None:
    proc = run_bot(["ask", "/define target"], bot_dir)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("Target\n======\n")
    assert TARGET_PARAGRAPH in out
    history = "Added 2007-09-20 (paragraph 2) · Added 2007-09-20 (paragraph 3) · Added 2007-09-25 (paragraph 4)"
    assert f"History: {history}" in out
    assert "Citation: L5R Comprehensive Rules — Glossary T › Target, lines 11-15 · 000_99c7513ab738c7d1.txt" in out
    assert "http://rules.l5r.com/Glossary_T#Target" in out


def test_piped_stdin_reads_commands_until_eof(bot_dir: Path) -> None:
    proc = run_bot([], bot_dir, stdin="/banned moshi eihime\n\n/define nosuchthingqq\nquit\n/about\n")
    assert proc.returncode == 0, proc.stderr
    assert "Moshi Eihime is banned in The Obsidian Hand Ruleset." in proc.stdout
    assert "Category: Personalities\nBanned on: 2016-02-15" in proc.stdout
    assert "No entry for “nosuchthingqq”" in proc.stdout
    assert "About the L5R rules judge" not in proc.stdout  # after quit nothing more is read
    assert "l5r>" not in proc.stdout  # no prompt when a program is typing


def test_unknown_command_one_line_and_exit_code(bot_dir: Path) -> None:
    proc = run_bot(["ask", "/frobnicate", "x"], bot_dir)
    assert proc.returncode == 1
    assert proc.stdout.startswith("Unknown command /frobnicate. Commands: /define, /ask,")
    assert "Traceback" not in proc.stderr


def test_commands(console: Console) -> None:
    terrain = console.answer("/ask is a terrain an enemy card")
    assert terrain.startswith("Rules for: is a terrain an enemy card")
    assert "1. Terrain — L5R Comprehensive Rules" in terrain
    assert "A Terrain is not in any side or army; thus, it is never an enemy or opposing card." in terrain
    rule = console.answer("/rule cardinal rule 2")
    assert rule.startswith("Cardinal Rule 2: Cards vs. Cards\n")
    assert "follow the most recent printing of the card" in rule
    changes = console.answer("/changes since:2008-01-01 until:2008-12-31 source:glossary")
    assert "2008-05-21 · Changed · Glossary T › Terrain" in changes
    assert "2007-" not in changes and "2015-" not in changes
    assert console.answer("/about").startswith("About the L5R rules judge")
    assert "/define target" in console.answer("/help")
    assert console.answer("define term:target").startswith("Target\n")
    assert console.answer("is a terrain an enemy card") == terrain  # a bare question is /ask
    assert console.answer("/open glossary:terrain").startswith("Terrain\n")
    whole = console.answer("/banned")
    assert whole.startswith("Banned list — The Obsidian Hand Ruleset\n")
    assert "\nStrongholds\n- Gates of the Second City\n- House of the Black Lion — banned 2015-10-05\n" in whole
    assert "Citation: The Obsidian Hand Ruleset › Banned Cards (004_f05ef39847fd66e3.txt, lines 115-151)" in whole


def test_a_source_is_accepted_by_its_key_its_name_or_a_part_of_either(console: Console) -> None:
    for typed in ("obsidian-hand", "Obsidian_Hand", "obsidianhand", "OBSIDIAN"):  # an option value is one word
        out = console.answer(f"/changes since:2016-01-01 source:{typed}")
        assert out.startswith("Rule changes — The Obsidian Hand Ruleset, since 2016-01-01"), typed
    assert console.answer("/changes source:comprehensive").startswith("Rule changes — L5R Comprehensive Rules")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("/changes since:last-week", "Error: since must be a date like 2008-01-31"),
        ("/changes since:2008-13-40", "Error: since: 2008-13-40 is not a real date."),
        ("/changes since:2008-02-30", "Error: since: 2008-02-30 is not a real date."),
        ("/changes since:2009 until:2008", "Error: since (2009-01-01) is after until (2008-12-31)."),
        ("/changes source:nowhere", "Error: source must be one of: glossary (L5R Comprehensive Rules); obsidian-hand"),
        ("/define", "Error: Please give a term."),
    ],
)
def test_bad_input_is_one_clear_line(console: Console, line: str, message: str) -> None:
    out = console.answer(line)
    assert out.startswith(message)
    assert "\n" not in out


def test_loop_stops_at_quit(console: Console) -> None:
    out = io.StringIO()
    assert console.loop(io.StringIO("/define target\nexit\n/define terrain\n"), out, interactive=False) == 0
    assert out.getvalue().startswith("Target\n")
    assert "\nTerrain\n" not in out.getvalue()


def test_bot_mode_unreachable_api_is_one_error_line_without_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "L5R_", "SHARD_"))}
    env.update(PYTHONPATH=str(ROOT), DISCORD_TOKEN="tok-SECRET-123", DISCORD_API_BASE="http://127.0.0.1:9/api/v10")
    proc = subprocess.run(
        [sys.executable, "-m", "bot"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "could not reach http://127.0.0.1:9/api/v10" in errors[0]
    assert "tok-SECRET-123" not in proc.stderr + proc.stdout and "Traceback" not in proc.stderr
