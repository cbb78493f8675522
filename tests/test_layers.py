"""The layers are enforced by import-linter (contracts in ``.importlinter``), not by convention.

The first test runs the real contracts over the real code; the second shows they can fail, by adding one
forbidden import to a copy of the packages (a parser importing the application) and expecting the tool
to name it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("glossary", "index", "bot")
LINT = "from importlinter.cli import lint_imports_command; import sys; sys.exit(lint_imports_command())"


def lint(where: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LINT, "--no-cache"],
        cwd=where,
        env={"PYTHONPATH": str(where), "PATH": "/usr/bin:/bin", "HOME": str(where)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def copy_code(to: Path) -> None:
    """The Python files of the packages and the contracts (not the model or the corpus)."""
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            target = to / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    shutil.copyfile(ROOT / ".importlinter", to / ".importlinter")


def test_the_code_keeps_every_layer_contract(tmp_path: Path) -> None:
    copy_code(tmp_path)
    done = lint(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_parser_importing_the_application_breaks_the_layers(tmp_path: Path) -> None:
    copy_code(tmp_path)
    (tmp_path / "glossary" / "upward.py").write_text("import bot.app.answer  # noqa: F401\n", encoding="utf-8")
    (tmp_path / "index" / "query" / "chat.py").write_text("import discord  # noqa: F401\n", encoding="utf-8")
    done = lint(tmp_path)
    assert done.returncode != 0
    assert "glossary.upward -> bot.app.answer" in done.stdout
    assert "index.query.chat -> discord" in done.stdout
