"""``python -m glossary``: summary, ``parse``, ``lint`` and ``export`` over the source documents.

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

from glossary.export_html import export_html
from glossary.loader import ENV_SOURCES, load_corpus, unreadable_message, unreadable_sources
from glossary.model import Corpus


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


def cmd_lint(args: argparse.Namespace) -> int:
    """Anomalies never fail a load; ``--strict`` makes them fail the command (for CI on edited sources)."""
    corpus = load_corpus(_paths(args))
    for anomaly in sorted(corpus.anomalies, key=lambda a: (a.file, a.line)):
        print(anomaly)
    _report_errors(corpus)
    total = len(corpus.anomalies)
    print(f"{total} anomal{'y' if total == 1 else 'ies'}, {len(corpus.errors)} error(s)", file=sys.stderr)
    if corpus.errors:
        return 1
    return 1 if (args.strict and total) else 0


def cmd_export(args: argparse.Namespace) -> int:
    corpus = load_corpus(_paths(args))
    _report_errors(corpus)
    try:
        written = export_html(corpus.entries, Path(args.html))
    except ValueError as exc:  # duplicate ids: the linker renames them, so this means a bug, said in one line
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {len(written)} file(s) to {args.html}")
    return 1 if corpus.errors else 0


# name -> (handler, help); the order is the order of ``--help``.
_COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str]] = {
    "parse": (cmd_parse, "print the parsed entries"),
    "lint": (cmd_lint, "list anomalies with file:line"),
    "export": (cmd_export, "render a static HTML rulebook"),
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
    commands["lint"].add_argument("--strict", action="store_true", help="exit 1 when any anomaly is found")
    commands["export"].add_argument(
        "--html", required=True, metavar="OUT_DIR", help="folder to write the site into"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
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
