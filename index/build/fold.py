"""Fold reviewed question -> paragraph pairs into the shipped kept questions.

Judges confirm which paragraph answers a question (``/ask``'s "Not the answer?", ``docs/judges.md``), and the
host exports the confirmed pairs as JSON lines (``python -m bot.rulings export-feedback``). After review, the
good ones belong in ``index/asked.json`` (a question a paragraph answers) or ``index/unanswered.json`` (one the
loaded rules were checked not to answer), where every server's answers gain from them. This is that step:

    python -m index.build.fold FILE.jsonl [...] [--dry-run]

Each line is checked against the rule documents loaded now before anything is written: the entry must exist,
the paragraph must be in it, and its text must still be the text the pair was confirmed on (``digest``); a
line that fails names the file and line and nothing is written. A question already kept for that paragraph (or
as not covered) is skipped, so folding a file twice changes nothing. Records added carry ``from`` (the file's
name) so a kept question can be traced to where it came from.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from glossary.model import Corpus
from index.build import asked, unanswered


class FoldError(ValueError):
    """A line of a pairs file cannot be folded (the message names the file and the line)."""


@dataclass
class Folded:
    """What folding added and skipped, per kind."""

    skipped: int = 0
    asked_records: list[dict[str, object]] = field(default_factory=list)
    not_covered_records: list[dict[str, str]] = field(default_factory=list)

    @property
    def asked(self) -> int:
        return len(self.asked_records)

    @property
    def not_covered(self) -> int:
        return len(self.not_covered_records)


def _text(row: dict[str, object], where: str) -> str:
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise FoldError(f"{where}: no 'question' text")
    return " ".join(question.split())


def pairs(path: Path, corpus: Corpus) -> list[tuple[str, str | None, int | None]]:
    """The (question, entry id, paragraph) of each line of ``path``; entry id None for a question confirmed as not
    covered. Raises ``FoldError`` naming the file and line for the first line that cannot be folded."""
    by_id = corpus.by_id()
    out: list[tuple[str, str | None, int | None]] = []
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise FoldError(f"{path.name}: cannot read it ({exc})") from None
    for n, line in enumerate(lines, 1):
        where = f"{path.name}, line {n}"
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FoldError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise FoldError(f"{where}: expected an object")
        question = _text(row, where)
        if row.get("not_covered") is True:
            out.append((question, None, None))
            continue
        entry_id, p = row.get("entry_id"), row.get("paragraph")
        entry = by_id.get(entry_id) if isinstance(entry_id, str) else None
        if entry is None:
            raise FoldError(f"{where}: no entry {entry_id!r} in the loaded rules")
        if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < len(entry.paragraphs):
            raise FoldError(f"{where}: {entry.id} has no paragraph {p!r} (0 to {len(entry.paragraphs) - 1})")
        if row.get("digest") != asked.digest(entry.paragraphs[p]):
            raise FoldError(
                f"{where}: {entry.id} paragraph {p} is not the text this pair was confirmed on "
                "(its digest differs): review it against the paragraph as loaded now"
            )
        out.append((question, entry.id, p))
    return out


def fold(
    paths: list[Path],
    corpus: Corpus,
    asked_path: Path | None = None,
    unanswered_path: Path | None = None,
    write: bool = True,
) -> Folded:
    """Add every pair of ``paths`` to the kept questions files (defaults: the shipped ones); all lines of all files
    are checked first, so a bad line writes nothing."""
    asked_path, unanswered_path = asked_path or asked.DATA, unanswered_path or unanswered.DATA
    found = [(path, pair) for path in paths for pair in pairs(path, corpus)]
    kept = json.loads(asked_path.read_text("utf-8"))
    nope = json.loads(unanswered_path.read_text("utf-8"))
    have = {(r["entry"], r["digest"], " ".join(q.split())) for r in kept for q in r["questions"]}
    have_not = {" ".join(r["q"].split()) for r in nope["questions"]}
    by_id = corpus.by_id()
    out = Folded()
    for path, (question, entry_id, p) in found:
        if entry_id is None:
            if question in have_not:
                out.skipped += 1
                continue
            have_not.add(question)
            out.not_covered_records.append({"q": question, "from": path.name})
            continue
        assert p is not None
        dig = asked.digest(by_id[entry_id].paragraphs[p])
        if (entry_id, dig, question) in have:
            out.skipped += 1
            continue
        have.add((entry_id, dig, question))
        out.asked_records.append(
            {"entry": entry_id, "paragraph": p, "digest": dig, "from": path.name, "questions": [question]}
        )
    if write and out.asked_records:
        asked_path.write_text(json.dumps(kept + out.asked_records, indent=1, ensure_ascii=False) + "\n", "utf-8")
    if out.not_covered_records:
        # ``checked`` says which paragraphs every kept not-covered question was read against (``unanswered.usable``):
        # folding more is only sound when the rules loaded now are those paragraphs
        unchecked = set(unanswered.paragraph_digests(corpus)) - set(nope["checked"])
        if unchecked:
            raise FoldError(
                f"{len(unchecked)} paragraph(s) of the loaded rules are not among those the questions in "
                f"{unanswered_path.name} were checked against: read those questions against them, run "
                "`python -m index.build.unanswered --write-checked`, then fold"
            )
    if write and out.not_covered_records:
        nope["questions"] += out.not_covered_records
        unanswered_path.write_text(json.dumps(nope, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    from glossary.loader import load_corpus

    parser = argparse.ArgumentParser(prog="python -m index.build.fold", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="JSON lines, as `python -m bot.rulings export-feedback`")
    parser.add_argument("--dry-run", action="store_true", help="check and count, write nothing")
    args = parser.parse_args(argv)
    try:
        done = fold(args.files, load_corpus(), write=not args.dry_run)
    except FoldError as exc:
        print(f"fold: {exc}; nothing written", file=sys.stderr)
        return 1
    verb = "would add" if args.dry_run else "added"
    print(
        f"{verb} {done.asked} kept question(s) to {asked.DATA.name} and {done.not_covered} to "
        f"{unanswered.DATA.name}; {done.skipped} already kept"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
