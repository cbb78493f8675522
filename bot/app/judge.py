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

from bot.app import ban_verdict, commands, dated
from bot.app.answer import Answer, Fact, Group, Line, Note, Run, code, runs, strong
from bot.app.commands import ABOUT, BY_LETTER, CHANGES, ENTRY, HELP, HISTORY, RULE
from bot.app.compose import ASK_LIMIT, NEAR_LIMIT, Composer, echo
from bot.app.formats import FormatView, left_out_line, loaded, noted
from glossary.kinds import SOURCE_LABELS, is_ruling
from glossary.model import Entry

if TYPE_CHECKING:
    from bot.app.settings import Settings
    from index.engine import Engine
    from index.query.overlay import Overlay
    from index.results import BannedResult

QUERY_LIMIT = 300  # characters of a question we search on (a quoted message can be long)
# /about's pointer to the privacy statement: PRIVACY_URL where the host published it, else the repository path.
PRIVACY = (
    "What the bot stores (this server's rulings, with judges' Discord ids and names), why, for how long "
    "(deleted {days} after the bot is removed), and how to have it deleted: "
)
PRIVACY_DOC = "docs/privacy.md"


class UserError(ValueError):
    """Bad input from a user; the message (plain text, what they typed quoted in it) is shown to them."""


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
        raise UserError(f"{name} must be a date like 2008-01-31 (or 2008-01, or 2008); got “{_short(text)}”.")
    year, month, day = int(m[1]), int(m[2] or (12 if end else 1)), m[3]
    try:
        if day is None:
            first_next = date(year + (month == 12), month % 12 + 1, 1)
            parsed = date.fromordinal(first_next.toordinal() - 1) if end else date(year, month, 1)
        else:
            parsed = date(year, month, int(day))
    except ValueError:
        raise UserError(f"{name}: {_short(text)} is not a real date.") from None
    return parsed.isoformat()


def parse_source(value: str | None) -> str | None:
    """A source key from its key, its label or a recognisable part of either ("obsidian hand", "Obsidian-Hand",
    "house rulings"): the console types any of these; Discord sends the key."""
    if value is None or not value.strip():
        return None

    def squeeze(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", text.lower())

    typed = squeeze(value)
    if len(typed) >= 4:
        for source, label in SOURCE_LABELS.items():
            if typed in (squeeze(source), squeeze(label)) or typed in squeeze(label) or typed in squeeze(source):
                return source
    allowed = "; ".join(f"{source} ({label})" for source, label in SOURCE_LABELS.items())
    raise UserError(f"source must be one of: {allowed}; got “{_short(value.strip())}”.")


class Judge:
    """The commands over one Engine, for the life of the process: ``Engine.reload`` swaps the rebuilt
    index in place, so nothing here is recreated on /reload.

    ``scoped(overlay)`` gives the same commands for one server: its own rulings (``index.query.overlay``)
    merged into every answer; ``notice`` is a line its next answer opens with (e.g. rulings unavailable).
    ``formats``: the formats it plays (``bot.app.formats``; the overlay's when there is one; None: all).
    """

    def __init__(
        self,
        engine: Engine,
        rulebook_url: str | None = None,
        overlay: Overlay | None = None,
        notice: str | None = None,
        *,
        privacy_url: str | None = None,
        grace_days: int = 30,
        formats: frozenset[str] | None = None,
    ) -> None:
        self.engine = engine
        self.rulebook_url = rulebook_url
        self.overlay = overlay
        self.notice = notice
        self.privacy_url = privacy_url  # where the host published the privacy statement (PRIVACY_URL)
        self.grace_days = grace_days  # L5R_DATA_GRACE_DAYS, said in /about as the host set it
        rulings = overlay.applying_to if overlay is not None else None
        self.formats = overlay.formats if overlay is not None else formats
        self.view = FormatView(self.formats, self.lookup, engine.scope)
        self.composer = Composer(
            self.lookup, rulebook_url, children=engine.children, rulings=rulings, scope=engine.scope,
            shows=self.view.shows,
        )

    @classmethod
    def from_settings(cls, engine: Engine, settings: Settings) -> Judge:
        """The judge every front end builds: the host's rulebook and privacy links, and its grace period."""
        return cls(engine, settings.rulebook_url, privacy_url=settings.privacy_url,
                   grace_days=settings.data_grace_days)

    def scoped(self, overlay: Overlay | None, notice: str | None = None) -> Judge:
        """These commands as one server sees them (cheap: shares the engine)."""
        if overlay is None and notice is None:
            return self
        return Judge(self.engine, self.rulebook_url, overlay, notice,
                     privacy_url=self.privacy_url, grace_days=self.grace_days, formats=self.formats)

    def playing(self, formats: frozenset[str] | None) -> Judge:
        """These commands as a server playing ``formats`` (format ids; None: all) sees them: the console's
        ``--formats`` (a server's choice comes with its overlay)."""
        return Judge(self.engine, self.rulebook_url, self.overlay, self.notice,
                     privacy_url=self.privacy_url, grace_days=self.grace_days, formats=formats)

    def run(self, make: Callable[[Judge], Answer]) -> Answer:
        """``make(self)``, opened with this judge's notice when there is one."""
        answer = make(self)
        return answer.with_notice(self.notice) if self.notice else answer

    def lookup(self, entry_id: str) -> Entry | None:
        return self.engine.get(entry_id, self.overlay)

    # -- commands -------------------------------------------------------------------------------

    def on(self, as_of: str) -> tuple[Judge, str]:
        """These commands answering as the loaded sources stood on ``as_of`` (2015-11-01; 2015-11 or 2015: the
        end of that month or year), and that day; a bad date is a ``UserError``."""
        day = parse_date(as_of, "as_of", end=True)
        assert day is not None
        judge = Judge.__new__(Judge)
        judge.__dict__.update(self.__dict__)
        judge.composer = self.composer.on(day, [e for e in self.engine.corpus.entries if e.kind == "update"])
        return judge, day

    def _as_of(self, as_of: str, make: Callable[[Judge], Answer]) -> Answer:
        """``make`` answered as of that day, titled so, its buttons and ``Open`` links kept on that day."""
        judge, day = self.on(as_of)
        return dated.as_of_answer(make(judge), day)

    def define(self, term: str, as_of: str | None = None) -> Answer:
        if as_of and as_of.strip():
            return self._as_of(as_of, lambda judge: judge.define(term))
        term = _clean(term, "term")
        exact = self.lookup(term)  # autocomplete sends entry ids
        if exact is not None and self.view.shows(exact):
            return noted(self.composer.entry(exact), self.view.bearing(exact))
        if exact is not None:  # an entry of a format this server does not play: looked up by its name instead
            term = exact.title
        result, left = self.view.define(self.engine.define(term, overlay=self.overlay))
        return noted(self.composer.define(term, result), left)

    def open(self, entry_id: str) -> Answer:
        entry_id, day = dated.split_as_of(entry_id)  # an Open button under an answer as of a day
        if day:
            return self._as_of(day, lambda judge: judge.open(entry_id))
        entry = self.lookup(entry_id)
        if entry is not None and not self.view.shows(entry):  # a button made before the server chose formats
            answer = self.composer.message("Entry not shown in this server", [], kind=ENTRY, arg=entry_id)
            return noted(answer, [entry.document])
        if entry is None:
            return self.composer.message(
                "Entry not found",
                [Line(runs(f"No entry “{echo(entry_id)}” in the loaded rules (was it renamed?)."))],
                kind=ENTRY,
                arg=entry_id,
            )
        return noted(self.composer.entry(entry), self.view.bearing(entry))

    def ask(self, question: str, as_of: str | None = None) -> Answer:
        if as_of and as_of.strip():
            return self._as_of(as_of, lambda judge: judge.ask(question))
        question = _clean(question, "question")[:QUERY_LIMIT]
        # Nothing close: the nearest terms rather than a list of noise (one analysis of the question for both).
        hits, near = self.engine.ask(question, limit=ASK_LIMIT, near=NEAR_LIMIT, overlay=self.overlay)
        hits, unplayed = self.view.hits(hits)  # the formats this server does not play are left out, and said
        day, left, early = self.composer.day, [], []
        asked = self._ban_asked(question)  # "is Hida Kisada banned?": /banned's answer leads
        hits = ban_verdict.without_other_cards(asked, hits, self.lookup)
        status = ban_verdict.verdict(asked, hits, day)
        if day:  # as of a day: a result that came later is not quoted as in force
            early = dated.not_yet_banned_notes(hits, day)
            hits, left = dated.sift_hits(hits, day)
        answer = noted(self.composer.ask(question, hits, near, answered=bool(early) or status is not None), unplayed)
        if left:
            dated.add_note(answer, dated.left_out_note(left, day or ""))
        for note in reversed([*early, *([status] if status else [])]):  # the banned list's answer leads
            dated.add_note(answer, note)
        lines = ban_verdict.uncited(asked, hits, status)
        if lines and status is not None:  # the verdict's own list lines, cited right under it
            blocks = answer.items[0].blocks if answer.items else answer.body
            at = next(i for i, b in enumerate(blocks) if b is status) + 1
            blocks[at:at] = [self.composer.citation(e, None, role="related") for e in lines]
        return answer

    def _ban_asked(self, question: str) -> BannedResult | None:
        """``/banned``'s answer for the card a ban question names, from the banned lists this server plays."""
        played, _unplayed = self.view.banned_lists(self.engine.corpus)
        result = self.engine.banned_asked(question) if played else None
        return self.view.banned(result)[0] if result is not None else None

    def rule(self, ref: str, as_of: str | None = None) -> Answer:
        if as_of and as_of.strip():
            return self._as_of(as_of, lambda judge: judge.rule(ref))
        ref = _clean(ref, "section")
        exact = self.engine.get(ref)
        if exact is not None and self.view.shows(exact):
            return noted(self.composer.entry(exact, kind=RULE, arg=ref), self.view.bearing(exact))
        hits, left = self.view.hits(self.engine.section(ref))
        if exact is not None:
            left = [exact.document, *left]
        family = [] if hits else [(n, e) for n, e in self.engine.section_family(ref) if self.view.shows(e)]
        files = {e.location.file for _name, e in family}
        cut = next((a for a in self.engine.corpus.anomalies if a.kind == "truncated" and a.file in files), None)
        return noted(self.composer.rule(ref, hits, family, cut=cut), left)

    def changes(self, since: str | None = None, until: str | None = None, source: str | None = None) -> Answer:
        since_iso = parse_date(since, "since")
        until_iso = parse_date(until, "until", end=True)
        if since_iso and until_iso and since_iso > until_iso:
            raise UserError(f"since ({since_iso}) is after until ({until_iso}).")
        source_key = parse_source(source)
        records = self.engine.changes(since=since_iso, until=until_iso, source=source_key, overlay=self.overlay)
        records, left = self.view.records(records)
        return noted(self.composer.changes(records, since_iso, until_iso, source_key), left, "changes in this range")

    def banned(self, card: str | None = None, as_of: str | None = None) -> Answer:
        """One card's legality, or with no card the whole banned list (as of a day: as the list stood then)."""
        if as_of and as_of.strip():
            return self._as_of(as_of, lambda judge: judge.banned(card))
        played, unplayed = self.view.banned_lists(self.engine.corpus)
        if not (card or "").strip():
            if not played and unplayed:
                return self._no_banned_list("", [f.title for f in unplayed])
            results = [r for r in self.engine.banned_list() if r.record is None or self.view.shows(r.record)]
            return self.composer.banned_list(results)
        card = _clean(card, "card")
        picked = self.engine.get(card)  # autocomplete sends the banned record's id
        if picked is not None and picked.kind == "banned":
            card = picked.title
        result, left = self.view.banned(self.engine.banned(card))
        if not played and unplayed:
            return self._no_banned_list(card, left)
        return noted(self.composer.banned(result), left, "a banned list naming it")

    def _no_banned_list(self, card: str, left: list[str]) -> Answer:
        """``/banned`` in a server that plays no format with a banned list: said, with the formats left out."""
        said = "This server plays no format with a banned list, so no format bans a card here."
        if card:
            said = f"This server plays no format with a banned list, so no format bans “{echo(card)}” here."
        said += " Server admins choose formats with /ruling config formats."
        body: list[Line | Note] = [Line(runs(said))]
        if left:
            body.append(Note(runs(left_out_line(left, "a banned list naming it" if card else "a banned list")),
                             "formats"))  # fmt: skip
        return self.composer.message("No banned list in this server's formats", body, kind=commands.BANNED, arg=card)

    def history(self, term: str) -> Answer:
        """Every dated change of the entry ``term`` names, oldest first, and the format updates on it."""
        term = _clean(term, "term")
        entry = self.lookup(term)  # autocomplete sends entry ids
        if entry is None:
            result = self.engine.define(term, overlay=self.overlay)
            entry = result.entry or (result.same_name[0] if result.same_name else None)
            if entry is None:
                answer = self.composer.define(term, result)
                answer.kind, answer.arg = HISTORY, term
                return answer
        if not self.view.shows(entry):  # an entry of a format this server does not play
            return noted(self.composer.message("Entry not shown in this server", [], kind=HISTORY, arg=term),
                         [entry.document])  # fmt: skip
        entry, left = self.view.history(entry)
        updates = [e for e in self.engine.corpus.entries if e.kind == "update" and self.view.shows(e)]
        return noted(dated.history(self.composer, entry, updates), left)

    def about(self) -> Answer:
        corpus = self.engine.corpus
        stats = self.engine.stats()
        by_source = Counter(e.source for e in corpus.entries)
        lines = [Line(runs(strong("Version"), f" {version()}"))]
        lines.append(Line(runs(strong("Entries"), f" {len(corpus.entries)}")))
        lines += [Line(runs(f"- {SOURCE_LABELS.get(s, s)}: {n}")) for s, n in sorted(by_source.items())]
        if self.overlay is not None:
            lines.append(Line(runs(f"- This server's rulings: {len(self.overlay)}")))
        if self.formats is not None:
            played = [f.title for f in loaded(corpus) if f.id in self.formats]
            lines.append(Line(runs(strong("Formats played here"), " " + (", ".join(played) or "none"))))
        lines.append(Line(runs(strong(f"Source files ({len(corpus.files)})"))))
        lines += [Line(runs(f"- {f}")) for f in corpus.files]
        built = stats.get("built_at")
        seconds = stats.get("build_seconds")
        if built:
            took = f" in {float(seconds):.2f} s" if seconds is not None else ""
            lines.append(Line(runs(strong("Index built"), f" {built}{took}")))
        if corpus.errors:
            lines.append(Line(runs(strong("Files that failed to load"), f" {len(corpus.errors)}")))
            lines += [Line(runs(f"- {e}")) for e in corpus.errors[:5]]
        if corpus.anomalies:
            lines.append(Line(runs(strong("Anomalies noted"), f" {len(corpus.anomalies)} (see ",
                                   code("python -m glossary lint"), ")")))
        answer = self.composer.message("About the L5R rules judge", [Group(lines)], kind=ABOUT)  # type: ignore[list-item]
        days = "at once" if self.grace_days == 0 else f"{self.grace_days} day{'s' if self.grace_days != 1 else ''}"
        where = Run("the privacy statement", href=self.privacy_url) if self.privacy_url else code(PRIVACY_DOC)
        answer.facts.append(Fact("Privacy", [Line(runs(PRIVACY.format(days=days), where))]))
        return answer

    def help(self, front: str = "discord") -> Answer:
        """The commands ``front`` offers, from the registry: what the console accepts, or what Discord has."""
        blocks: list[Line] = []
        for cmd in commands.for_front(front):
            parts: list[object] = [strong(cmd.synopsis_on(front)), f" — {cmd.help_on(front)}"]
            if cmd.example:
                parts += ["\n", code(cmd.example)]
            blocks.append(Line(runs(*parts)))  # type: ignore[arg-type]
        if front == "discord":
            blocks.append(Line(runs(
                "Every lookup takes ", code("private:True"), " to answer only you; a private answer has a ",
                strong("Post in channel"), " button. Buttons open cross-references and page through results.",
            )))
        else:
            blocks.append(Line(runs(
                "A line without a command is asked as a question. Answers list the entries they can open as ",
                code("/open id"), "; ", code("quit"), " ends the console.",
            )))
        if any(is_ruling(e) for e in self.engine.corpus.entries):
            blocks.append(Line(runs(
                "This server's ", strong("house rulings"), " are shown with the entries they apply to, labelled ",
                strong("House ruling"), " with the judge and date; ", code("/changes"),
                " with source House rulings lists them.",
            )))
        title = "L5R rules judge — commands" + (" (console)" if front == "console" else "")
        return self.composer.message(title, blocks, kind=HELP, arg="" if front == "discord" else front)

    def rebuild(self, kind: str, arg: str) -> Answer:
        """Recreate the answer a button refers to from its ``(kind, arg)`` (the registry's answer letters)."""
        cmd = BY_LETTER.get(kind)
        if cmd is None or cmd.method is None:
            raise UserError("That button is not one this bot understands.")
        method = getattr(self, cmd.method)
        if kind == CHANGES:
            since, until, source = (arg.split("|") + ["", "", ""])[:3]
            return method(since or None, until or None, source or None)
        if kind == HELP:
            return method(arg or "discord")
        if kind == ABOUT:
            return method()
        base, day = dated.split_as_of(arg)  # an answer as of a day carries it in its arg
        if day and kind not in (ENTRY, HISTORY):
            return method(base, day)
        return method(arg)


def _short(text: str, limit: int = 100) -> str:
    """What a user typed, echoed in an error message: bidi controls dropped, at most ``limit`` characters."""
    text = echo(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clean(text: str, name: str) -> str:
    """Collapse whitespace and drop control characters (a pasted NUL or escape code is never meant)."""
    printable = "".join(ch if unicodedata.category(ch) != "Cc" else " " for ch in (text or ""))
    cleaned = " ".join(printable.split())
    if not cleaned:
        raise UserError(f"Please give a {name}.")
    return cleaned
