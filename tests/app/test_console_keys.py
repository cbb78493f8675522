"""The console at a terminal, driven with keys in a pseudo-terminal (pexpect): Tab completion, Ctrl-C,
Up through a history kept across runs, Ctrl-D.

Waits are for what the console prints, never for time (generous deadlines: the machine may be loaded).
The prompt is drawn by cursor moves, so the tests wait for ``l5r>`` and read what was typed from the
history file, which holds exactly the lines submitted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest

from bot.app.console_prompt import HISTORY_FILE

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60  # seconds; a healthy console answers in well under one
TARGET = "glossary:target]"  # the last line of the /define target answer


@pytest.fixture(scope="module")
def index_dir(index_copy: Callable[..., Path]) -> Path:
    return index_copy("index", words_only=True)  # words only (L5R_EMBEDDING_MODEL=off below)


@pytest.fixture
def start(index_dir: Path, tmp_path: Path) -> Iterator:
    """Start the console (``python -m bot``, no token) on a terminal, its state in ``tmp_path / "state"``."""
    children: list[pexpect.spawn] = []

    def spawn(state_dir: Path | None = None) -> pexpect.spawn:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "L5R_", "SHARD_", "XDG_"))}
        env.update(
            PYTHONPATH=str(ROOT),
            L5R_INDEX_DIR=str(index_dir),
            L5R_EMBEDDING_MODEL="off",
            L5R_STATE_DIR=str(state_dir or tmp_path / "state"),
            TERM="xterm",
            PROMPT_TOOLKIT_NO_CPR="1",  # pexpect's terminal does not answer "where is the cursor?"
        )
        child = pexpect.spawn(
            sys.executable,
            ["-m", "bot"],
            env=env,
            cwd=str(tmp_path),  # no .env here
            timeout=WAIT,
            dimensions=(40, 120),
            encoding="utf-8",
            codec_errors="replace",
        )
        children.append(child)
        child.expect_exact("l5r>")
        return child

    yield spawn
    for child in children:
        child.close(force=True)


def history(tmp_path: Path) -> list[str]:
    """The lines submitted, oldest first, as the history file keeps them."""
    text = (tmp_path / "state" / HISTORY_FILE).read_text(encoding="utf-8")
    return [line[1:] for line in text.splitlines() if line.startswith("+")]


def quits_with_zero(child: pexpect.spawn) -> None:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "Traceback" not in (child.before or "")


def test_tab_completes_the_command(start, tmp_path: Path) -> None:
    child = start()
    child.send("/def")
    child.send("\t")  # one command starts so: it is written out, with the space
    child.expect_exact("ine")  # the screen is redrawn from where the line changed
    child.send("target\r")
    child.expect_exact(TARGET)
    child.expect_exact("l5r>")
    assert history(tmp_path) == ["/define target"]
    child.send("\x04")
    quits_with_zero(child)


def test_tab_offers_terms_and_a_second_tab_takes_the_first(start, tmp_path: Path) -> None:
    child = start()
    child.send("/define targ")
    child.send("\t")  # two names start so: the menu opens with both (Target, then Targeting paradoxes)
    child.expect_exact("glossary:targeting-paradoxes")  # each one's entry id beside it; the second row is drawn
    child.send("\t")
    child.send("\r")
    child.expect_exact(TARGET)
    child.expect_exact("l5r>")
    assert history(tmp_path) == ["/define Target"]


def test_ctrl_c_clears_the_line_and_the_console_goes_on(start, tmp_path: Path) -> None:
    child = start()
    child.send("/define terr")
    child.send("\x03")
    child.expect_exact("l5r>")  # a fresh prompt
    child.send("/define target\r")
    child.expect_exact(TARGET)
    child.expect_exact("l5r>")
    assert history(tmp_path) == ["/define target"]  # the cleared line was not run, nor kept
    child.sendline("quit")
    quits_with_zero(child)


def test_history_is_kept_across_runs(start, tmp_path: Path) -> None:
    first = start()
    first.send("/define target\r")
    first.expect_exact(TARGET)
    first.expect_exact("l5r>")
    first.send("quit\r")
    quits_with_zero(first)

    second = start()
    second.send("\x1b[A\x1b[A")  # Up, Up: past "quit" to the command of the last run
    second.expect_exact("/define target")
    second.send("\r")
    second.expect_exact(TARGET)
    second.expect_exact("l5r>")
    assert history(tmp_path) == ["/define target", "quit", "/define target"]


def test_ctrl_d_quits_with_status_zero(start) -> None:
    child = start()
    child.send("\x04")
    quits_with_zero(child)


def test_a_state_folder_that_cannot_be_written_keeps_history_for_the_session(start, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    child = start(blocker / "state")
    assert "history is kept for this session only" in child.before
    child.send("/define target\r")
    child.expect_exact(TARGET)
    child.expect_exact("l5r>")
    child.send("\x1b[A")
    child.expect_exact("/define target")  # Up still works, from memory
    child.send("\x03\x04")  # clear the recalled line, then quit
    quits_with_zero(child)
