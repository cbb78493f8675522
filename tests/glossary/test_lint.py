"""``python -m glossary lint``: a severity for every anomaly, filters by kind and severity, ``--strict``.

Issue 8: references to rulebook chapters that are not loaded are info and never fail ``--strict``; an
update log out of date order is reported as info; every line shows its severity.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from glossary.cli import main
from glossary.loader import SHIPPED_SOURCES, load_corpus
from glossary.model import ANOMALY_SEVERITY, SEVERITIES, Anomaly
from glossary.obsidian import parse_obsidian

ROOT = Path(__file__).resolve().parents[2]
OBSIDIAN = SHIPPED_SOURCES / "004_f05ef39847fd66e3.txt"
GLOSSARY_E = SHIPPED_SOURCES / "002_6da8b4809aadefbe.txt"
LINE = re.compile(r"^[^:]+:\d+: (error|warning|info): [a-z-]+: .+$")


def run_main(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


_CALL = re.compile(r'(?:\bAnomaly|\.anomaly)\(\s*(?:[^"()]|\([^()]*\))*?"([a-z]+(?:-[a-z]+)*)"', re.S)
_STAMP_KIND = re.compile(r'\(\s*"([a-z]+(?:-[a-z]+)+)",\s*f?"')  # stamps.py: ("impossible-date", message)


def test_every_kind_the_parsers_emit_has_a_severity() -> None:
    """The table covers the kind literal of every ``Anomaly(...)`` / ``b.anomaly(...)`` call in glossary/."""
    emitted: set[str] = set()
    for path in (ROOT / "glossary").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        emitted.update(_CALL.findall(text))
        if path.name == "stamps.py":
            emitted.update(_STAMP_KIND.findall(text))
    assert {"truncated", "dangling-reference", "impossible-date", "unbalanced-bracket", "update-log-order"} <= emitted
    assert len(emitted) >= 19
    assert sorted(emitted - set(ANOMALY_SEVERITY)) == []
    assert set(ANOMALY_SEVERITY.values()) <= set(SEVERITIES)


def test_severity_is_derived_from_the_kind_and_can_be_given() -> None:
    assert Anomaly("f", 1, "dangling-reference", "m").severity == "info"
    assert Anomaly("f", 1, "impossible-date", "m").severity == "warning"
    assert Anomaly("f", 1, "truncated", "m").severity == "error"
    assert Anomaly("f", 1, "some-new-check", "m").severity == "warning"  # unknown kinds are looked at
    assert Anomaly("f", 1, "dangling-reference", "m", "warning").severity == "warning"
    with pytest.raises(ValueError, match="unknown severity 'fatal'"):
        Anomaly("f", 1, "truncated", "m", "fatal")  # type: ignore[arg-type]
    assert str(Anomaly("f", 3, "truncated", "cut")) == "f:3: truncated: cut"  # unchanged, others read it


def test_every_line_shows_its_severity() -> None:
    code, out, err = run_main("lint")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) > 20
    assert [line for line in lines if not LINE.match(line)] == []
    assert (
        "002_6da8b4809aadefbe.txt:12: info: dangling-reference: 'Enemy' refers to "
        "'Sequence of Play, Attack Phase, Battles', which no loaded entry defines"
    ) in lines
    assert "004_f05ef39847fd66e3.txt:440: error: truncated: document ends abruptly" in out
    assert re.search(r"^\d+ anomalies \(1 error, 3 warnings, \d+ info\); 0 unreadable file\(s\)$", err.strip())


def test_unloaded_chapter_references_are_info_and_do_not_fail_strict() -> None:
    """Only dangling references (and no warnings): --strict passes; the references are still listed."""
    code, out, _ = run_main("lint", "--strict", str(GLOSSARY_E))
    assert code == 0
    assert "info: dangling-reference: 'Enemy' refers to 'Leader'" in out
    assert "warning" not in out and "error" not in out


def test_strict_fails_on_warnings_and_errors() -> None:
    assert run_main("lint", "--strict")[0] == 1  # the shipped copies: an impossible date, a brace, a cut
    assert run_main("lint", "--strict", "--severity", "info")[0] == 0
    assert run_main("lint", "--strict", "--kind", "impossible-date")[0] == 1
    assert run_main("lint", "--strict", "--kind", "truncated")[0] == 1


def test_filter_by_kind_repeatable_and_comma_list() -> None:
    code, out, err = run_main("lint", "--kind", "impossible-date", "--kind", "unbalanced-bracket,truncated")
    assert code == 0
    kinds = [line.split(": ")[2] for line in out.splitlines()]
    assert sorted(kinds) == ["impossible-date", "truncated", "unbalanced-bracket"]
    assert err.startswith("3 of ") and "anomalies shown" in err


def test_filter_by_severity() -> None:
    _, out, _ = run_main("lint", "--severity", "error,warning")
    assert sorted(line.split(": ")[1] for line in out.splitlines()) == ["error", "warning", "warning", "warning"]
    _, out, _ = run_main("lint", "--severity", "info")
    assert out and {line.split(": ")[1] for line in out.splitlines()} == {"info"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "no-such-kind"], "error: unknown anomaly kind 'no-such-kind' (known: "),
        (["--severity", "fatal"], "error: unknown severity 'fatal' (choose from error, warning, info)"),
    ],
)
def test_unknown_filter_values_are_one_line_errors(args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "glossary", "lint", *args], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(message)


def test_update_log_out_of_date_order_is_info() -> None:
    doc = parse_obsidian(OBSIDIAN.read_text(encoding="utf-8"), OBSIDIAN.name)
    order = [a for a in doc.anomalies if a.kind == "update-log-order"]
    assert [(a.line, a.severity) for a in order] == [(8, "info")]
    assert order[0].message == (
        "update log not in date order: [10/05/2015] (line 8) comes after [02/15/2016] (line 5), "
        "while the rest of the log runs oldest first"
    )
    code, out, _ = run_main("lint", "--kind", "update-log-order", "--strict", str(OBSIDIAN))
    assert code == 0 and out.startswith("004_f05ef39847fd66e3.txt:8: info: update-log-order: ")


def _ruleset(*dates: str) -> str:
    records = "".join(f"[{d}]\nSomething changed on {d}.\n" for d in dates)
    return f"The Obsidian Hand Ruleset\nUpdates\n{records}I. CARDINAL RULES\nCardinal Rule 1: X\nText.\n"


@pytest.mark.parametrize(
    ("dates", "found"),
    [
        (["10/05/2015", "10/20/2015", "01/11/2016"], []),  # oldest first
        (["01/11/2016", "10/20/2015", "10/05/2015"], []),  # newest first
        (["01/11/2016", "10/20/2015", "12/01/2015", "10/05/2015"], [7]),  # mostly newest first; one break
        (["10/05/2015"], []),
    ],
)
def test_update_log_order_follows_the_direction_most_of_the_log_uses(dates: list[str], found: list[int]) -> None:
    doc = parse_obsidian(_ruleset(*dates) + "\n", "o.txt")
    assert [a.line for a in doc.anomalies if a.kind == "update-log-order"] == found


def test_house_applies_to_naming_nothing_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "rulings.md").write_text("## A ruling\nApplies to: No Such Rule\n\nBody.\n", encoding="utf-8")
    corpus = load_corpus([SHIPPED_SOURCES, tmp_path])
    house = [a for a in corpus.anomalies if a.file.endswith("rulings.md")]
    assert [(a.kind, a.severity) for a in house] == [("dangling-reference", "warning")]
    glossary = [a for a in corpus.anomalies if a.kind == "dangling-reference" and a.file.endswith(".txt")]
    assert glossary and {a.severity for a in glossary} == {"info"}
    assert run_main("lint", "--strict", "--kind", "dangling-reference", str(SHIPPED_SOURCES), str(tmp_path))[0] == 1


def test_obsidian_see_stub_naming_no_ability_is_a_warning() -> None:
    text = OBSIDIAN.read_text(encoding="utf-8").replace("* see Ninjitsu Open", "* see Nothing Like It")
    doc = parse_obsidian(text, "o.txt")
    stub = [a for a in doc.anomalies if a.kind == "dangling-reference"]
    assert [a.severity for a in stub] == ["warning"]


def test_a_house_file_is_linted_against_the_configured_sources(tmp_path: Path) -> None:
    """Issue 17: linting a house-rulings file alone reported every ``Applies to`` as dangling."""
    house = tmp_path / "house.md"
    house.write_text("## Second terrain\nApplies to: Terrain, Ranged Attack\n\nOnly one Terrain.\n", encoding="utf-8")
    code, out, err = run_main("lint", "--strict", str(house))
    assert code == 0 and out == "", out
    assert err.startswith("0 anomalies")  # the shipped corpus's own anomalies are not this file's
    code, out, _ = run_main("lint", "--strict", "--alone", str(house))
    assert code == 1 and out.count("dangling-reference") == 2  # alone, nothing to resolve against


def test_a_misspelt_name_gets_a_suggestion_and_stays_unresolved(tmp_path: Path) -> None:
    house = tmp_path / "house.md"
    house.write_text("## Second terrain\nApplies to: Terain\n\nOnly one Terrain.\n", encoding="utf-8")
    code, out, _ = run_main("lint", "--strict", str(house))
    assert code == 1
    assert "refers to 'Terain', which no loaded entry defines; did you mean 'Terrain'?" in out
    house.write_text("## Odd\nApplies to: Quantum Shogunate\n\nText.\n", encoding="utf-8")
    _, out, _ = run_main("lint", str(house))
    assert "Quantum Shogunate" in out and "did you mean" not in out  # nothing close: no guess


def test_unknown_metadata_lists_every_key_the_parser_accepts(tmp_path: Path) -> None:
    house = tmp_path / "house.md"
    house.write_text("## A ruling\nRuled by: Kaneka\nVenue: Kotei\n\nText.\n", encoding="utf-8")
    _, out, _ = run_main("lint", str(house))
    line = next(x for x in out.splitlines() if "unknown-metadata" in x)
    for key in ("Date", "Added", "Updated", "Changed", "Clarified", "Judge", "Judges", "Ruled by", "Event",
                "Applies to", "See also"):
        assert key in line.split("known: ", 1)[1], (key, line)
    assert "Venue: Kotei" in line
