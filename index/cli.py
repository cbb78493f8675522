"""``python -m index``: build the index and query it from a shell (the same engine the bot uses).

Every command takes ``--json`` (machine-readable list of results) and ``--limit N``; the index
folder and sources come from ``--index-dir`` / ``--sources`` or ``L5R_INDEX_DIR`` / ``L5R_SOURCES``.
Errors are one line on stderr and a non-zero exit, never a traceback. A build (the first use, or
``build``) shows its stages on stderr (``index.cli_progress``); stdout holds only the results.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glossary.model import Change, Entry, paragraph_name
from index.cli_progress import StderrProgress
from index.results import JSON_FORMAT, ChangeRecord, Hit, citation

if TYPE_CHECKING:
    from index.engine import Engine

EXIT_ERROR = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line (exit 2) instead of the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of text")
    common.add_argument("--limit", type=int, default=None, help="maximum number of results (default 5; changes: all)")
    common.add_argument("--index-dir", type=Path, default=None, help="index folder (env L5R_INDEX_DIR)")
    common.add_argument(
        "--sources", type=Path, nargs="+", default=None, help="source files or folders (env L5R_SOURCES)"
    )
    common.add_argument("-v", "--verbose", action="store_true", help="log index building")
    p = _Parser(prog="python -m index", description="Search the L5R rules index.", parents=[common])
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("build", parents=[common], help="(re)build the index now")
    for name, arg, helptext in (
        ("define", "term", "look up a term by name (typos allowed)"),
        ("search", "question", "rank entries for a natural-language question"),
        ("section", "ref", "find a ruleset section ('II.F', 'Cardinal Rule 2', 'deck construction')"),
        ("banned", "card", "is this card banned in the Obsidian Hand format?"),
    ):
        sp = sub.add_parser(name, parents=[common], help=helptext)
        sp.add_argument(arg, nargs="+")
        sp.add_argument("--as-of", dest="as_of", default=None, help="as the sources stood on this date (YYYY-MM-DD)")
        if name == "search":
            sp.add_argument("--source", default=None, help="only this source (glossary, obsidian-hand, house)")
            sp.add_argument("--since", default=None, help="only entries changed on/after this date (YYYY-MM-DD)")
    ch = sub.add_parser("changes", parents=[common], help="change history, newest first")
    ch.add_argument("--since", default=None)
    ch.add_argument("--until", default=None)
    ch.add_argument("--source", default=None)
    sub.add_parser("stats", parents=[common], help="what is loaded and where the index lives")
    hs = sub.add_parser("history", parents=[common], help="every dated change of an entry, oldest first")
    hs.add_argument("term", nargs="+")
    df = sub.add_parser("diff", parents=[common], help="the digest between two versions of the sources")
    df.add_argument("--old", type=Path, nargs="+", required=True, help="the earlier source files or folders")
    df.add_argument("--new", type=Path, nargs="+", required=True, help="the later source files or folders")
    return p


def _entry_dict(entry: Entry, score: float = 0.0, **extra: Any) -> dict[str, Any]:
    """A name lookup's row: same fields as a search hit; the quote is the entry's opening paragraph."""
    first = 0 if entry.paragraphs else None
    d = Hit(entry, score, [], first, entry.paragraph_changes(first)).to_dict()  # only the quote's dates
    d.update(extra)
    return d


def _change_dict(rec: ChangeRecord) -> dict[str, Any]:
    """A change row: the change's own fields (``kind`` is the change kind) plus the documented result fields.

    ``quote`` is the paragraph the stamp dates (or the opening one), ``changes`` is this one change.
    """
    e, c = rec.entry, rec.change
    para = c.paragraph if c.paragraph is not None and 0 <= c.paragraph < len(e.paragraphs) else 0
    row = rec.to_dict()
    row.update(
        text=e.text,
        format=JSON_FORMAT,
        quote=e.paragraphs[para] if e.paragraphs else "",
        spans=[],
        changes=[c.__dict__.copy()],
        entry_kind=e.kind,
        url=e.url,
        score=None,
    )
    return row


def _wrap(text: str, indent: str = "   ") -> str:
    return "\n".join(
        textwrap.fill(line, 100, initial_indent=indent, subsequent_indent=indent)
        for line in text.splitlines()
        if line.strip()
    )


def _change_line(c: Change, entry: Entry) -> str:
    date = c.date or "?"
    extra = f" ({c.anomaly})" if c.anomaly else ""
    where = " (whole entry)" if c.paragraph is None else f" ({paragraph_name(entry, c.paragraph)})"
    return f"{c.kind.upper()} {date}{where}{extra}"


def _print_hits(hits: list[Hit]) -> None:
    if not hits:
        print("No matching entries.")
        return
    for n, h in enumerate(hits, 1):
        print(f"{n}. {h.entry.label}  [{h.entry.id}]  score {h.score:.2f}")
        print(f"   {citation(h.entry, h.paragraph)}")
        if h.quote:
            print(_wrap(h.quote))
        if h.changes:
            print("   changes: " + "; ".join(_change_line(c, h.entry) for c in h.changes))


def _print_entry(entry: Entry) -> None:
    print(f"{entry.label}  [{entry.id}]")
    print(f"   {citation(entry)}")
    print(_wrap(entry.text))
    if entry.changes:
        print("   changes: " + "; ".join(_change_line(c, entry) for c in entry.changes))


def _emit(args: argparse.Namespace, data: Any, human: Callable[[], None]) -> None:
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        human()


def run(argv: list[str] | None = None) -> int:
    """Parse, open the engine once and run one command; errors are raised for ``main`` to report."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if args.limit is not None and args.limit < 1:
        print("python -m index: error: --limit must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    text = {"define": "term", "search": "question", "section": "ref", "banned": "card", "history": "term"}.get(
        args.command
    )
    if text and not " ".join(getattr(args, text)).strip():  # `define ""` is a mistake, not "No entry found."
        print(f"python -m index: error: {args.command}: the {text} is empty", file=sys.stderr)
        return EXIT_USAGE
    from glossary.loader import unreadable_message, unreadable_sources

    if args.command == "diff":  # two sets of files, no index: parsed with the loaders and compared
        return _diff(args)
    from index.engine import Engine

    unreadable = unreadable_sources(args.sources)
    if unreadable:  # a missing or unreadable source: refuse, rather than answer from part of the rules
        print(f"python -m index: error: {unreadable_message(unreadable)}", file=sys.stderr)
        return EXIT_ERROR
    progress = StderrProgress()
    with progress:
        # `build` must leave an index on disk (the Dockerfile's build step relies on it): no in-memory fallback.
        engine = Engine.open(args.sources, args.index_dir, memory_fallback=args.command != "build", progress=progress)
    # A mistyped --sources path or an unparsable file must not pass for "No entry found.".
    for err in engine.corpus.errors:
        print(f"python -m index: warning: {err}", file=sys.stderr)
    if not engine.corpus.entries:
        engine.close()
        print("python -m index: error: no entries loaded from the sources", file=sys.stderr)
        return EXIT_ERROR
    try:
        return _dispatch(engine, args, progress)
    finally:
        engine.close()


def _dispatch(engine: Engine, args: argparse.Namespace, progress: StderrProgress) -> int:
    cmd = args.command
    limit = args.limit or 5
    if cmd == "history" or getattr(args, "as_of", None) is not None:  # dated answers: index.cli_dated
        from index import cli_dated

        return cli_dated.dispatch(engine, args)
    if cmd in ("build", "stats"):
        stats = engine.stats()
        if cmd == "build" and not stats["rebuilt"]:  # opening just built it (none, stale or corrupt): once is enough
            with progress:  # the engine reports to it (Engine.open above)
                stats = engine.reload(isolated=False)  # a command line has no event loop to keep free
        _emit(args, stats, lambda: print("\n".join(f"{k}: {v}" for k, v in stats.items())))
        return 0
    if cmd == "search":
        hits = engine.search(" ".join(args.question), limit=limit, source=args.source, since=args.since)
        _emit(args, [h.to_dict() for h in hits], lambda: _print_hits(hits))
        return 0
    if cmd == "section":
        hits = engine.section(" ".join(args.ref), limit=limit)
        _emit(args, [h.to_dict() for h in hits], lambda: _print_hits(hits))
        return 0
    if cmd == "define":
        r = engine.define(" ".join(args.term), limit=limit)
        # Every entry of the name asked for when several share it ("ninjitsu"), else the one found.
        answers = list(r.same_name) or ([r.entry] if r.entry else [])
        if r.entry is not None and r.entry not in answers:
            answers.insert(0, r.entry)
        rows = [_entry_dict(e, how=r.how, match="entry") for e in answers] + [
            _entry_dict(c, how=r.how, match="candidate") for c in r.candidates if c not in answers
        ]

        def human() -> None:
            for e in answers:
                _print_entry(e)
            if not answers and not r.candidates:
                print("No entry found.")
            others = [c for c in r.candidates if c not in answers]
            if others:
                print(
                    ("See also: " if answers else "Did you mean: ")
                    + "; ".join(f"{c.label} [{c.id}]" for c in others)
                )

        _emit(args, rows, human)
        return 0
    if cmd == "changes":
        recs: list[ChangeRecord] = engine.changes(args.since, args.until, args.source)
        shown = recs[: args.limit] if args.limit else recs

        def human_changes() -> None:
            for r in shown:
                anomaly = f"  ({r.change.anomaly})" if r.change.anomaly else ""
                print(f"{r.change.date or '?':10}  {r.change.kind:9}  {r.entry.title}  [{r.entry.id}]{anomaly}")
            if not shown:
                print("No changes.")

        _emit(args, [_change_dict(r) for r in shown], human_changes)
        return 0
    if cmd == "banned":
        b = engine.banned(" ".join(args.card))
        matched = [b.record] if b.record else b.matches
        rows = [_entry_dict(m, banned=True, banned_on=b.banned_on, how=b.how) for m in matched] + [
            _entry_dict(n, banned=False, near=True) for n in b.near
        ]

        def human_banned() -> None:
            if b.how == "version" and b.record:
                print(f"One version of {b.query} is on the banned list; other versions are not named on it.")
            elif len(b.matches) > 1:
                print(f"{len(b.matches)} banned cards have {b.query!r} in their name:")
            for m in matched:
                when = f" (since {b.banned_on})" if b.banned_on and m is b.record else ""
                print(f"BANNED: {m.title}{when} — {citation(m)}")
            if not matched:
                print(f"Not on the banned list: {b.query}")
                if b.how == "other-version" and b.near:
                    print(f"The list names {b.near[0].title} with no experience level; the experienced version typed "
                          "is not named on it.")
                if b.kinds:
                    print("The list also bans by kind of card: " + "; ".join(k.title for k in b.kinds))
            if b.near:
                print("Closest banned names: " + "; ".join(n.title for n in b.near))

        _emit(args, rows, human_banned)
        return 0
    raise AssertionError(cmd)  # pragma: no cover - argparse restricts commands


def _diff(args: argparse.Namespace) -> int:
    """``diff --old … --new …``: the facts between two versions of the sources (``glossary.diff``); the bot
    posts the same facts composed as an answer (``python -m bot diff`` prints that answer)."""
    from glossary.diff import diff
    from glossary.loader import load_corpus, unreadable_message, unreadable_sources

    corpora = []
    for name in ("old", "new"):
        paths = getattr(args, name)
        unreadable = unreadable_sources(paths)
        if unreadable:
            print(f"python -m index: error: --{name}: {unreadable_message(unreadable)}", file=sys.stderr)
            return EXIT_ERROR
        corpus = load_corpus(paths)
        for err in corpus.errors:
            print(f"python -m index: warning: --{name}: {err}", file=sys.stderr)
        if not corpus.entries:
            print(f"python -m index: error: --{name}: no entries loaded", file=sys.stderr)
            return EXIT_ERROR
        corpora.append(corpus)
    found = diff(corpora[0].entries, corpora[1].entries)
    _emit(args, found.to_dict(), lambda: print(digest_text(found)))
    return 0


def digest_text(found: Any) -> str:
    """The digest's facts as plain lines: each change with its file and lines, texts verbatim."""
    from glossary.diff import SourceDiff

    assert isinstance(found, SourceDiff)
    if found.empty:
        return "No changes: the two versions have the same entries and paragraph texts."
    counts = found.counts()
    out = ["Digest: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items() if v)]
    out += [f"FILE ADDED  {f}" for f in found.files_added] + [f"FILE REMOVED  {f}" for f in found.files_removed]
    for change in found.entries:
        e = change.entry
        out.append(f"{change.status.upper():8} {e.label}  [{e.id}]  {citation(e)}")
        for p in change.paragraphs:
            if p.old_index is not None and change.old is not None:
                where = f"{paragraph_name(change.old, p.old_index)}, {_lines(change.old, p.old_index)}"
                out.append(f"   before ({where}):")
                out.append(_indent(p.before or ""))
            if p.new_index is not None and change.new is not None:
                label = "after" if p.status == "changed" else "added"
                where = f"{paragraph_name(change.new, p.new_index)}, {_lines(change.new, p.new_index)}"
                out.append(f"   {label} ({where}):")
                out.append(_indent(p.after or ""))
        for stamp in change.stamps:
            out.append(f"   new stamp {stamp.raw} (line {stamp.line})")
    for e in found.updates:
        out.append(f"NEW UPDATE  {e.label}  {citation(e)}")
        out.append(_indent(e.text))
    for e in found.banned_added:
        out.append(f"BANNED  {e.title}" + (f" ({e.group})" if e.group else "") + f"  {citation(e)}")
    for e in found.banned_removed:
        out.append(f"NO LONGER BANNED  {e.title}  (was {citation(e)})")
    return "\n".join(out)


def _indent(text: str) -> str:
    """Verbatim text under a label: each line indented, nothing re-wrapped."""
    return "\n".join("      " + line for line in text.split("\n"))


def _lines(entry: Entry, index: int) -> str:
    first, last = entry.paragraph_lines(index)
    span = f"line {first}" if first == last else f"lines {first}-{last}"
    return f"{entry.location.file} {span}"


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error already printed in one line (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except ValueError as exc:
        print(f"python -m index: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("python -m index: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # one line, never a traceback
        print(f"python -m index: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR
