"""Reading and dispatching source files: bad input gives one clear line and never stops the other files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from glossary.cli import main
from glossary.loader import SHIPPED_SOURCES, default_sources, load_corpus, read_source
from glossary.model import SourceError

ROOT = Path(__file__).resolve().parents[2]
TARGET_PAGE = SHIPPED_SOURCES / "000_99c7513ab738c7d1.txt"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glossary", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )


@pytest.fixture
def bad_files(tmp_path: Path) -> dict[str, Path]:
    files = {
        "empty": tmp_path / "empty.txt",
        "binary": tmp_path / "binary.txt",
        "cp1252": tmp_path / "cp1252.txt",
        "unknown": tmp_path / "unknown.txt",
    }
    files["empty"].write_bytes(b"  \n\n")
    files["binary"].write_bytes(b"Glossary T\n\x00\x01\x02\xff")
    header = b"Glossary Z\nFrom Legend of the Five Rings Rules\n[edit] Zeal\n"
    files["cp1252"].write_bytes(header + b"\x93Zeal\x94 means\n")
    files["unknown"].write_text("Shopping list\neggs\nmilk\n", encoding="utf-8")
    return files


def test_read_source_messages_name_file_and_line(bad_files: dict[str, Path]) -> None:
    with pytest.raises(SourceError, match=r"empty\.txt: empty file"):
        read_source(bad_files["empty"])
    with pytest.raises(SourceError, match=r"binary\.txt:2: binary file"):
        read_source(bad_files["binary"])
    with pytest.raises(SourceError, match=r"cp1252\.txt:4: not UTF-8 \(byte 0x93"):
        read_source(bad_files["cp1252"])


def test_utf16_file_is_named_as_such(tmp_path: Path) -> None:
    page = tmp_path / "utf16.txt"
    page.write_bytes(TARGET_PAGE.read_text(encoding="utf-8").encode("utf-16"))
    with pytest.raises(SourceError) as caught:
        read_source(page)
    assert str(caught.value) == f"{page}:1: UTF-16 text, not UTF-8; re-save the file as UTF-8"


def test_bad_files_do_not_stop_good_ones(bad_files: dict[str, Path], tmp_path: Path) -> None:
    shutil.copy(TARGET_PAGE, tmp_path / "glossary_t.txt")
    corpus = load_corpus([tmp_path])
    assert [str(e).removeprefix(f"{tmp_path}/") for e in corpus.errors] == [
        "binary.txt:2: binary file (NUL byte), not a text document",
        "cp1252.txt:4: not UTF-8 (byte 0x93; Windows-1252 curly quotes?); re-save the file as UTF-8",
        "empty.txt: empty file",
        "unknown.txt:1: unknown kind of document (expected a glossary page with '[edit] Term' entries, "
        "the Obsidian Hand Ruleset, or a Markdown house-rulings file)",
    ]
    titles = [e.title for e in corpus.entries]
    assert titles[:3] == ["Tactical", "Tactician", "Target"]


def test_missing_path_is_an_error_not_a_crash(tmp_path: Path) -> None:
    corpus = load_corpus([tmp_path / "nope"])
    assert [str(e) for e in corpus.errors] == [f"{tmp_path / 'nope'}: no such file or folder"]
    assert corpus.entries == []


def test_env_var_points_at_other_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(TARGET_PAGE, tmp_path / "t.txt")
    monkeypatch.setenv("L5R_SOURCES", str(tmp_path))
    monkeypatch.delenv("L5R_HOUSE_RULINGS", raising=False)
    assert default_sources() == [tmp_path]
    assert {e.source for e in load_corpus().entries} == {"glossary"}


def test_cli_bad_input_one_line_each_and_nonzero_exit(bad_files: dict[str, Path], tmp_path: Path) -> None:
    shutil.copy(TARGET_PAGE, tmp_path / "glossary_t.txt")
    result = run_cli("parse", str(tmp_path), "--json")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    err_lines = result.stderr.strip().splitlines()
    assert len(err_lines) == 4 and all(line.startswith("error: ") for line in err_lines)
    entries = json.loads(result.stdout)
    assert entries[2]["id"] == "glossary:target"


def test_cli_parse_json_fields_on_shipped_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "--json", str(SHIPPED_SOURCES)]) == 0
    entries = json.loads(capsys.readouterr().out)
    required = {
        "id", "source", "document", "kind", "title", "section", "aliases", "text", "paragraphs",
        "changes", "see_also", "location", "url", "group", "overrides", "overridden_by",
    }
    assert all(required <= set(e) for e in entries)
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))
    terrain = next(e for e in entries if e["id"] == "glossary:terrain")
    assert terrain["location"] == {"file": "000_99c7513ab738c7d1.txt", "first_line": 22, "last_line": 31}
    assert terrain["url"] == "http://rules.l5r.com/Glossary_T#Terrain"
    assert [c["date"] for c in terrain["changes"]] == ["2008-05-21", "2008-03-24"]


def test_cli_summary_is_the_default(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("L5R_SOURCES", raising=False)
    monkeypatch.delenv("L5R_HOUSE_RULINGS", raising=False)
    assert main([]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:3] == ["146 entries from 5 file(s)", "  glossary: 53", "  obsidian-hand: 93"]
    assert captured.err == ""


def test_a_file_named_twice_is_read_once(tmp_path: Path) -> None:
    shutil.copy(TARGET_PAGE, tmp_path / "t.txt")
    corpus = load_corpus([tmp_path / "t.txt", tmp_path, tmp_path / "." / "t.txt"])
    assert corpus.files == ["t.txt"]  # never the host's absolute path
    assert len(corpus.entries) == 10
    assert corpus.errors == [] and [a for a in corpus.anomalies if a.kind == "duplicate-title"] == []


def test_a_second_copy_of_the_ruleset_links_to_its_own_entries(tmp_path: Path) -> None:
    ruleset = SHIPPED_SOURCES / "004_f05ef39847fd66e3.txt"
    shutil.copy(ruleset, tmp_path / "a.txt")
    shutil.copy(ruleset, tmp_path / "b.txt")
    by_id = load_corpus([tmp_path]).by_id()
    stub = by_id["obsidian-hand:ability-enlightened-battle-2"]
    assert [r.target for r in stub.see_also] == ["obsidian-hand:ability-enlightened-open-2"]
    moshi = by_id["obsidian-hand:banned-moshi-eihime-2"]
    assert [c.update_id for c in moshi.changes] == ["obsidian-hand:update-2016-02-15-2"]
    assert [c.update_id for c in by_id["obsidian-hand:banned-moshi-eihime"].changes] == [
        "obsidian-hand:update-2016-02-15"
    ]


def test_unreadable_folder_is_an_error_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(self: Path) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "iterdir", denied)
    corpus = load_corpus([tmp_path])
    assert [str(e) for e in corpus.errors] == [f"{tmp_path}: cannot read: Permission denied"]
    assert corpus.entries == []


@pytest.mark.parametrize("codec, order", [("utf-16-le", "little-endian"), ("utf-16-be", "big-endian")])
def test_utf16_without_byte_order_mark_is_named_as_such(tmp_path: Path, codec: str, order: str) -> None:
    """Saved as UTF-16 without a BOM: not "a binary file (NUL byte)", which sends a judge the wrong way."""
    page = tmp_path / "utf16.txt"
    page.write_bytes(TARGET_PAGE.read_text(encoding="utf-8").encode(codec))
    with pytest.raises(SourceError) as caught:
        read_source(page)
    assert str(caught.value) == (
        f"{page}:1: UTF-16 text ({order}, no byte-order mark), not UTF-8; re-save the file as UTF-8"
    )
