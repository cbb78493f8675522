"""``python -m glossary``: summary, ``parse`` and ``lint`` over the source documents.

The JSON printed by ``parse --json`` is a documented, stable format (see README) that other
tools read, so it is exactly ``Entry.to_dict()`` and nothing else.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from glossary.loader import (
    ENV_SOURCES,
    default_sources,
    expand_named,
    load_corpus,
    unreadable_message,
    unreadable_sources,
)
from glossary.model import ANOMALY_SEVERITY, SEVERITIES, Corpus


def _paths(args: argparse.Namespace) -> list[Path] | None:
    """Paths given as arguments or with ``--sources``; None means the configured sources."""
    given = [*args.paths, *(args.sources or [])]
    return [Path(p) for p in given] if given else None


def _report_errors(corpus: Corpus) -> None:
    """One ``error:`` line per file that could not be read, on stderr so ``--json`` output stays clean."""
    for error in corpus.errors:
        print(f"error: {error}", file=sys.stderr)


def cmd_summary(args: argparse.Namespace) -> int:
    corpus = load_corpus(_paths(args))
    by_source = Counter(e.source for e in corpus.entries)
    by_kind = Counter(e.kind for e in corpus.entries)
    print(f"{len(corpus.entries)} entries from {len(corpus.files)} file(s)")
    for source, count in sorted(by_source.items()):
        print(f"  {source}: {count}")
    print("  by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items())))
    stamps = sum(len(e.changes) for e in corpus.entries)
    print(f"{stamps} dated changes; {len(corpus.anomalies)} anomalies (python -m glossary lint)")
    _report_errors(corpus)
    return 1 if corpus.errors else 0


def cmd_parse(args: argparse.Namespace) -> int:
    corpus = load_corpus(_paths(args))
    if args.json:
        json.dump([e.to_dict() for e in corpus.entries], sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        for entry in corpus.entries:
            dates = ", ".join(f"{c.kind} {c.date}" for c in entry.changes)
            print(f"{entry.id}  [{entry.location.file}:{entry.location.first_line}]  {dates}")
    _report_errors(corpus)
    return 1 if corpus.errors else 0


def _choices(values: list[str] | None) -> list[str]:
    """``--kind a --kind b,c`` -> ``[a, b, c]`` (repeatable, and comma lists), blanks dropped."""
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 or word == "info" else f"{count} {word}s"


def _lint_corpus(args: argparse.Namespace) -> tuple[Corpus, set[str] | None]:
    """The corpus to lint, and the cited names of the files to report (None: every file).

    Files named on the command line are read together with the configured sources (or ``--against``), so
    a house-rulings file's ``Applies to: Terrain`` resolves as it will in the bot, instead of every
    reference looking dangling because only that file was loaded; ``--alone`` reads just the files named.
    """
    given = _paths(args)
    if given is None:
        return load_corpus(None), None
    named, _ = expand_named(given)
    context = [] if args.alone else [Path(p) for p in args.against] if args.against else default_sources()
    # The files named come first, so a file that is also among the context keeps the name it was given by.
    return load_corpus([*given, *context]), {name for _, name in named}


def cmd_lint(args: argparse.Namespace) -> int:
    """Anomalies never fail a load; ``--strict`` makes errors and warnings fail the command (CI on edited
    sources). Info (a reference to a rulebook chapter that is not loaded, an update log out of date order)
    is shown but never fails it. ``--kind`` / ``--severity`` narrow what is shown and what ``--strict`` counts.
    """
    kinds, severities = _choices(args.kind), _choices(args.severity)
    bad = [s for s in severities if s not in SEVERITIES]
    if bad:
        print(f"error: unknown severity {bad[0]!r} (choose from {', '.join(SEVERITIES)})", file=sys.stderr)
        return 2
    corpus, checked = _lint_corpus(args)
    if checked is not None:  # only the files named are reported; the rest is what they are checked against
        corpus.anomalies = [a for a in corpus.anomalies if a.file in checked]
    known = set(ANOMALY_SEVERITY) | {a.kind for a in corpus.anomalies}
    unknown = [k for k in kinds if k not in known]
    if unknown:
        print(f"error: unknown anomaly kind {unknown[0]!r} (known: {', '.join(sorted(known))})", file=sys.stderr)
        return 2
    shown = [
        a for a in corpus.anomalies
        if (not kinds or a.kind in kinds) and (not severities or a.severity in severities)
    ]
    for anomaly in sorted(shown, key=lambda a: (a.file, a.line)):
        print(f"{anomaly.file}:{anomaly.line}: {anomaly.severity}: {anomaly.kind}: {anomaly.message}")
    _report_errors(corpus)
    counts = Counter(a.severity for a in shown)
    total = len(corpus.anomalies)
    noun = "anomaly" if total == 1 else "anomalies"
    what = f"{len(shown)} of {total} {noun} shown" if len(shown) != total else f"{total} {noun}"
    by_severity = ", ".join(_plural(counts[s], s) for s in SEVERITIES)
    print(f"{what} ({by_severity}); {len(corpus.errors)} unreadable file(s)", file=sys.stderr)
    if corpus.errors:
        return 1
    return 1 if (args.strict and (counts["error"] or counts["warning"])) else 0


# name -> (handler, help); the order is the order of ``--help``.
_COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str]] = {
    "parse": (cmd_parse, "print the parsed entries"),
    "lint": (cmd_lint, "list anomalies with file:line"),
    "summary": (cmd_summary, "count what was parsed (the default)"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m glossary",
        description=f"Parse L5R rule documents. Sources default to ${ENV_SOURCES} or the shipped corpus.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("paths", nargs="*", help="source files or folders (default: configured sources)")
    common.add_argument("--sources", action="append", metavar="PATH", help="another source file or folder")
    sub = parser.add_subparsers(dest="command")
    commands = {}
    for name, (func, help_text) in _COMMANDS.items():
        commands[name] = sub.add_parser(name, parents=[common], help=help_text)
        commands[name].set_defaults(func=func)
    commands["parse"].add_argument("--json", action="store_true", help="a JSON array of entries (stable format)")
    lint = commands["lint"]
    lint.add_argument("--strict", action="store_true", help="exit 1 when an error or warning is shown (not info)")
    lint.add_argument(
        "--kind", action="append", metavar="KIND", help="show only this kind (repeatable, or a comma list)"
    )
    lint.add_argument(
        "--against",
        action="append",
        metavar="PATH",
        help="check the files named against these sources (repeatable; default: the configured sources)",
    )
    lint.add_argument("--alone", action="store_true", help="read only the files named, with nothing to check against")
    lint.add_argument(
        "--severity",
        action="append",
        metavar="LEVEL",
        help=f"show only these severities: {', '.join(SEVERITIES)} (repeatable, or a comma list)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["export"]:  # the HTML rulebook renders the judge's answers, so the application writes it
        print("error: the HTML rulebook is written by `python -m bot export OUT_DIR` now", file=sys.stderr)
        return 2
    if not argv or (argv[0] not in _COMMANDS and argv[0] not in {"-h", "--help"}):
        # The summary is the default: `python -m glossary PATH` / `--sources PATH` mean `summary PATH`.
        argv = ["summary", *argv]
    args = parser.parse_args(argv)
    unreadable = unreadable_sources(_paths(args))
    if unreadable:  # a missing or unreadable source: one line and exit 1, not a report on part of the rules
        print(f"error: {unreadable_message(unreadable)}", file=sys.stderr)
        return 1
    try:
        return args.func(args)
    except BrokenPipeError:
        return 0
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


__all__ = ["main", "build_parser"]
