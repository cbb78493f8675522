"""A host's house ruling dated before a later change stamp of a rule it applies to (issue 18): lint reports it
("rule changed on D after this ruling of D0"), answers say it was made before the rule changed, and an
``Updated:`` date after the change (a judge looked at it again) clears both."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from bot.app.compose import ruling_credit
from glossary.cli import main
from glossary.loader import SHIPPED_SOURCES, load_corpus

OLD = "## Terrain from long ago\nDate: 2008-01-01\nJudge: Old Judge\nApplies to: Terrain\n\nOne Terrain only.\n"
LOOKED_AT = "## Terrain looked at again\nDate: 2008-01-01\nUpdated: 2026-11-01\nApplies to: Terrain\n\nChecked.\n"


def lint(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["lint", *args])
    return code, out.getvalue()


def test_lint_reports_a_ruling_older_than_its_rules_change(tmp_path: Path) -> None:
    house = tmp_path / "house.md"
    house.write_text(OLD + "\n" + LOOKED_AT, encoding="utf-8")
    code, out = lint("--strict", str(house))
    assert code == 1
    assert out.splitlines() == [
        "house.md:4: warning: rule-changed-after-ruling: 'Terrain from long ago' applies to 'Terrain': rule changed "
        "on 2008-05-21 after this ruling of 2008-01-01; check it still stands, then give it an 'Updated:' date"
    ]


def test_answers_say_the_ruling_was_made_before_the_rule_changed(tmp_path: Path) -> None:
    house = tmp_path / "house.md"
    house.write_text(OLD + "\n" + LOOKED_AT, encoding="utf-8")
    corpus = load_corpus([SHIPPED_SOURCES, house])
    old, looked_at = (next(e for e in corpus.entries if e.title == t) for t in
                      ("Terrain from long ago", "Terrain looked at again"))  # fmt: skip
    assert old.changed_since == "2008-05-21" and looked_at.changed_since is None
    assert ruling_credit(old) == " (Old Judge, 2008-01-01; made before the rule changed on 2008-05-21)"
    assert ruling_credit(looked_at) == " (2008-01-01)"


def test_the_shipped_examples_rest_on_rules_as_they_read() -> None:
    code, out = lint("--strict", str(Path(__file__).resolve().parents[2] / "glossary" / "house_examples"))
    assert code == 0 and "rule-changed-after-ruling" not in out
