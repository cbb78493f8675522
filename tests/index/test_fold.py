"""Folding reviewed pairs into the kept questions (index/build/fold.py): the export's lines go in, once, and a bad
line writes nothing."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from bot.rulings.__main__ import feedback_lines
from bot.rulings.feedback import CONFIRMED, Report
from glossary.loader import load_corpus
from glossary.model import Corpus
from index.build import asked, fold, unanswered
from index.build.lexical import units


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture
def kept(tmp_path: Path) -> tuple[Path, Path]:
    """Copies of the shipped files, so the tests never write the real ones."""
    a, u = tmp_path / "asked.json", tmp_path / "unanswered.json"
    shutil.copy(asked.DATA, a)
    shutil.copy(unanswered.DATA, u)
    return a, u


def _report(question: str, entry_id: str | None, paragraph: int | None, digest: str | None) -> Report:
    now = dt.datetime(2026, 11, 27, tzinfo=dt.UTC)
    return Report(1, "guild:42", CONFIRMED, question, entry_id, paragraph, digest, None, now, "judge", now)


def test_exported_pairs_are_kept_for_their_paragraph_once(
    corpus: Corpus, kept: tuple[Path, Path], tmp_path: Path
) -> None:
    terrain = corpus.by_id()["glossary:terrain"]
    p = next(n for n, t in enumerate(terrain.paragraphs) if "another Terrain" in t)
    mine = "two battlefield cards at the same fight, does the new one kick the old one out?"
    nope = "can the loser of a tournament game ask for a rematch?"
    lines = feedback_lines(
        [_report(mine, terrain.id, p, asked.digest(terrain.paragraphs[p])), _report(nope, None, None, None)],
        corpus,
        with_server=True,
    )
    export = tmp_path / "reviewed.jsonl"
    export.write_text("\n".join(lines) + "\n", "utf-8")
    a, u = kept
    before = asked.for_corpus(corpus, asked.read(a))
    assert mine not in before.texts

    done = fold.fold([export], corpus, a, u)
    assert (done.asked, done.not_covered, done.skipped) == (1, 1, 0)
    after = asked.for_corpus(corpus, asked.read(a))
    assert len(after.texts) == len(before.texts) + 1
    ent, par = units(corpus)
    unit = int(after.owner[after.texts.index(mine)])
    assert corpus.entries[int(ent[unit])].id == terrain.id and int(par[unit]) == p
    assert json.loads(a.read_text("utf-8"))[-1]["from"] == "reviewed.jsonl"
    assert nope in unanswered.read(u).texts

    again = fold.fold([export], corpus, a, u)  # folding the same file twice changes nothing
    assert (again.asked, again.not_covered, again.skipped) == (0, 0, 2)
    assert asked.for_corpus(corpus, asked.read(a)).texts == after.texts


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"question": "x?", "entry_id": "glossary:nothing-here", "paragraph": 0, "digest": "0" * 16}, "no entry"),
        (
            {"question": "x?", "entry_id": "glossary:terrain", "paragraph": 99, "digest": "0" * 16},
            "has no paragraph 99",
        ),
        ({"question": "x?", "entry_id": "glossary:terrain", "paragraph": 0, "digest": "0" * 16}, "digest differs"),
        ({"entry_id": "glossary:terrain", "paragraph": 0}, "no 'question'"),
        ("not an object", "expected an object"),
    ],
)
def test_a_bad_line_names_its_file_and_line_and_writes_nothing(
    corpus: Corpus, kept: tuple[Path, Path], tmp_path: Path, row: object, says: str
) -> None:
    terrain = corpus.by_id()["glossary:terrain"]
    good = {
        "question": "fine question?",
        "entry_id": terrain.id,
        "paragraph": 0,
        "digest": asked.digest(terrain.paragraphs[0]),
    }
    export = tmp_path / "pairs.jsonl"
    export.write_text(json.dumps(good) + "\n\n" + json.dumps(row) + "\n", "utf-8")
    a, u = kept
    before = a.read_bytes(), u.read_bytes()
    with pytest.raises(fold.FoldError) as err:
        fold.fold([export], corpus, a, u)
    assert str(err.value).startswith("pairs.jsonl, line 3: ") and says in str(err.value)
    assert (a.read_bytes(), u.read_bytes()) == before


def test_not_covered_questions_wait_until_the_loaded_rules_are_the_checked_ones(
    corpus: Corpus, kept: tuple[Path, Path], tmp_path: Path
) -> None:
    """A page loaded since the not-covered list was checked may answer what it holds: folding more into it is
    refused (naming the step to take) rather than claiming the new page was read."""
    a, u = kept
    data = json.loads(u.read_text("utf-8"))
    data["checked"] = data["checked"][1:]
    u.write_text(json.dumps(data), "utf-8")
    export = tmp_path / "nope.jsonl"
    export.write_text(json.dumps({"question": "how long is a round at a store tournament?", "not_covered": True}))
    with pytest.raises(fold.FoldError, match="--write-checked"):
        fold.fold([export], corpus, a, u)
    assert json.loads(u.read_text("utf-8")) == data


def test_the_command_checks_counts_and_dry_runs(
    kept: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a, u = kept
    monkeypatch.setattr(asked, "DATA", a)
    monkeypatch.setattr(unanswered, "DATA", u)
    export = tmp_path / "nope.jsonl"
    export.write_text(json.dumps({"question": "how long is a round at a store tournament?", "not_covered": True}))
    before = u.read_bytes()
    assert fold.main([str(export), "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("would add 0 kept question(s) to asked.json and 1 to unanswered.json")
    assert u.read_bytes() == before
    export.write_text("{broken\n")
    assert fold.main([str(export)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fold: nope.jsonl, line 1: not JSON") and err.strip().endswith("nothing written")
    assert "Traceback" not in err
    assert fold.main([str(tmp_path / "missing.jsonl")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fold: missing.jsonl: cannot read it") and "Traceback" not in err
