"""``python -m index define ""`` and friends: empty input is a usage error, not "No entry found." (issue 8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from glossary.loader import SHIPPED_SOURCES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["define", ""], "python -m index: error: define: the term is empty"),
        (["banned", ""], "python -m index: error: banned: the card is empty"),
        (["define", "  ", "\t"], "python -m index: error: define: the term is empty"),
        (["banned", "", "--json"], "python -m index: error: banned: the card is empty"),
        (["search", " "], "python -m index: error: search: the question is empty"),
        (["section", ""], "python -m index: error: section: the ref is empty"),
    ],
)
def test_empty_input_exits_2_with_one_line(tmp_path: Path, argv: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "index", *argv, "--index-dir", str(tmp_path / "ix"), "--sources", str(SHIPPED_SOURCES)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""  # no "No entry found." / "Not on the banned list"
    assert proc.stderr.splitlines() == [message]
    assert not (tmp_path / "ix").exists()  # refused before any index was opened or built
