"""``l5r-judge``, the installed command: the same program as ``python -m bot``, from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.app.judge import version

SCRIPT = Path(sys.executable).with_name("l5r-judge")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    env["L5R_INDEX_DIR"] = str(cwd / "index")
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_version_is_the_packages(tmp_path: Path) -> None:
    assert SCRIPT.is_file(), "pip install -e . installs the l5r-judge command beside the interpreter"
    done = run("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"l5r-judge {version()}"
    assert version() != "unknown"


def test_answers_from_any_folder(tmp_path: Path) -> None:
    done = run("ask", "/define target", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-1000:]
    assert done.stdout.startswith("Target\n") and "A special procedure that involves designating" in done.stdout
