"""The digest's facts between two versions of the sources (``glossary.diff``), on generated copies of the seed
files: a reworded paragraph, an added paragraph, a removed entry, lines shifted by a blank line (no change), a new
banned card, a new update-log record with a stamp; and the two command lines that print it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.__main__ import main as bot_main
from glossary.diff import diff, fingerprint, from_snapshot, snapshot
from glossary.loader import SHIPPED_SOURCES, load_corpus
from index.cli import main as index_main

GLOSSARY_T = "000_99c7513ab738c7d1.txt"
OBSIDIAN = "004_f05ef39847fd66e3.txt"
NOT_TARGETING = "just “choosing” something is not targeting."
NEVER_TARGETING = "just “choosing” something is never targeting."
ADDED_LINE = "A Tactician's Tactical Battle ability is not an action of the card. [ADDED Nov 26 2026]"
TACTICIAN = (
    "[edit] Tactician\nA Keyword indicating a Personality with a talent for directing battlefield strategy. The "
    "keyword allows a Personality to perform Tactical actions, including the player Tactical Battle action; See "
    "Battles, Combat Segment.\n"
)


def copy(tmp: Path, name: str) -> Path:
    folder = tmp / name
    shutil.copytree(SHIPPED_SOURCES, folder)
    return folder


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("versions")
    old, new = copy(tmp, "old"), copy(tmp, "new")
    page = new / GLOSSARY_T
    edit(page, "Glossary T\n", "Glossary T\n\n")  # every line below moves down by one: no change by itself
    edit(page, NOT_TARGETING, NEVER_TARGETING)  # reworded, no new stamp (a re-exported page)
    edit(page, "[edit] Tactical\n", "[edit] Tactical\n" + ADDED_LINE + "\n")  # an added paragraph with a stamp
    edit(page, TACTICIAN, "")  # a removed entry
    ruleset = new / OBSIDIAN
    edit(ruleset, "Nanashi Mura\n", "Nanashi Mura\nKyuden Hida\n")  # a new banned card
    edit(ruleset, "Updates\n\n", "Updates\n\n[11/20/2026]\nKyuden Hida added to Banned List\n\n")
    return old, new


def test_the_digest_lists_what_changed_and_nothing_that_only_moved(versions: tuple[Path, Path]) -> None:
    old, new = (load_corpus([p]) for p in versions)
    found = diff(old.entries, new.entries)
    by_id = {c.entry.id: c for c in found.entries}
    # Only these: every other glossary paragraph moved down a line and is not listed.
    assert set(by_id) == {"glossary:target", "glossary:tactical", "glossary:tactician"}

    target = by_id["glossary:target"]
    assert target.status == "changed" and target.stamps == []
    [reworded] = target.paragraphs
    assert reworded.status == "changed" and reworded.old_index == reworded.new_index == 0
    assert reworded.before is not None and reworded.before.endswith(NOT_TARGETING)
    assert reworded.after is not None and reworded.after.endswith(NEVER_TARGETING)
    assert target.old is not None and target.new is not None
    # a blank line and a paragraph added above it, the Tactician entry's two lines gone: line 12 again
    assert target.old.paragraph_lines(0) == target.new.paragraph_lines(0) == (12, 12)

    tactical = by_id["glossary:tactical"]
    # its own paragraphs now stand a line lower and one index on: not listed, only the new one is
    assert [(p.status, p.after, p.new_index) for p in tactical.paragraphs] == [("added", ADDED_LINE, 0)]
    assert [s.raw for s in tactical.stamps] == ["[ADDED Nov 26 2026]"]

    gone = by_id["glossary:tactician"]
    assert gone.status == "removed" and gone.new is None and gone.old is not None
    assert gone.old.paragraphs[0].startswith("A Keyword indicating a Personality")

    assert [e.title for e in found.banned_added] == ["Kyuden Hida"] and found.banned_removed == []
    assert [e.text for e in found.updates] == ["Kyuden Hida added to Banned List"]
    counts = found.counts()
    assert counts["paragraphs_changed"] == 1 and counts["paragraphs_added"] == 1 and counts["entries_removed"] == 1


def test_moved_lines_alone_are_no_change_and_keep_the_fingerprint(tmp_path: Path) -> None:
    old, new = copy(tmp_path, "old"), copy(tmp_path, "new")
    edit(new / GLOSSARY_T, "[edit] Target\n", "\n[edit] Target\n")
    edit(new / OBSIDIAN, "Banned Cards\n", "\n\nBanned Cards\n")
    a, b = load_corpus([old]).entries, load_corpus([new]).entries
    assert diff(a, b).empty
    assert fingerprint(a) == fingerprint(b)
    assert a != b  # the lines did move


def test_whitespace_only_rewraps_are_no_change_but_words_are(tmp_path: Path) -> None:
    old, new = copy(tmp_path, "old"), copy(tmp_path, "new")
    edit(new / GLOSSARY_T, NOT_TARGETING, NOT_TARGETING.replace(" is ", "  is ") + "  ")
    a, b = load_corpus([old]).entries, load_corpus([new]).entries
    assert diff(a, b).empty and fingerprint(a) == fingerprint(b)
    edit(new / GLOSSARY_T, "not targeting", "not targetting")
    assert not diff(a, load_corpus([new]).entries).empty


def test_a_snapshot_round_trip_diffs_as_the_parsed_corpus(versions: tuple[Path, Path]) -> None:
    old, new = (load_corpus([p]).entries for p in versions)
    kept = from_snapshot(json.loads(json.dumps(snapshot(old))))
    assert diff(kept, old).empty and fingerprint(kept) == fingerprint(old)
    assert diff(kept, new).to_dict() == diff(old, new).to_dict()


def test_index_diff_prints_the_facts_with_files_and_lines(
    versions: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = versions
    assert index_main(["diff", "--old", str(old), "--new", str(new)]) == 0
    out = capsys.readouterr().out
    assert "CHANGED  Target  [glossary:target]" in out
    assert f"before (paragraph 1, {GLOSSARY_T} line 12):" in out and NOT_TARGETING in out and NEVER_TARGETING in out
    assert "REMOVED  Tactician  [glossary:tactician]" in out
    assert "new stamp [ADDED Nov 26 2026]" in out
    assert "BANNED  Kyuden Hida (Strongholds)" in out and "NEW UPDATE  Update 11/20/2026" in out

    assert index_main(["diff", "--old", str(old), "--new", str(new), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    target = next(e for e in data["entries"] if e["id"] == "glossary:target")
    before, after = target["paragraphs"][0]["before"], target["paragraphs"][0]["after"]
    assert before["file"] == after["file"] == GLOSSARY_T and before["text"].endswith(NOT_TARGETING)
    assert after["text"].endswith(NEVER_TARGETING) and before["first_line"] == 12

    assert index_main(["diff", "--old", str(old), "--new", str(old)]) == 0
    assert capsys.readouterr().out.startswith("No changes")
    assert index_main(["diff", "--old", str(old / "missing"), "--new", str(new)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("python -m index: error: --old: cannot read the sources") and "Traceback" not in err


def test_bot_diff_prints_the_digest_as_the_bot_posts_it(
    versions: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = versions
    assert bot_main(["diff", "--old", str(old), "--new", str(new)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Rule changes: what the sources say now\n")
    assert "Changed · L5R Comprehensive Rules — Glossary T › Target\nReworded — paragraph 1:\nBefore:\n> " in out
    assert f"— L5R Comprehensive Rules — Glossary T › Target, paragraph 1, line 12 · {GLOSSARY_T}" in out
    assert "Removed · L5R Comprehensive Rules — Glossary T › Tactician" in out
    assert "New change stamps: [ADDED Nov 26 2026] (paragraph 1)" in out
    assert "Banned: Kyuden Hida (Strongholds)" in out
    assert "[1 entry removed · 2 entries changed · 1 paragraph added · 1 paragraph reworded" in out
