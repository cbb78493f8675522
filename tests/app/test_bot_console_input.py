"""The console on odd input: blank lines, very long lines, emoji, mentions, control characters,
unknown commands, end of input, Ctrl-C and a closed pipe. Never a traceback."""

from __future__ import annotations

import io
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.app.console import Console
from bot.app.judge import Judge
from index.engine import Engine

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def index_dir(index_copy: Callable[..., Path]) -> Path:
    return index_copy("index")  # the subprocesses below open it (and keep their state beside it)


@pytest.fixture(scope="module")
def console(index_dir: Path) -> Console:
    engine = Engine.open(None, index_dir)
    yield Console(Judge(engine))
    engine.close()


def bot_env(index_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "L5R_", "SHARD_"))}
    env.update(PYTHONPATH=str(ROOT), L5R_INDEX_DIR=str(index_dir))
    return env


def test_blank_lines_print_nothing(console: Console) -> None:
    assert console.answer("") == ""
    assert console.answer("   \t ") == ""


def test_five_thousand_characters_is_an_answer_not_an_error(console: Console) -> None:
    out = console.answer("/ask " + "terrain " * 625)
    assert out.startswith("Rules for: terrain terrain")
    assert "1. Terrain — L5R Comprehensive Rules" in out
    assert console.answer("x" * 5000).startswith("Rules for: " + "x" * 20)


def test_emoji_and_mentions_are_shown_back_as_typed(console: Console) -> None:
    assert console.answer("/define 🐉🔥").startswith("No entry for “🐉🔥”\n")
    out = console.answer("/ask @everyone is a terrain an enemy card")
    assert out.startswith("Rules for: @everyone is a terrain an enemy card\n")
    assert "\u200b" not in out  # Discord's mention escape is undone for the terminal
    assert console.answer("/changes since:`20*x*`") == (
        "Error: since must be a date like 2008-01-31 (or 2008-01, or 2008); got “`20*x*`”."
    )


def test_control_characters_are_dropped(console: Console) -> None:
    out = console.answer("/define \x00zzq\x1bxv\x07")
    assert out.startswith("No entry for “zzq xv”\n")  # each control character became one word break
    assert not any(ch in out for ch in "\x00\x1b\x07")


def test_unknown_command_and_end_of_input(console: Console) -> None:
    assert console.answer("/frobnicate now").startswith("Unknown command /frobnicate.")
    out = io.StringIO()
    assert console.loop(io.StringIO("/define target"), out, interactive=False) == 0  # no final newline
    assert out.getvalue().startswith("Target\n")


def test_ask_with_nothing_to_ask_is_a_usage_error(index_dir: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "ask", ""], env=bot_env(index_dir), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("Error: give a command")
    assert "Traceback" not in proc.stderr


def test_closed_output_pipe_is_quiet(index_dir: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "ask", "/changes"],
        env=bot_env(index_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # like `| head -c 10`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


def _read_until(fd: int, marker: bytes, timeout: float) -> bytes:
    out = b""
    end = time.monotonic() + timeout
    while marker not in out and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out


def _wait_until_blocked_reading(pid: int, timeout: float) -> None:
    """Wait until the child sleeps in readline's select() on the terminal.

    The prompt is written just before that select(); a Ctrl-C landing in between is only noticed
    when the next key arrives (CPython's readline checks for signals when select() is interrupted),
    so on a loaded machine the key must not be sent while the child is still on its way there.
    Where /proc is not available the key is sent as soon as the prompt shows.
    """
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            wchan = Path(f"/proc/{pid}/wchan").read_text()
        except OSError:
            return
        if "poll" in wchan or "select" in wchan:
            return
        time.sleep(0.01)


def _wait_for_exit(pid: int, fd: int, timeout: float) -> tuple[int, int, bytes]:
    """Wait for the child to exit, reading all it prints meanwhile (every byte is checked for a traceback,
    and a child never blocks writing to a terminal nobody reads). The deadline is generous because
    interpreter shutdown is slow on a loaded machine; a healthy console exits well within it."""
    out = b""
    closed = False
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if not closed:  # what the child wrote just before exiting
                out += _read_until(fd, b"\0never printed\0", 0.2)
            return done, status, out
        if closed:
            time.sleep(0.05)
            continue
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:  # the child closed the terminal (EIO): it is exiting
                closed = True
    return 0, 0, out


def test_terminal_ctrl_d_ends_quietly(index_dir: Path, tmp_path: Path) -> None:
    """Ctrl-D at the terminal prompt: exit 0, no traceback (Ctrl-C clears the line: test_console_keys.py)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the console on a terminal
        # A background job inherits SIGINT ignored, and Python keeps it ignored: restore a terminal's default.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        # The history file goes to tmp_path; the prompt asks the terminal where its cursor is, and this
        # test's terminal does not answer.
        env = {**bot_env(index_dir), "L5R_STATE_DIR": str(tmp_path), "PROMPT_TOOLKIT_NO_CPR": "1"}
        os.execve(sys.executable, [sys.executable, "-m", "bot"], env)
    try:
        seen = _read_until(fd, b"l5r>", 60)  # the prompt draws its trailing space by moving the cursor
        assert b"l5r>" in seen
        os.write(fd, b"/define target\n")
        seen = _read_until(fd, b"glossary:target]", 30)
        if b"l5r>" not in seen.partition(b"glossary:target]")[2]:  # the next prompt may come in the same read
            seen += _read_until(fd, b"l5r>", 10)
        assert b"Target" in seen
        _wait_until_blocked_reading(pid, 30)
        os.write(fd, b"\x04")
        done, status, rest = _wait_for_exit(pid, fd, 60)
        assert done, "the console did not exit"
        assert os.waitstatus_to_exitcode(status) == 0
        assert b"Traceback" not in rest
    finally:
        os.close(fd)
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def test_help_examples_print_without_markdown_code_marks(console: Console) -> None:
    out = console.answer("/help")
    assert "\n/define target\n" in out
    assert "`" not in out
    assert "house rulings" not in out  # none loaded here


def test_a_trailing_date_is_the_day_asked_about_as_the_usage_line_reads(console: Console) -> None:
    """"/banned [card] [as_of]": a judge typing "/banned moshi eihime 2016-01-01" got "not named on the banned
    list" (the date was read as part of the name). A trailing date is the day asked about, with or without a
    card; in /ask it stays part of the question."""
    before = console.answer("/banned moshi eihime 2016-01-01")
    assert before.startswith("Not yet banned on 2016-01-01: Moshi Eihime\n"), before
    assert console.answer("/banned moshi eihime as_of:2016-01-01") == before
    assert "Added to the list after 2016-01-01, so left out: Moshi Eihime" in console.answer("/banned 2016-01-01")
    assert console.answer("/define terrain 2008-01-01").startswith("Terrain — as of 2008-01-01\n")
    assert console.answer("/ask what changed after 2008-05-01").startswith("Rules for: what changed after 2008-05-01")
