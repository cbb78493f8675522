"""Acceptance-audit fixes of the index: Porter2 stemming, strict dates, section numbers, CLI JSON rows."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from glossary.loader import SHIPPED_SOURCES
from index.build import store
from index.cli import main
from index.engine import Engine
from index.text.analysis import stem, terms


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


def test_stemmer_joins_word_forms_original_porter_split() -> None:
    # Porter stemmed "focus" to "focu" but "focusing" to "focus"; Porter2 gives both "focus".
    assert terms("focus") == terms("focusing") == terms("focused") == ["focus"]
    assert stem("transferring") == stem("transfer") == "transfer"
    assert stem("bonus") == "bonus"


def test_question_about_a_word_form_of_a_title_finds_it(engine: Engine) -> None:
    got = [h.entry.id for h in engine.search("what does focusing a card mean in a duel", limit=3)]
    assert got[0] == "glossary:focus"


@pytest.mark.parametrize("bad", ["2015-13", "2015-02-30", "2015-00", "0000"])
def test_impossible_dates_rejected(engine: Engine, bad: str) -> None:
    with pytest.raises(ValueError, match="since must be a date"):
        engine.changes(since=bad)
    with pytest.raises(ValueError, match="since must be a date"):
        engine.search("terrain", since=bad)


def test_partial_dates_still_accepted(engine: Engine) -> None:
    assert [r.entry.id for r in engine.changes(since="2016-02", until="2016")][:1] in (
        ["obsidian-hand:update-2016-02-15"],
        ["obsidian-hand:banned-moshi-eihime"],
    )


def test_unknown_section_number_gives_nothing(engine: Engine) -> None:
    assert engine.section("II.Z") == []
    assert engine.section("IV") == []


def test_section_number_with_word_and_part_number(engine: Engine) -> None:
    got = [h.entry.id for h in engine.section("Section II.F", limit=3)]
    assert got == [
        "obsidian-hand:ii-f-deck-constructions-and-restrictions",
        "obsidian-hand:ii-f-the-play-deck-and-deck-construction",
        "obsidian-hand:ii-f-deck-restrictions",
    ]
    assert [h.entry.id for h in engine.section("II", limit=2)] == [
        "obsidian-hand:ii-a-clan-alignment",
        "obsidian-hand:ii-b-family-honor",
    ]


@pytest.fixture(scope="module")
def ix(index_copy: Callable[..., Path]) -> Path:
    """One index folder for the CLI tests that only read: a copy of the session's, already built."""
    return index_copy("cli")


def _cli(capsys: pytest.CaptureFixture[str], ix: Path, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--index-dir", str(ix), "--sources", str(SHIPPED_SOURCES)])
    out, err = capsys.readouterr()
    return code, out, err


REQUIRED = ("format", "id", "title", "source", "section", "text", "quote", "spans", "changes", "citation", "score")


def test_every_json_row_has_the_documented_fields(capsys: pytest.CaptureFixture[str], ix: Path) -> None:
    for argv in (
        ("define", "targt"),
        ("search", "is a terrain an enemy card?"),
        ("section", "II.F"),
        ("changes", "--since", "2016-01-01"),
        ("banned", "House of Black Lion"),
    ):
        code, out, err = _cli(capsys, ix, *argv, "--json", "--limit", "2")
        rows = json.loads(out)
        assert code == 0 and 1 <= len(rows) <= 2, (argv, err)
        for row in rows:
            assert [k for k in REQUIRED if k not in row] == [], argv
            assert row["quote"] or not row["text"], argv  # a bare heading (II.F) has no text of its own


def test_changes_json_row_is_the_change_and_its_paragraph(capsys: pytest.CaptureFixture[str], ix: Path) -> None:
    code, out, _ = _cli(capsys, ix, "changes", "--source", "glossary", "--json", "--limit", "1")
    (row,) = json.loads(out)
    assert row["id"] == "glossary:entering-play-honor-loss" and row["kind"] == "clarified"
    assert row["entry_kind"] == "term" and row["date"] == "2008-07-08"
    assert row["changes"] == [{k: row[k] for k in row["changes"][0]}]
    assert row["quote"].startswith("The highest amount of Honor loss")


def test_define_json_quote_is_the_opening_paragraph(capsys: pytest.CaptureFixture[str], ix: Path) -> None:
    code, out, _ = _cli(capsys, ix, "define", "Region", "--json")
    row = json.loads(out)[0]
    assert row["id"] == "glossary:region" and row["quote"].startswith("A card type that attaches to a Province.")


def test_build_on_an_empty_folder_builds_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    code, out, _ = _cli(capsys, ix, "build", "--json")
    assert code == 0 and json.loads(out)["rebuilt"] is True
    assert len([p for p in ix.glob("build-*")]) == 1
    assert store.read_pointer(ix) is not None


def test_impossible_date_is_a_one_line_cli_error(capsys: pytest.CaptureFixture[str], ix: Path) -> None:
    code, _out, err = _cli(capsys, ix, "changes", "--since", "2015-13")
    assert code == 2 and "since must be a date" in err and len(err.strip().splitlines()) == 1


def test_missing_sources_are_reported_not_silent(capsys: pytest.CaptureFixture[str], tmp_path: Path, ix: Path) -> None:
    code = main(["define", "targt", "--index-dir", str(tmp_path / "ix"), "--sources", str(tmp_path / "nowhere")])
    _out, err = capsys.readouterr()
    assert code == 1
    assert err.splitlines() == [
        f"python -m index: error: cannot read the sources: {tmp_path / 'nowhere'}: no such file or folder",
    ]
    # One source missing among good ones refuses too: an answer from part of the rules would pass for a whole one.
    code = main(["define", "targt", "--index-dir", str(ix), "--sources", str(SHIPPED_SOURCES), str(tmp_path / "x")])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"python -m index: error: cannot read the sources: {tmp_path / 'x'}: no such file or folder"
    ]
