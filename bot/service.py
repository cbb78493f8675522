"""The judge's commands, Discord-free: engine query -> rendered ``Answer``.

The cogs and the console both call these methods, so the two front ends cannot drift.
Every answer can be rebuilt from its ``(kind, arg)`` (``Judge.rebuild``), which is what lets
buttons carry their whole state in a custom id and keep working after a restart.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from datetime import date
from importlib import metadata
from typing import TYPE_CHECKING

from glossary.model import SOURCE_LABELS, Entry

from . import render
from .render import Answer, Renderer, echo, escape

if TYPE_CHECKING:
    from index.engine import Engine
    from index.overlay import Overlay

ABOUT, HELP = "i", "h"
QUERY_LIMIT = 300  # characters of a question we search on (a quoted message can be long)

HELP_TEXT = [
    ("/define term", "A glossary term in full: verbatim text, change dates, citation.", "/define target"),
    (
        "/ask question",
        "Search the rules for a ruling question; open any result in full.",
        "/ask is a terrain an enemy card",
    ),
    ("/rule section", "A rule section by number or name.", "/rule cardinal rule 2"),
    ("/changes [since] [until] [source]", "Dated rule changes, newest first.", "/changes since:2008-01-01"),
    (
        "/banned [card]",
        "Is a card banned in the Obsidian Hand format, since when, in which category; no card: the whole list.",
        "/banned moshi eihime",
    ),
    ("/about", "Loaded sources, entry counts, index build time, version.", "/about"),
    ("Look up rules", "Message menu (Apps › Look up rules): runs /ask on that message's text.", ""),
    ("/reload", "Owner or Manage Server only: rebuild the index from the sources.", "/reload"),
    (
        "/ruling …",
        "This server's own rulings: `list`, `history`, `export` for everyone; `add`, `edit`, `retire`, "
        "`restore`, `import` for its judges; `config` for its admins.",
        "/ruling list",
    ),
]


class UserError(ValueError):
    """Bad input from a user; the message is shown to them as is."""


def version() -> str:
    """The installed package version, for /about ("unknown" when run from a source tree)."""
    try:
        return metadata.version("l5r-judge")
    except metadata.PackageNotFoundError:
        return "unknown"


def parse_date(value: str | None, name: str, *, end: bool = False) -> str | None:
    """Accept 2008-01-01, 2008-01 or 2008 (as the start, or with ``end`` the end, of that span)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    m = re.fullmatch(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?", text)
    if not m:
        raise UserError(f"`{name}` must be a date like 2008-01-31 (or 2008-01, or 2008); got “{echo(text)}”.")
    year, month, day = int(m[1]), int(m[2] or (12 if end else 1)), m[3]
    try:
        if day is None:
            first_next = date(year + (month == 12), month % 12 + 1, 1)
            parsed = date.fromordinal(first_next.toordinal() - 1) if end else date(year, month, 1)
        else:
            parsed = date(year, month, int(day))
    except ValueError:
        raise UserError(f"`{name}`: {echo(text)} is not a real date.") from None
    return parsed.isoformat()


def parse_source(value: str | None) -> str | None:
    """A source key from its key or its label (the console types either; Discord sends the key)."""
    if value is None or not value.strip():
        return None
    key = value.strip().lower()
    for source, label in SOURCE_LABELS.items():
        if key in (source, label.lower()):
            return source
    raise UserError(f"`source` must be one of: {', '.join(SOURCE_LABELS)}; got “{echo(value.strip())}”.")


class Judge:
    """The commands over one Engine, for the life of the process: ``Engine.reload`` swaps the rebuilt
    index in place, so nothing here is recreated on /reload.

    ``scoped(overlay)`` gives the same commands for one server: its own rulings (``index.overlay``)
    merged into every answer; ``notice`` is a line its next answer opens with (e.g. rulings unavailable).
    """

    def __init__(
        self,
        engine: Engine,
        rulebook_url: str | None = None,
        overlay: Overlay | None = None,
        notice: str | None = None,
    ) -> None:
        self.engine = engine
        self.rulebook_url = rulebook_url
        self.overlay = overlay
        self.notice = notice
        rulings = overlay.applying_to if overlay is not None else None
        self.renderer = Renderer(self.lookup, rulebook_url, children=engine.children, rulings=rulings)

    def scoped(self, overlay: Overlay | None, notice: str | None = None) -> Judge:
        """These commands as one server sees them (cheap: shares the engine)."""
        if overlay is None and notice is None:
            return self
        return Judge(self.engine, self.rulebook_url, overlay, notice)

    def run(self, make: Callable[[Judge], Answer]) -> Answer:
        """``make(self)``, opened with this judge's notice when there is one."""
        answer = make(self)
        return with_notice(answer, self.notice) if self.notice else answer

    def lookup(self, entry_id: str) -> Entry | None:
        return self.engine.get(entry_id, self.overlay)

    # -- commands -------------------------------------------------------------------------------

    def define(self, term: str) -> Answer:
        term = _clean(term, "term")
        exact = self.lookup(term)  # autocomplete sends entry ids
        if exact is not None:
            return self.renderer.entry(exact)
        return self.renderer.define(term, self.engine.define(term, overlay=self.overlay))

    def open(self, entry_id: str) -> Answer:
        entry = self.lookup(entry_id)
        if entry is None:
            return self.renderer.message(
                "Entry not found",
                f"No entry “{echo(entry_id)}” in the loaded rules (was it renamed?).",
                kind=render.ENTRY,
                arg=entry_id,
            )
        return self.renderer.entry(entry)

    def ask(self, question: str) -> Answer:
        question = _clean(question, "question")[:QUERY_LIMIT]
        hits = self.engine.search(question, limit=render.ASK_LIMIT, overlay=self.overlay)
        # Nothing close: say so, and offer the nearest terms rather than a list of noise.
        near = self.engine.nearest_terms(question, limit=render.NEAR_LIMIT) if not hits else []
        return self.renderer.ask(question, hits, near)

    def rule(self, ref: str) -> Answer:
        ref = _clean(ref, "section")
        exact = self.engine.get(ref)
        if exact is not None:
            return self.renderer.entry(exact, kind=render.RULE, arg=ref)
        hits = self.engine.section(ref)
        return self.renderer.rule(ref, hits, [] if hits else self.engine.section_family(ref))

    def changes(self, since: str | None = None, until: str | None = None, source: str | None = None) -> Answer:
        since_iso = parse_date(since, "since")
        until_iso = parse_date(until, "until", end=True)
        if since_iso and until_iso and since_iso > until_iso:
            raise UserError(f"`since` ({since_iso}) is after `until` ({until_iso}).")
        source_key = parse_source(source)
        records = self.engine.changes(since=since_iso, until=until_iso, source=source_key, overlay=self.overlay)
        return self.renderer.changes(records, since_iso, until_iso, source_key)

    def banned(self, card: str | None = None) -> Answer:
        """One card's legality, or with no card the whole banned list."""
        if not (card or "").strip():
            return self.renderer.banned_list(self.engine.banned_list())
        card = _clean(card, "card")
        picked = self.engine.get(card)  # autocomplete sends the banned record's id
        if picked is not None and picked.kind == "banned":
            card = picked.title
        return self.renderer.banned(self.engine.banned(card))

    def about(self) -> Answer:
        corpus = self.engine.corpus
        stats = self.engine.stats()
        by_source = Counter(e.source for e in corpus.entries)
        lines = [f"**Version** {version()}", f"**Entries** {len(corpus.entries)}"]
        lines += [f"- {SOURCE_LABELS.get(s, s)}: {n}" for s, n in sorted(by_source.items())]
        if self.overlay is not None:
            lines.append(f"- This server's rulings: {len(self.overlay)}")
        lines.append(f"**Source files** ({len(corpus.files)})")
        lines += [f"- {escape(f)}" for f in corpus.files]
        built = stats.get("built_at")
        seconds = stats.get("build_seconds")
        if built:
            lines.append(f"**Index built** {built}" + (f" in {float(seconds):.2f} s" if seconds is not None else ""))
        if corpus.errors:
            lines.append(f"**Files that failed to load** {len(corpus.errors)}")
            lines += [f"- {escape(str(e))}" for e in corpus.errors[:5]]
        if corpus.anomalies:
            lines.append(f"**Anomalies noted** {len(corpus.anomalies)} (see `python -m glossary lint`)")
        return self.renderer.message("About the L5R rules judge", "\n".join(lines), kind=ABOUT)

    def help(self) -> Answer:
        blocks = [f"**{name}** — {what}" + (f"\n`{example}`" if example else "") for name, what, example in HELP_TEXT]
        blocks.append(
            "Every lookup takes `private:True` to answer only you; a private answer has a "
            "**Post in channel** button. Buttons open cross-references and page through results."
        )
        if any(e.source == "house" for e in self.engine.corpus.entries):
            blocks.append(
                "This server's **house rulings** are shown with the entries they apply to, labelled "
                "**House ruling** with the judge and date; `/changes` with source House rulings lists them."
            )
        return self.renderer.message("L5R rules judge — commands", "\n\n".join(blocks), kind=HELP)

    def rebuild(self, kind: str, arg: str) -> Answer:
        """Recreate the answer a button refers to from its ``(kind, arg)``."""
        if kind == render.CHANGES:
            since, until, source = (arg.split("|") + ["", "", ""])[:3]
            return self.changes(since or None, until or None, source or None)
        by_arg: dict[str, Callable[[str], Answer]] = {
            render.ENTRY: self.open,
            render.DEFINE: self.define,
            render.ASK: self.ask,
            render.RULE: self.rule,
            render.BANNED: self.banned,
            ABOUT: lambda _: self.about(),
            HELP: lambda _: self.help(),
        }
        if kind not in by_arg:
            raise UserError("That button is not one this bot understands.")
        return by_arg[kind](arg)


def with_notice(answer: Answer, notice: str) -> Answer:
    """``answer`` with ``notice`` (italic) opening its first page, still within Discord's embed limits."""
    page = answer.pages[0]
    note = f"*{escape(notice)}*"
    room = min(render.DESCRIPTION_LIMIT, render.EMBED_TOTAL_LIMIT - render.embed_size(answer.title, page)
               + len(page.description))  # fmt: skip
    text = f"{note}\n\n{page.description}" if page.description else note
    page.description = render.shorten(text, max(room, len(note)))
    return answer


def _clean(text: str, name: str) -> str:
    """Collapse whitespace and drop control characters (a pasted NUL or escape code is never meant)."""
    printable = "".join(ch if unicodedata.category(ch) != "Cc" else " " for ch in (text or ""))
    cleaned = " ".join(printable.split())
    if not cleaned:
        raise UserError(f"Please give a {name}.")
    return cleaned
