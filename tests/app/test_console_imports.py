"""The console path (``python -m bot`` without a token) never imports discord."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_console_answers_without_importing_discord(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    env.update(L5R_INDEX_DIR=str(tmp_path / "ix"), DISCORD_TOKEN="")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot", "ask", "/define target"],
        cwd=tmp_path,  # no .env here
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "A special procedure that involves designating" in proc.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert "bot.app.renderers.text" in imported and "index.engine" in imported  # the import log is really there
    assert not [name for name in imported if name == "discord" or name.startswith("discord.")]
    assert not [name for name in imported if name.startswith("bot.discord_bot")]  # nor the discord.py package
