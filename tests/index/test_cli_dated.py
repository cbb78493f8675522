"""``python -m index … --as-of`` and ``python -m index history``: text, JSON and one-line errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from glossary.loader import SHIPPED_SOURCES
from index.cli import main
from index.cli_dated import day_of


@pytest.fixture(scope="module")
def ixdir(index_copy: Callable[..., Path]) -> Path:
    ix = index_copy("cli-dated")  # its vector cache: the build below embeds nothing again
    assert main(["build", "--index-dir", str(ix), "--sources", str(SHIPPED_SOURCES)]) == 0
    return ix


def run(capsys: pytest.CaptureFixture[str], ixdir: Path, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--index-dir", str(ixdir), "--sources", str(SHIPPED_SOURCES)])
    out, err = capsys.readouterr()
    return code, out, err


def test_as_of_day_spans() -> None:
    assert day_of("2015-11-01") == "2015-11-01"
    assert day_of("2015-02") == "2015-02-28" and day_of("2016-02") == "2016-02-29"  # the end of that month
    assert day_of("2015") == "2015-12-31"
    with pytest.raises(ValueError, match="--as-of must be a date"):
        day_of("2015-13-01")


def test_define_as_of(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, _ = run(capsys, ixdir, "define", "facing", "--as-of", "2008-01-01")
    assert code == 0 and "did not exist yet on 2008-01-01: added 2008-02-12" in out
    assert "A Personality is" not in out
    code, out, _ = run(capsys, ixdir, "define", "terrain", "--as-of", "2015-10-22")
    assert "in force on 2015-10-22: Update 10/20/2015 [obsidian-hand:update-2015-10-20] (2015-10-20)" in out
    assert "made after 2015-10-22 (left out): Update 10/25/2015 [obsidian-hand:update-2015-10-25] (2015-10-25)" in out
    code, out, _ = run(capsys, ixdir, "define", "terrain", "--as-of", "2008-01-01", "--json")
    (row,) = json.loads(out)["results"]
    assert row["as_of"]["added_later"] == [{"paragraph": 8, "date": "2008-03-24"}]
    assert row["left_out_later"] == ["obsidian-hand:update-2015-10-20", "obsidian-hand:update-2015-10-25"]


def test_old_wording_and_bans_as_of(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, _ = run(capsys, ixdir, "define", "naval", "invasion", "--as-of", "2015-10-20", "--json")
    (row,) = json.loads(out)["results"]
    (paragraph,) = row["as_of"]["paragraphs"]
    assert paragraph["text"].startswith("Engage: Once per battle, target your performing unbowed Naval Personality")
    assert paragraph["earlier_wording_from"] == "obsidian-hand:update-2015-10-27"
    code, out, _ = run(capsys, ixdir, "banned", "moshi", "eihime", "--as-of", "2016-01-01")
    assert out.startswith("NOT YET BANNED on 2016-01-01 (banned 2016-02-15): Moshi Eihime")
    code, out, _ = run(capsys, ixdir, "banned", "moshi", "eihime", "--as-of", "2016-03-01")
    assert out.startswith("BANNED on 2016-03-01 (since 2016-02-15): Moshi Eihime")


def test_search_as_of_leaves_out_what_came_later(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, _ = run(capsys, ixdir, "search", "facing", "duel", "--as-of", "2008-01-01", "--json")
    data = json.loads(out)
    assert code == 0 and "glossary:facing" not in [r["id"] for r in data["results"]]
    assert any(left.startswith("Facing [glossary:facing] (added 2008-02-12)") for left in data["left_out"])


def test_history(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, _ = run(capsys, ixdir, "history", "terrain")
    assert code == 0
    heads = [line for line in out.splitlines() if line[:4].isdigit()]
    assert [h.split()[0] for h in heads] == ["2008-03-24", "2008-05-21", "2015-10-20", "2015-10-25"]
    assert heads[0] == "2008-03-24  ADDED  paragraph 9"
    assert "   L5R Comprehensive Rules — Glossary T › Terrain, paragraph 9, line 31 · 000_99c7513ab738c7d1.txt" in out
    code, out, _ = run(capsys, ixdir, "history", "resolve", "--json")
    rows = json.loads(out)["history"]
    assert [r["effective_date"] for r in rows] == ["2007-09-22", "2008-05-30"]
    assert rows[1]["date"] == "3008-05-30" and rows[1]["quote"].startswith("3. A duel begins to resolve")
    code, out, _ = run(capsys, ixdir, "history", "resolve")
    assert "3008-05-30 (as printed; read as 2008-05-30)  CHANGED  item 3." in out


def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], ixdir: Path) -> None:
    code, out, err = run(capsys, ixdir, "define", "target", "--as-of", "someday")
    assert code == 2 and out == ""
    assert err == "python -m index: error: --as-of must be a date like 2008-03-16 (or 2008-03, 2008), not 'someday'\n"
    code, _out, err = run(capsys, ixdir, "history", " ")
    assert code == 2 and err == "python -m index: error: history: the term is empty\n"
