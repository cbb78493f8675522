"""``python -m index``: every command in text and JSON form, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from glossary.loader import SHIPPED_SOURCES
from index.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ixdir(index_copy: Callable[..., Path]) -> Path:
    ix = index_copy("cli")  # its vector cache: the build below embeds nothing again
    assert main(["build", "--index-dir", str(ix), "--sources", str(SHIPPED_SOURCES)]) == 0
    return ix


def run(capsys: pytest.CaptureFixture[str], ixdir: Path, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--index-dir", str(ixdir), "--sources", str(SHIPPED_SOURCES)])
    out, err = capsys.readouterr()
    return code, out, err


def test_build_prints_stats(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, _ = run(capsys, ixdir, "build", "--json")
    stats = json.loads(out)
    assert code == 0 and stats["entries"] == 146 and stats["rebuilt"] is True


def test_search_json(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, _ = run(capsys, ixdir, "search", "when does a duel stop resolving?", "--json", "--limit", "2")
    rows = json.loads(out)
    assert code == 0 and 1 <= len(rows) <= 2  # only answers close to the best are listed
    assert rows[0]["id"] == "glossary:resolve"
    for key in ("format", "id", "title", "source", "section", "text", "quote", "spans", "changes", "citation", "score"):
        assert key in rows[0]
    row = rows[0]
    assert row["format"] == 2 and "snippet" not in row  # format 2: the quote verbatim plus spans, no Markdown
    assert row["quote"] in row["text"] and "**" not in row["quote"]
    assert "duel" in [row["quote"][a:b].lower() for a, b in row["spans"]]


def test_search_text_with_filters(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, _ = run(capsys, ixdir, "search", "honor", "loss", "--source", "glossary", "--since", "2008-07-01")
    assert code == 0
    assert out.startswith("1. Entering-play Honor loss  [glossary:entering-play-honor-loss]")
    assert "2." not in out


def test_define_text_and_json(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, _ = run(capsys, ixdir, "define", "targt")
    assert code == 0 and out.startswith("Target  [glossary:target]")
    code, out, _ = run(capsys, ixdir, "define", "ninjitsu", "--json")
    rows = json.loads(out)
    # Three abilities are named Ninjitsu: all three are the answer, told apart by their labels.
    assert code == 0 and [(r["match"], r["id"]) for r in rows] == [
        ("entry", "obsidian-hand:ability-ninjitsu-open"),
        ("entry", "obsidian-hand:ability-ninjitsu-reaction"),
        ("entry", "obsidian-hand:ability-ninjitsu-battle"),
    ]
    code, out, _ = run(capsys, ixdir, "define", "zzzzqq")
    assert code == 0 and out.strip() == "No entry found."


def test_section_changes_banned(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, _ = run(capsys, ixdir, "section", "II.F", "--json", "--limit", "1")
    assert [r["id"] for r in json.loads(out)] == ["obsidian-hand:ii-f-deck-constructions-and-restrictions"]
    code, out, _ = run(capsys, ixdir, "changes", "--since", "2008-05-01", "--source", "glossary")
    lines = out.splitlines()
    assert len(lines) == 4 and lines[1].startswith("3008-05-30  changed    Resolve")
    assert "probably 2008-05-30" in lines[1]
    code, out, _ = run(capsys, ixdir, "changes", "--json", "--limit", "1")
    assert [r["id"] for r in json.loads(out)] in (
        ["obsidian-hand:update-2016-02-15"],
        ["obsidian-hand:banned-moshi-eihime"],
    )
    code, out, _ = run(capsys, ixdir, "banned", "House", "of", "Black", "Lion")
    assert out.startswith("BANNED: House of the Black Lion (since 2015-10-05)")
    code, out, _ = run(capsys, ixdir, "banned", "Hida Kisada", "--json")
    assert all(r["banned"] is False for r in json.loads(out))


@pytest.mark.parametrize(
    ("argv", "code", "needle"),
    [
        (["changes", "--since", "yesterday"], 2, "since must be a date"),
        (["search", "x", "--source", "wiki"], 2, "unknown source"),
        (["frobnicate"], 2, "invalid choice"),
        (["search", "x", "--limit", "0"], 2, "--limit must be at least 1"),
        (["search", "x", "--limit", "many"], 2, "invalid int value"),
    ],
)
def test_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], ixdir: Path, argv: list[str], code: int, needle: str
) -> None:
    got, out, err = run(capsys, ixdir, *argv)
    assert got == code
    assert needle in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_module_entry_point(ixdir: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "index",
            "define",
            "Face-Down",
            "--index-dir",
            str(ixdir),
            "--sources",
            str(SHIPPED_SOURCES),
        ]
        + ["--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["id"] == "glossary:face-down"
