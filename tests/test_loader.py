"""Reading and dispatching source files: bad input gives one clear line and never stops the other files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from glossary.loader import SHIPPED_SOURCES, default_sources, load_corpus, read_source
from glossary.model import SourceError

ROOT = Path(__file__).resolve().parent.parent
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
    messages = sorted(str(e) for e in corpus.errors)
    assert len(messages) == 4
    assert any("unknown.txt:1: unknown kind of document" in m for m in messages)
    assert any(m.endswith("empty.txt: empty file") for m in messages)
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


def test_cli_parse_json_fields_on_shipped_corpus() -> None:
    result = run_cli("parse", "--json")
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
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


def test_cli_lint_reports_known_anomalies_and_strict_fails() -> None:
    result = run_cli("lint")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "001_043f9cd10b383175.txt:" in out and "3008" in out
    assert "000_99c7513ab738c7d1.txt:" in out and "}" in out
    strict = run_cli("lint", "--strict")
    assert strict.returncode == 1


def test_cli_summary_is_the_default() -> None:
    result = run_cli()
    assert result.returncode == 0, result.stderr
    assert "5 file(s)" in result.stdout
