"""Issue 2 acceptance checks through the public paths: load_corpus, the CLI, the documented JSON contract.

The parser modules have their own detailed tests; these run the "Done when" list end to end, the way
a user (or the index) meets the glossary package, so a regression anywhere on the path shows up here.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glossary.cli import main
from glossary.loader import SHIPPED_SOURCES, load_corpus
from glossary.model import Corpus, SourceError

ROOT = Path(__file__).resolve().parents[2]
GOOD_PAGE = SHIPPED_SOURCES / "003_d8672a9bda4ff19e.txt"  # Glossary F: 18 entries
SHIPPED = sorted(p.name for p in SHIPPED_SOURCES.glob("*.txt"))


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus([SHIPPED_SOURCES])


def run_main(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


# --- "Done when" on the shipped corpus, through load_corpus ------------------------------------


def test_done_when_counts(corpus: Corpus) -> None:
    assert corpus.errors == []
    assert len(corpus.files) == 5
    kinds = Counter((e.source, e.kind) for e in corpus.entries)
    assert kinds[("glossary", "term")] == 53
    stamps = [c for e in corpus.entries if e.source == "glossary" for c in e.changes]
    assert len(stamps) == 18
    assert Counter(c.kind for c in stamps) == {"added": 13, "clarified": 3, "changed": 2}
    banned = [e for e in corpus.entries if e.kind == "banned"]
    assert len(banned) == 25
    assert Counter(e.group for e in banned) == {
        "Strongholds": 7, "Sensei": 2, "Events": 1, "Personalities": 3,
        "Strategies": 5, "Attachments": 5, "Miscellaneous": 2,
    }
    assert [e.title for e in banned if e.group == "Miscellaneous"] == [
        "Cards with the Rank (Kabuto) icon",
        "Unreleased Cards/Promos",
    ]
    dates = {e.title: [c.date for c in e.changes] for e in banned if e.changes}
    assert dates == {
        "House of the Black Lion": ["2015-10-05"],
        "Moshi Eihime": ["2016-02-15"],
        "Unreleased Cards/Promos": ["2015-11-12"],
    }
    updates = [e for e in corpus.entries if e.kind == "update"]
    assert [e.changes[0].date for e in updates] == [
        "2016-02-15", "2015-10-05", "2015-10-20", "2015-10-25",
        "2015-10-27", "2015-11-12", "2015-12-18", "2016-01-11",
    ]  # document order: the log is not in date order


def _squash(text: str) -> str:
    return " ".join(text.split())


def test_every_entry_text_is_verbatim_in_its_source(corpus: Corpus) -> None:
    sources = {name: _squash((SHIPPED_SOURCES / name).read_text(encoding="utf-8")) for name in SHIPPED}
    for entry in corpus.entries:
        source = sources[entry.location.file]
        for paragraph in entry.paragraphs:
            assert _squash(paragraph) in source, (entry.id, paragraph)
        lines = (SHIPPED_SOURCES / entry.location.file).read_text(encoding="utf-8").split("\n")
        span = _squash("\n".join(lines[entry.location.first_line - 1 : entry.location.last_line]))
        assert all(_squash(p) in span for p in entry.paragraphs), entry.id  # and inside its location


def test_ids_are_unique_and_well_formed(corpus: Corpus) -> None:
    ids = [e.id for e in corpus.entries]
    assert len(ids) == len(set(ids)) == 146
    assert all(re.fullmatch(r"(glossary|obsidian-hand):[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids), ids


def test_no_change_is_recorded_twice(corpus: Corpus) -> None:
    for entry in corpus.entries:
        keys = [(c.kind, c.date, c.raw, c.note, c.paragraph, c.update_id) for c in entry.changes]
        assert len(keys) == len(set(keys)), entry.id


def test_every_resolved_link_points_at_an_entry(corpus: Corpus) -> None:
    ids = corpus.by_id()
    for entry in corpus.entries:
        for ref in entry.see_also:
            assert ref.target is None or ref.target in ids
        for other in entry.overrides:
            assert entry.id in ids[other].overridden_by
        for other in entry.overridden_by:
            assert entry.id in ids[other].overrides


# --- the command line --------------------------------------------------------------------------


def test_parse_json_is_stable_and_matches_the_docs() -> None:
    code, first, _ = run_main("parse", "--json")
    assert code == 0
    assert run_main("parse", "--json")[1] == first  # byte-identical on a second run
    entries = json.loads(first)
    doc = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")  # the "JSON formats" section
    table = doc.split("`python -m glossary parse --json` prints an array of entries:", 1)[1]
    table = table.split("\n\n", 2)[1]
    documented = {name for row in table.splitlines()[2:] for name in re.findall(r"^\| ([^|]+) \|", row)}
    fields = {f for cell in documented for f in re.findall(r"`(\w+)`", cell)}
    assert fields == set(entries[0]), "docs/sources.md's JSON table and Entry.to_dict() disagree"
    change_doc = re.search(r"`\[\{(kind, date[^}]*)\}\]`", doc)
    assert change_doc is not None
    assert {f.strip() for f in change_doc.group(1).split(",")} == set(
        next(e for e in entries if e["changes"])["changes"][0]
    )
    assert set(entries[0]["location"]) == {"file", "first_line", "last_line"}
    ref = next(e for e in entries if e["see_also"])["see_also"][0]
    assert {"text", "target"} <= set(ref)


def test_path_may_be_a_file_or_a_folder(tmp_path: Path) -> None:
    shutil.copy(GOOD_PAGE, tmp_path / "f.txt")
    by_file = json.loads(run_main("parse", str(tmp_path / "f.txt"), "--json")[1])
    by_folder = json.loads(run_main("parse", str(tmp_path), "--json")[1])
    assert by_file == by_folder
    # cited by name, never by the host's absolute path (citations are posted in Discord)
    assert len(by_file) == 18 and by_file[0]["location"]["file"] == "f.txt"


def test_summary_is_the_default_even_with_paths(tmp_path: Path) -> None:
    shutil.copy(GOOD_PAGE, tmp_path / "f.txt")
    code, out, err = run_main(str(tmp_path))
    assert (code, err) == (0, "")
    assert out.splitlines()[:2] == ["18 entries from 1 file(s)", "  glossary: 18"]
    code, out, _ = run_main("--sources", str(tmp_path / "f.txt"))
    assert code == 0 and out.startswith("18 entries from 1 file(s)")


def test_lint_points_at_the_exact_lines() -> None:
    code, out, _ = run_main("lint")
    assert code == 0
    lines = out.splitlines()
    assert (
        "001_043f9cd10b383175.txt:43: warning: impossible-date: impossible date 3008-05-30 (in the future); "
        "probably 2008-05-30"
    ) in lines
    assert (
        "000_99c7513ab738c7d1.txt:15: warning: unbalanced-bracket: unbalanced bracket: '[ADDED Sept 25 2007}' "
        "is closed with '}'"
    ) in lines
    # a dangling reference is reported on the line that holds it, not on the entry's heading
    assert (
        "001_043f9cd10b383175.txt:59: info: dangling-reference: 'Reveal' refers to 'Look', which no loaded "
        "entry defines"
    ) in lines
    assert "004_f05ef39847fd66e3.txt:368: info: dangling-reference: 'Deck Restrictions' refers to 'Ancestors'" in out
    assert run_main("lint", "--strict")[0] == 1


def test_truncated_page_through_the_cli(tmp_path: Path) -> None:
    text = (SHIPPED_SOURCES / "001_043f9cd10b383175.txt").read_text(encoding="utf-8")
    (tmp_path / "cut.txt").write_text("\n".join(text.split("\n")[:20]), encoding="utf-8")
    shutil.copy(GOOD_PAGE, tmp_path / "good.txt")
    result = subprocess.run(
        [sys.executable, "-m", "glossary", "parse", "--json", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: cut.txt:20: truncated page: no footer ('Back to the Comprehensive Rules') "
        "after the last entry"
    ]
    assert len(json.loads(result.stdout)) == 18  # the other file still parses


# --- robustness through the whole loader path --------------------------------------------------


def _load(files: dict[str, bytes]) -> Corpus:
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files.items():
            (Path(folder) / name).write_bytes(data)
        return load_corpus([Path(folder)])


def _check(corpus: Corpus, good_entries: int) -> None:
    assert all(isinstance(error, SourceError) and "\n" not in str(error) for error in corpus.errors)
    assert all("could not be parsed" not in str(error) for error in corpus.errors), corpus.errors
    assert sum(1 for e in corpus.entries if e.location.file.endswith("good.txt")) == good_entries


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_random_bytes_files_never_escape_load_corpus(data: bytes) -> None:
    _check(_load({"random.txt": data, "good.txt": GOOD_PAGE.read_bytes()}), 18)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(SHIPPED),
    cut=st.floats(min_value=0, max_value=1),
    splice=st.binary(max_size=40),
    encoding=st.sampled_from(["utf-8", "cp1252", "utf-16"]),
)
def test_damaged_shipped_files_never_escape_load_corpus(
    name: str, cut: float, splice: bytes, encoding: str
) -> None:
    text = (SHIPPED_SOURCES / name).read_text(encoding="utf-8")
    data = text.encode(encoding, errors="replace")
    at = int(len(data) * cut)
    damaged = data[:at] + splice + data[at + len(splice) :]
    _check(_load({"damaged.txt": damaged, "good.txt": GOOD_PAGE.read_bytes()}), 18)
