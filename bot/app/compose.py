"""The judge's composition: engine results -> one format-neutral ``Answer`` (``bot.app.answer``).

Every relation an answer states is decided here, at the level where it is true: a format update is said
to amend the quoted paragraph only when it concerns that paragraph (``Engine.scope``), a format rule that
states the same rule in its own words is said to restate it, a ruling is said to apply. Each related text
carries its own citation. Nothing here knows Markdown, HTML or Discord; the renderers (``bot.app.renderers``)
word nothing of their own beyond layout.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from bot.app import dated
from bot.app.anchors import paragraph_href
from bot.app.answer import (
    Answer,
    Block,
    Citation,
    Dates,
    Fact,
    Group,
    Inline,
    Item,
    Line,
    Link,
    Note,
    Quote,
    Relation,
    Run,
    code,
    emph,
    runs,
    strong,
)
from bot.app.commands import ASK, BANNED, CHANGES, DEFINE, ENTRY, RULE
from glossary import asof
from glossary.kinds import SOURCE_LABELS, is_ruling
from glossary.model import Anomaly, Change, Entry, line_span, ordered_changes, paragraph_name, sort_date
from glossary.versions import names_level
from index.build.relations import relation_kind
from index.query.overlay import is_scoped
from index.results import UNSURE, BannedResult, ChangeRecord, DefineResult, Hit, Passage

ASK_LIMIT = 15  # at most; the engine lists only answers close to the best one
NEAR_LIMIT = 5  # nearest terms offered when nothing answers closely
ASK_PER_PAGE = 3
# An answer that says no rule stands out quotes this many of its closest matches and names the rest: when none
# may answer, eight quoted paragraphs are noise a judge has to read past (one page on Discord, the rest named).
UNSURE_QUOTED = 3
CHANGES_PER_PAGE = 10
UNSURE_NOTE = runs(
    "No rule stands out for this question: these are the closest matches, and none may answer it. "
    "Try other words, or ",
    code("/define"),
    " a term.",
)

# Bidirectional-text controls (embeddings, overrides, isolates, marks): echoed user input could use them to
# make the rest of a title read backwards ("Rules for: <U+202E>...") or disguise what was asked.
_BIDI_CONTROLS = dict.fromkeys(map(ord, "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))


ECHO_LIMIT = 200  # characters of what a user typed shown back (Discord's longest term option; the console has none)


def echo(text: str, limit: int = ECHO_LIMIT) -> str:
    """What a user typed, as shown back in an answer: bidi controls dropped, at most ``limit`` characters (a
    5,000-character term is not repeated whole in "No entry for ..."); renderers escape the rest."""
    text = text.translate(_BIDI_CONTROLS)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def date_text(change) -> str:  # type: ignore[no-untyped-def]
    """The date as printed; an impossible one is kept and followed by the evident intended date."""
    if change.date is None:
        return change.raw
    if change.anomaly and change.probable_date and change.probable_date != change.date:
        return f"{change.date} (as printed; probably {change.probable_date})"
    return change.date


def ruling_credit(entry: Entry) -> str:
    """`` (Judge, 2026-11-01, Event)`` for a house ruling: who ruled, when (the earliest date), and at
    which event, as far as known; and, while it needs review, that it was made before its rule changed."""
    dates = sorted(c.date for c in entry.changes if c.date)
    parts = [entry.judge or "", dates[0] if dates else "", entry.event or ""]
    text = ", ".join(p for p in parts if p)
    if entry.changed_since:  # its rule changed after it and no judge has looked at it since (bot.rulings.review)
        text += ("; " if text else "") + f"made before the rule changed on {entry.changed_since}"
    return f" ({text})" if text else ""


def source_label(entry: Entry) -> str:
    return SOURCE_LABELS.get(entry.source, entry.source)


def ruling_kind(entry: Entry) -> str:
    """"Server ruling" (this server's own, from the rulings database) or "House ruling" (the host's files)."""
    return "Server ruling" if is_scoped(entry.id) else "House ruling"


def own_dates(entry: Entry, changes: Sequence[Change]) -> list[Change]:
    """The changes shown with ``entry``'s text. An update-log record of several items carries its stamp with the
    first item as its note ("Starting Holdings – clarified …", what ``/changes`` lists); under any of its
    lines that note would name another item's change, so there the stamp is shown without it."""
    if entry.kind != "update" or len(entry.paragraphs) < 2:
        return list(changes)
    return [replace(c, note=None) if c.update_id == entry.id else c for c in changes]


def _see_result(rel: Relation, number: int) -> Relation:
    """``rel`` named, not quoted again: its rule is result ``number`` of the same answer, with its own lines."""
    heading = list(rel.heading)
    if heading and heading[-1].text.endswith(":"):
        heading[-1] = replace(heading[-1], text=heading[-1].text[:-1])
    return replace(rel, heading=(*heading, Run(f"; it is result {number}.")), quote=None, citation=None)


def _unsure_reason(hits: Sequence[Hit]) -> str | None:
    """Why no ranked hit stands out, if none does: "low" (each below ``UNSURE``), "unlike" (the question is unlike
    every kept players' question, ``Hit.unlike_asked``), "like" (it is like a question kept as not covered,
    ``Hit.like_unanswered``) or "doubt" (the three weighed together, ``Hit.doubt``); hits not ranked so (a server
    ruling) don't count."""
    ranked = [h for h in hits if h.confidence is not None]
    if not ranked:
        return None
    if max(h.confidence or 0.0 for h in ranked) < UNSURE:
        return "low"
    if ranked[0].unlike_asked:
        return "unlike"
    if ranked[0].like_unanswered is not None:
        return "like"
    return "doubt" if ranked[0].doubt else None


def _unmarked(hit: Hit) -> Hit:
    """``hit`` without its answering-sentence marks (its question words stay marked): a copy, the engine's own
    hits are left as they are."""
    pair = hit.companion
    return replace(hit, sentence_spans=[], companion=None if pair is None else replace(pair, sentence_spans=[]))


def unsure(hits: Sequence[Hit]) -> bool:
    """Whether no ranked hit stands out (``_unsure_reason``)."""
    return _unsure_reason(hits) is not None


def unsure_note(hits: Sequence[Hit]) -> Inline:
    """The "no rule stands out" line. When the only reason is a question kept as not covered that this one is
    like (``Hit.like_unanswered``), it names that question: the judge sees why, and can tell a poor likeness."""
    if _unsure_reason(hits) != "like":
        return UNSURE_NOTE
    like = next(h.like_unanswered for h in hits if h.confidence is not None)
    return runs(
        # a server's confirmed question is what a member typed: shown as any echoed input is
        f"The loaded rules may not cover this: a question like it, \u201c{echo(like or '')}\u201d, was "
        "checked against them and is not answered there. These are the closest matches, and none may answer it. "
        "Try other words, or ",
        code("/define"),
        " a term.",
    )


class Composer:
    """Builds Answers from results. ``lookup`` resolves entry ids; ``children`` gives the sub-headings of a
    heading; ``scope`` the paragraphs a linked rule concerns; ``rulings`` the asking server's own rulings
    that apply to an entry (none outside a server)."""

    def __init__(
        self,
        lookup: Callable[[str], Entry | None],
        rulebook_url: str | None = None,
        children: Callable[[str], list[Entry]] | None = None,
        *,
        rulings: Callable[[str], Sequence[Entry]] | None = None,
        scope: Callable[[str, str], tuple[int, ...] | None] | None = None,
        shows: Callable[[Entry], bool] | None = None,
    ) -> None:
        self.lookup = lookup
        self.rulebook_url = rulebook_url.rstrip("/") if rulebook_url else None
        self.children = children or (lambda _entry_id: [])
        self.rulings = rulings or (lambda _entry_id: ())
        self.scope = scope or (lambda _rule, entry_id: _whole(self.lookup(entry_id)))
        # whether a rule is shown: a server leaves out the formats it does not play (bot.app.formats)
        self.shows = shows or (lambda _entry: True)

    day: str | None = None  # answers as the loaded sources stood on this day (``on``); None: as loaded
    updates: tuple[Entry, ...] = ()  # the update-log records, whose Old wording stands in before their date

    def on(self, day: str, updates: Sequence[Entry]) -> Composer:
        """This composer answering as of ``day``: what came later is left out and said (``bot.app.dated``)."""
        composer = copy.copy(self)
        composer.day, composer.updates = day, tuple(updates)
        return composer

    def in_force(self, entries: Sequence[Entry]) -> list[Entry]:
        """The rules and rulings that existed on the day (all of them when answering as loaded)."""
        return [e for e in entries if self.day is None or asof.in_force(e, self.day)]

    def texts(self, entry: Entry) -> list[Block]:
        """An entry's paragraphs, verbatim, as the answer's body: as loaded, or as they stood on the day."""
        if self.day is None:
            return [Quote(entry, p, k, inline=True) for k, p in enumerate(entry.paragraphs)]
        state = asof.on_day(entry, self.day, self.updates)
        return [b for k in range(len(entry.paragraphs)) for b in dated.paragraph_blocks(self, state, k)]

    # -- facts about where a text stands ----------------------------------------------------------------

    def rulebook_link(self, entry: Entry, paragraph: int | None = None) -> str | None:
        """The entry (or one of its paragraphs) in the exported HTML rulebook, when RULEBOOK_URL is set (a
        server's own rulings are not in it)."""
        if not self.rulebook_url or is_scoped(entry.id):
            return None
        return f"{self.rulebook_url}/{paragraph_href(entry, paragraph)}"

    def entry_url(self, entry: Entry) -> str | None:
        """The title link: the exported rulebook if there is one, else the source page."""
        return self.rulebook_link(entry) or entry.url

    def citation(self, entry: Entry, paragraph: int | None = None, role: str = "") -> Citation:
        """Where the text stands, with the links a judge can click (the source page, the rulebook there)."""
        links: list[tuple[str, str]] = []
        if entry.url:
            links.append(("source page", entry.url))
        rulebook = self.rulebook_link(entry, paragraph if len(entry.paragraphs) > 1 else None)
        if rulebook:
            links.append(("rulebook", rulebook))
        return Citation(entry, paragraph, tuple(links), role)

    # -- relations -------------------------------------------------------------------------------------

    def overriders(self, entry: Entry) -> list[Entry]:
        """What bears on ``entry`` in the order a judge needs it: the format's own rules, then its update-log
        records newest first (the latest state of a topic the log changed several times leads), then house
        rulings."""
        found = [e for e in (self.lookup(i) for i in entry.overridden_by) if e is not None and self.shows(e)]
        rules = [e for e in found if not is_ruling(e) and e.kind != "update"]
        updates = sorted(
            (e for e in found if not is_ruling(e) and e.kind == "update"),
            key=lambda e: max((sort_date(c) for c in e.changes), default=""),
            reverse=True,
        )
        return rules + updates + [e for e in found if is_ruling(e)]

    def relations(self, entry: Entry, paragraph: int | None = None, role: str = "") -> list[Relation]:
        """Every rule that bears on ``entry``, typed and worded. With ``paragraph`` (a quoted paragraph),
        a rule is said to amend or restate *this* only if it concerns that paragraph; one that concerns
        other paragraphs is left out, and one whose paragraph is not clear is said to concern the entry."""
        out: list[Relation] = []
        updates_seen = 0
        for rule in self.in_force(self.overriders(entry)):
            kind = relation_kind(rule, entry)
            scope = self.scope(rule.id, entry.id)
            if paragraph is not None and scope is not None and paragraph not in scope:
                if rule.kind == "update":
                    updates_seen += 1
                continue
            earlier = rule.kind == "update" and updates_seen > 0
            updates_seen += rule.kind == "update"
            if paragraph is not None and scope is None and kind != "house-ruling":
                kind = "concerns-entry"
            when = next((date_text(c) for c in rule.changes), None) if rule.kind == "update" else None
            out.append(
                Relation(
                    kind,  # type: ignore[arg-type]
                    rule,
                    entry,
                    heading=self._relation_heading(kind, rule, entry, scope, earlier, when, paragraph),
                    scope=scope,
                    quote=Quote(rule, rule.text, None, role="related"),
                    citation=self.citation(rule, role="related"),
                    dates=Dates(list(rule.changes), rule, None, role="related") if role == "entry" else None,
                    earlier=earlier,
                    date=when,
                    role=role,
                )
            )
        return out

    def changed_rules(self, record: Entry, paragraph: int) -> list[Relation]:
        """Under a quoted line of an update-log record, the rule that line changed as the loaded sources read it:
        "Proclaim – limited its use to the player's turn" answers "can I Proclaim on my opponent's turn?" only
        with the rule it changed, which a judge quotes. Only the entries that line itself names (its own
        source line), each at the paragraphs the change dates (its opening paragraph when it dates the entry); a
        rule the line only names, with no change of it recorded, is said to be concerned, not changed."""
        if record.kind != "update" or not 0 <= paragraph < len(record.paragraphs):
            return []
        first, last = record.paragraph_lines(paragraph)
        out: list[Relation] = []
        for ref in record.see_also:
            rule = self.lookup(ref.target) if ref.target else None
            if rule is None or ref.line is None or not first <= ref.line <= last or not rule.paragraphs:
                continue
            if self.day is not None and not asof.in_force(rule, self.day):
                continue
            own = [c for c in rule.changes if c.update_id == record.id]
            dated = sorted({c.paragraph for c in own if c.paragraph is not None})
            shown = [k for k in dated if k < len(rule.paragraphs)] or [0]
            text = "\n".join(rule.paragraphs[k] for k in shown)
            # a record that only names the topic ("the clause on how old Terrains destroy other Terrains in play
            # will be withdrawn": a clause of the format's, not the glossary's Terrain) changed nothing quoted here
            heading = (runs("It changed ", strong(rule.label), ", which the loaded sources now read:") if own else
                       runs("It concerns ", strong(rule.label), ", but no change to that text is recorded; "
                            "the loaded sources read:"))
            out.append(Relation(
                "changed-rule", rule, record,
                heading=heading,
                scope=(paragraph,),
                quote=Quote(rule, text, shown[0], role="related"),
                citation=replace(self.citation(rule, shown[0], role="related"), until=shown[-1]),
                role="hit",
            ))
        return out

    def server_rulings(self, entry: Entry, role: str) -> list[Relation]:
        """This server's own rulings on ``entry`` (a judge names the entry, never a paragraph of it): in an
        entry shown whole each is quoted in full; under a search result it is named, to be opened."""
        out: list[Relation] = []
        for ruling in self.in_force(self.rulings(entry.id)):
            if ruling.id == entry.id:
                continue
            if role == "entry":
                heading = runs(f"Server ruling — {ruling.title}{ruling_credit(ruling)}:")
                quote = Quote(ruling, ruling.text, None, role="related")
            else:
                heading = runs("This server's ruling applies: ", strong(ruling.title), ruling_credit(ruling))
                quote = None
            out.append(Relation("server-ruling", ruling, entry, heading=heading, quote=quote, role=role))
        return out

    def _relation_heading(
        self,
        kind: str,
        rule: Entry,
        entry: Entry,
        scope: tuple[int, ...] | None,
        earlier: bool,
        when: str | None,
        paragraph: int | None,
    ) -> Inline:
        """The judge's words for one relation; under a quoted paragraph "this" is that paragraph, in an
        entry shown whole the paragraphs concerned are named."""
        label = source_label(rule)
        dated = f" ({when})" if when else ""
        if kind == "house-ruling":
            if paragraph is None:  # an entry shown whole: the ruling is read after its heading
                return runs(f"{ruling_kind(rule)} — {rule.label}{ruling_credit(rule)}:")
            return runs(f"{ruling_kind(rule)} ", strong(rule.label), ruling_credit(rule), " applies:")
        where = "this"
        if paragraph is None:
            where = _paragraphs(entry, scope)
        if kind == "updates":  # no Old/New wording: an update about the text, not a claim that it changed it
            which = "an earlier update" if earlier else "the latest update"
            return runs(f"In {label}, {which} about {where}: ", strong(rule.label), f"{dated} (in that format):")
        if kind == "amends":
            which = "An earlier update" if earlier else "The latest update on this" if rule.kind == "update" else ""
            lead = f"In {label}, " + (f"{which.lower()}, " if which else "")
            return runs(lead, strong(rule.label), f"{dated} amends {where} (in that format):")
        if kind == "restates":
            return runs(f"{label} states {where} in its own words in ", strong(rule.label), " (in that format):")
        if kind == "covers":
            return runs(f"{label} also has a rule on {where}, ", strong(rule.label), " (in that format):")
        # concerns-entry: an update on the entry whose paragraph the texts do not make clear
        return runs(
            f"{label} has an update on {entry.label}, ",
            strong(rule.label),
            f"{dated}; which paragraph it concerns is not clear from the texts:",
        )

    def restatement_blocks(self, entry: Entry) -> list[Block]:
        """The same rule stated elsewhere in the document: shown in full when its words differ."""
        blocks: list[Block] = []
        for r in entry.restated:
            other = self.lookup(r.entry)
            if other is None:
                continue
            first = other.paragraph_lines(r.other_paragraphs[0])[0]
            last = other.paragraph_lines(r.other_paragraphs[-1])[1]
            where = f"{other.label}, {line_span(first, last)}"
            differs, texts = r.differs, {k: other.paragraphs[k] for k in r.other_paragraphs}
            then = False  # on the day asked, the other text read otherwise than its lines read today
            if self.day is not None:  # on the day one of the two may have read otherwise (its Old wording)
                mine, theirs = asof.on_day(entry, self.day, self.updates), asof.on_day(other, self.day, self.updates)
                texts.update({p.index: p.text for p in theirs.paragraphs if p.index in texts})
                moved = any(p.text != entry.paragraphs[p.index] for p in mine.paragraphs if p.index in r.paragraphs)
                then = any(texts[k] != other.paragraphs[k] for k in r.other_paragraphs)
                differs = differs or moved != then
            if differs:
                blocks.append(Line(runs(strong(f"The ruleset states this again in {where}, and the texts differ."),
                                        " There it reads:")))
                blocks.extend(Quote(other, texts[k], k, inline=True) for k in r.other_paragraphs)
                # the text quoted there carries its own citation (file and lines), as every quoted text does
                blocks.append(replace(self.citation(other, r.other_paragraphs[0], role="dash"),
                                      until=r.other_paragraphs[-1]))
            elif then:  # the same Old wording stood in both places; those lines now read the New one
                blocks.append(Line(runs(emph(f"On {self.day} stated in the same words in {where} (those lines "
                                             "read otherwise now: they were changed after that day)."))))
            else:
                blocks.append(Line(runs(emph(f"Stated in the same words in {where}."))))
        return blocks

    def children_blocks(self, entry: Entry) -> list[Block]:
        """A heading with no text of its own is answered by its sub-headings and their text, never emptily."""
        blocks: list[Block] = []
        for child in self.children(entry.id):
            blocks.append(Line(runs(strong(child.label))))
            blocks.extend(Quote(child, p, k, inline=True) for k, p in enumerate(child.paragraphs))
            blocks.append(self._cited(child))
        return blocks

    def _cited(self, entry: Entry) -> Group:
        """``— citation`` and ``— history`` under a text shown whole."""
        parts: list[Block] = [self.citation(entry, role="dash")]
        if entry.changes:
            parts.append(Dates(list(entry.changes), entry, None, role="dash"))
        return Group(parts, role="cited")

    # -- entries ---------------------------------------------------------------------------------------

    def entry(self, entry: Entry, *, kind: str = ENTRY, arg: str | None = None, extra: Sequence[Link] = ()) -> Answer:
        """An entry in full: what bears on it in the format first (each naming the paragraphs it concerns),
        then its verbatim text (or, for a bare heading, its sub-headings' text), any restatement of it, the
        server's rulings, its history and citation. As of a day, what came later is left out and said."""
        body: list[Block] = []
        if self.day is not None:
            state = asof.on_day(entry, self.day, self.updates)
            if not state.exists:
                return dated.not_yet(self, state, kind=kind, arg=entry.id if arg is None else arg)
            later = [r for r in [*self.overriders(entry), *self.rulings(entry.id)] if not asof.in_force(r, self.day)]
            body += dated.notes(state, later)
        relations = self.relations(entry, None, role="entry")
        body.extend(relations)
        if relations:
            body.append(Line(runs(strong(f"{source_label(entry)} text:"))))
        children = [] if entry.paragraphs else self.children_blocks(entry)
        body.extend(self.texts(entry))
        if children:
            body.append(Line(runs(emph("This heading has no text of its own; under it:"))))
            body.extend(children)
        body.extend(self.restatement_blocks(entry))
        for name, wording in (("Old", entry.old_wording), ("New", entry.new_wording)):
            if wording and wording not in entry.text:
                body.append(Group([Line(runs(strong(f"{name}:"))), Quote(entry, wording, None, inline=True)]))
        server = [r for r in self.rulings(entry.id) if r.id != entry.id]
        body.extend(self.server_rulings(entry, role="entry"))  # read after the rule they apply to

        facts: list[Fact] = []
        about: list[Block] = []
        if entry.group:
            about.append(Line(runs(("Category" if entry.kind == "banned" else "Group") + f": {entry.group}")))
        if is_ruling(entry):
            about.append(Line(runs(ruling_kind(entry) + ruling_credit(entry))))
        elif entry.judge:
            about.append(Line(runs(f"Ruled by {entry.judge}")))
        if server:
            about.append(Line(runs("This server's rulings: " + ", ".join(r.title for r in server))))
        if entry.overrides:
            names = [self._name(i) for i in entry.overrides]
            verb = "Applies to" if is_ruling(entry) else "Bears in this format on"
            about.append(Line(runs(f"{verb}: " + ", ".join(names))))
        if about:
            facts.append(Fact("About", about))
        facts += self.record_facts(entry)

        links = [Link(r.text, r.target) for r in entry.see_also if r.target]
        links += [Link(_rule_kind(r.entry) + ": " + r.entry.label, r.entry.id) for r in relations]
        links += [Link(c.label, c.id) for c in self.children(entry.id)] if children else []
        links += [Link("Also stated in: " + self._name(r.entry), r.entry) for r in entry.restated]
        applies = "Applies to: " if is_ruling(entry) else "Bears on: "
        links += [Link(applies + self._name(i), i) for i in entry.overrides]
        links += [Link("Server ruling: " + r.title, r.id) for r in server]
        links += list(extra)
        links = [ln for ln in links if ln.entry_id != entry.id]
        return Answer(
            title=entry.label,
            kind=kind,
            arg=entry.id if arg is None else arg,
            body=body,
            facts=facts,
            links=links,
            footer=f"{source_label(entry)} · {entry.kind} · {entry.id}",
            url=self.entry_url(entry),
            source=entry.source,
            tone="rule",
            hit_ids=[entry.id, *(r.entry.id for r in relations), *(r.id for r in server)],
        )

    def record_facts(self, entry: Entry) -> list[Fact]:
        """The History (when dated; each change naming the paragraph it dates) and Citation every full answer
        ends with."""
        facts = [Fact("History", [Dates(own_dates(entry, entry.changes), entry, None)])] if entry.changes else []
        return [*facts, Fact("Citation", [self.citation(entry)])]

    def _name(self, entry_id: str) -> str:
        found = self.lookup(entry_id)
        return found.label if found else entry_id

    def define(self, term: str, result: DefineResult) -> Answer:
        if result.same_name:  # several entries answer to this very name: show them all, told apart
            return self.several(term, result)
        if result.entry is not None:  # a confident guess: still offer the other candidates
            others = [Link("Or: " + c.label, c.id) for c in result.candidates if c.id != result.entry.id]
            answer = self.entry(result.entry, extra=others)
            if result.how == "fulltext":  # found by the words of its text: no entry is named so, and the answer says it
                answer.with_notice(f"No entry is named “{' '.join(echo(term).split())}”; the text that uses the word "
                                   f"most is {result.entry.label} ({source_label(result.entry)}):")
            return answer
        links = [Link(c.label, c.id) for c in result.candidates]
        if links:
            parts: list[str | object] = ["Did you mean: "]
            parts += bold_list([c.label for c in result.candidates])
            parts.append("?")
            line = Line(runs(*parts))  # type: ignore[arg-type]
        else:
            line = Line(runs("Nothing in the rules matches that. Try ", code("/ask"), " with a whole question."))
        return self.message(f"No entry for “{echo(term)}”", [line], kind=DEFINE, arg=term, links=links)

    def several(self, term: str, result: DefineResult) -> Answer:
        """Every entry named ``term`` ("Ninjitsu": Open, Reaction, Battle), each in full under its label, with
        its own dates and citation; other candidates follow as links."""
        entries = list(result.same_name)
        if result.entry is not None and result.entry not in entries:  # "honor" is Family Honor's short name too
            entries.insert(0, result.entry)
        alike = len({e.title.casefold() for e in entries}) == 1
        name = entries[0].title if alike else " ".join(echo(term).split())
        intro: list[str | object] = ["Several entries go by this name: "]
        for n, e in enumerate(entries):
            intro += [", "] if n else []
            intro.append(strong(e.label))
        intro.append(". Each is quoted below with its own dates and citation.")
        body: list[Block] = [Line(runs(*intro))]  # type: ignore[arg-type]
        for e in entries:
            body.append(Line(runs(strong(e.label), f" — {source_label(e)}")))
            body.extend(self.texts(e))
            for rel in self.relations(e, None, role="several"):
                body.append(rel)
            body.extend(self.restatement_blocks(e))
            body.append(self._cited(e))
        links = [Link(e.label, e.id) for e in entries]
        links += [Link("Or: " + c.label, c.id) for c in result.candidates if c not in entries]
        return Answer(
            title=f"{name} — {len(entries)} entries",
            kind=DEFINE,
            arg=term,
            body=body,
            links=links,
            footer=f"{len(entries)} entries named “{name}”",
            source=entries[0].source,
            tone="rule",
            hit_ids=[e.id for e in entries],
        )

    def rule(
        self, ref: str, hits: Sequence[Hit], family: Sequence[tuple[str, Entry]] = (), cut: Anomaly | None = None
    ) -> Answer:
        """A section in full; a reference to one that does not exist says so and lists those that do. When the
        loaded copy of the document is cut short (``cut``, lint's "truncated") before where the reference
        would stand, the answer says that instead of "there is no". A section found only by the words of its
        text (no section has that name) is shown with a line saying so."""
        if not hits:
            if family:
                listed = "\n".join(f"- {name}" for name, _e in family)
                document = family[0][1].document
                if cut is not None and _comes_after(ref, [name for name, _e in family]):
                    said = (f"The loaded copy of {document} is cut short ({cut.message}; {cut.file}, line "
                            f"{cut.line}): “{echo(ref)}” would come after where it ends, so whether the full "
                            f"ruleset has it cannot be told from this copy. This copy has:\n{listed}")
                else:
                    said = f"There is no “{echo(ref)}” in {document}. It has:\n{listed}"
                lines = [Line(runs(said))]
                links = [Link(name, e.id) for name, e in family]
            else:
                lines = [Line(runs("Try the section's number or name, e.g. ", code("Cardinal Rule 2"), " or ",
                                   code("Deck Construction"), "."))]
                links = []
            return self.message(f"No section matches “{echo(ref)}”", lines, kind=RULE, arg=ref, links=links)
        others = [Link("Also: " + h.entry.label, h.entry.id) for h in hits[1:]]
        answer = self.entry(hits[0].entry, kind=RULE, arg=ref, extra=others)
        if hits[0].by_text:
            said = " ".join(echo(ref).split())
            entry = hits[0].entry
            if said.casefold() in (entry.title.casefold(), entry.label.casefold()):  # named so, not a section
                kind = {"ability": "player ability", "guideline": "guideline", "term": "glossary term"}.get(
                    entry.kind, "entry")
                answer.with_notice(f"“{said}” is not a section of {entry.document}; it is a {kind}, "
                                   f"{entry.label}:")
            else:
                answer.with_notice(f"No section is named “{said}”; the closest by its words is "
                                   f"{entry.label} ({source_label(entry)}):")
        return answer

    # -- search results --------------------------------------------------------------------------------

    def ask(self, question: str, hits: Sequence[Hit], near: Sequence[Entry] = (), answered: bool = False) -> Answer:
        """Top results, a few per page, each with its answering paragraph, citation and dates.

        ``near``: when no hit is close enough to show, the nearest terms, offered as links. ``answered``: a note
        the caller adds answers the question (the banned list as of a day), so "no rules text answers it" is not
        said; only that nothing else does.
        """
        title = f"Rules for: {' '.join(echo(question).split())}"
        if not hits:
            parts: list[str | object] = (
                [f"Nothing else in the rules answers it closely{' on that day' if self.day else ''}."] if answered else
                ["No rules text answers that question closely. Try other words, or ", code("/define"), " a term."])
            if near:
                parts.append("\nNearest terms: ")
                parts += bold_list([e.title for e in near])
                parts.append(".")
            links = [Link(e.title, e.id) for e in near]
            return self.message(title, [Line(runs(*parts))], kind=ASK, arg=question, links=links)  # type: ignore[arg-type]
        doubtful = unsure(hits)
        if doubtful:  # a marked sentence says "this answers"; the note above it says none may: no marks
            hits = [_unmarked(h) for h in hits]
        quoted = list(hits[:UNSURE_QUOTED]) if doubtful else list(hits)
        shown = {h.entry.id: (k, h.paragraph) for k, h in reversed(list(enumerate(quoted, start=1)))}
        level = names_level(question)
        items = [
            Item(
                [self.hit_group(k, hit, shown, level)],
                [Link(f"{k}. {hit.entry.label}", hit.entry.id)]
                + [Link("Server ruling: " + r.title, r.id) for r in self.rulings(hit.entry.id)],
            )
            for k, hit in enumerate(quoted, start=1)
        ]
        rest = list(enumerate(hits, start=1))[len(quoted):]
        if rest:  # named, to be opened, not quoted
            names = [f"{k}. {h.entry.label}" for k, h in rest]
            items.append(Item([Line(runs("Further from the question, not quoted: ", *bold_list(names), "."))],
                              [Link(name, h.entry.id) for name, (_k, h) in zip(names, rest, strict=True)]))
        if doubtful:
            items[0].blocks.insert(0, Note(unsure_note(hits), "unsure"))
        return Answer(
            title=title,
            kind=ASK,
            arg=question,
            items=items,
            per_page=ASK_PER_PAGE + (1 if rest else 0),  # the named rest with the three it follows
            footer="Open a result to read it in full",
            hit_ids=[h.entry.id for h in hits],
        )

    def hit_group(
        self, number: int, hit: Hit, shown: dict[str, tuple[int, int | None]] | None = None, level: bool = False
    ) -> Group:
        """One search result: the answering paragraph with its own dates and lines, then what bears on that
        paragraph (each quoted with its citation), a restatement in other words, this server's rulings. A rule
        that is itself among the results (``shown``: entry id -> its result number and quoted paragraph) is named
        there, not quoted twice; so is the rule an update record changed, where its result quotes the very
        paragraph changed. ``level``: the question names an experience level ("is moshi eihime exp banned?"), so a
        banned line that names none is not said to ban the version asked about."""
        entry = hit.entry
        source = source_label(entry)
        if is_ruling(entry):
            source = ruling_kind(entry) + ruling_credit(entry)
        head = Line(runs(strong(f"{number}. {entry.label}"), f" — {source}"), role="head")
        if not entry.paragraphs:  # a bare heading: say what is under it rather than quote nothing
            under = ", ".join(c.label for c in self.children(entry.id)) or "nothing"
            return Group([head, Line(runs(f"(A heading with no text of its own; under it: {under}.)")),
                          self.citation(entry, role="hit")], role="hit")
        paragraph = hit.paragraph if hit.paragraph is not None and hit.paragraph < len(entry.paragraphs) else 0
        blocks: list[Block] = [head]
        if entry.kind == "banned":  # "is X legal in my deck?": say what the line means, not only quote it
            # a question about an experienced version is not told "banned" by a line that names no level
            other = (" as named, with no experience level. The experienced version asked about is not named on it"
                     if level and not names_level(entry.title) else "")
            blocks.append(Line(runs(f"On {entry.document}'s banned list: ", strong("banned"), f"{other} (",
                                    code("/banned"), " tells versions and dates apart)."), role="status"))
        pair = hit.companion if hit.paragraph == paragraph else None  # the rule, or the example, quoted too
        if pair is not None and 0 <= pair.paragraph < paragraph:  # the rule an example illustrates comes first
            blocks += self._companion(entry, pair)
        own = hit.paragraph == paragraph  # the spans are offsets into the hit's own paragraph only
        blocks += self._quoted(entry, paragraph, hit.spans if own else (), hit.sentence_spans if own else ())
        # its citation right under it: a related text quoted next has its own, and a judge reading down must not
        # take that one for this quote's
        blocks.append(self.citation(entry, paragraph, role="hit"))
        if pair is not None and paragraph < pair.paragraph < len(entry.paragraphs):  # its example follows it
            blocks += self._quoted(entry, pair.paragraph, pair.spans, pair.sentence_spans)
            blocks.append(self.citation(entry, pair.paragraph, role="hit"))
        listed = [c for c in self.children(entry.id) if c.kind == "banned"] if entry.kind == "section" else []
        listed = self.in_force(listed)  # as of a day, the lines then in force
        if listed:  # "what cards are banned in OH?" finds the list's heading, whose own text names no card
            blocks.append(Line(runs(f"The list under it has {len(listed)} lines; ", code("/banned"),
                                    " shows them all, grouped as printed, with the date each was banned."),
                               role="status"))
        results = shown or {}
        for rel in self.relations(entry, paragraph, role="hit"):
            other, _quoted = results.get(rel.entry.id, (number, None))
            blocks.append(rel if other == number else _see_result(rel, other))
        for rel in self.changed_rules(entry, paragraph):  # quotes ``rel.quote.paragraph`` to ``citation.until``
            other, quoted = results.get(rel.entry.id, (number, None))
            same = rel.quote is not None and rel.citation is not None and (
                quoted == rel.quote.paragraph == rel.citation.until)
            blocks.append(_see_result(rel, other) if other != number and same else rel)
        for r in entry.restated:
            other = self.lookup(r.entry)
            if r.differs and other is not None and paragraph in r.paragraphs:
                text = "\n".join(other.paragraphs[k] for k in r.other_paragraphs)
                rel = Relation(
                    "restated-elsewhere", other, entry,
                    heading=runs("The ruleset states this again in ", strong(other.label), ", in other words:"),
                    scope=tuple(r.paragraphs),
                    quote=Quote(other, text, r.other_paragraphs[0], role="restated"),
                    citation=replace(self.citation(other, r.other_paragraphs[0], role="related"),
                                     until=r.other_paragraphs[-1]),
                    differs=True,
                    role="hit",
                )
                # both copies among the results ("can opp negate my seppuku?"): named by its number where that result
                # quotes the line that differs; "what is seppuku" quotes the first line of each, which are the same
                # words, so the other copy is still quoted here whole
                at, quoted = results.get(other.id, (number, None))
                differing = {r.other_paragraphs[i] for i in r.differing}
                blocks.append(_see_result(rel, at) if at != number and differing <= {quoted} else rel)
        blocks.extend(self.server_rulings(entry, role="hit"))
        return Group(blocks, role="hit")

    def _quoted(self, entry: Entry, paragraph: int, spans: Sequence[tuple[int, int]],
                sentence_spans: Sequence[tuple[int, int]]) -> list[Block]:
        """One quoted paragraph of a search result, its words and answering sentence marked, and its dates."""
        blocks: list[Block] = [Quote(entry, entry.paragraphs[paragraph], paragraph, tuple(spans), role="hit",
                                     sentences=tuple(sentence_spans))]
        if self.day is not None:  # as it stood on the day, and whether it changed after
            state = asof.on_day(entry, self.day, self.updates)
            blocks = dated.paragraph_blocks(self, state, paragraph, inline=False, role="hit", marks=tuple(spans),
                                            sentences=tuple(sentence_spans))
        dating = own_dates(entry, entry.paragraph_changes(paragraph))
        if dating:
            blocks.append(Dates(dating, entry, paragraph, role="hit"))
        return blocks

    def _companion(self, entry: Entry, other: Passage) -> list[Block]:
        """The rule paragraph quoted before the example that illustrates it, with its own dates and lines."""
        return [*self._quoted(entry, other.paragraph, other.spans, other.sentence_spans),
                self.citation(entry, other.paragraph, role="hit")]

    # -- change history, banned list, messages ---------------------------------------------------------

    def changes(
        self, records: Sequence[ChangeRecord], since: str | None, until: str | None, source: str | None
    ) -> Answer:
        """Change history, newest first, ten records per page."""
        arg = f"{since or ''}|{until or ''}|{source or ''}"
        span = " ".join(p for p in (f"since {since}" if since else "", f"until {until}" if until else "") if p)
        where = SOURCE_LABELS.get(source, source) if source else "all sources"
        title = f"Rule changes — {where}" + (f", {span}" if span else "")
        ordered = sorted(records, key=lambda r: sort_date(r.change), reverse=True)
        if not ordered:
            return self.message(title, [Line(runs("No dated changes in that range."))], kind=CHANGES, arg=arg)
        events = _events(ordered)
        items = [Item([self._event_row(e)], [Link(r.entry.label, r.entry.id) for r in e]) for e in events]
        touched = len({r.entry.id for r in ordered})
        footer = f"{len(events)} change{'s' if len(events) != 1 else ''}, newest first"
        if touched > len(events):
            footer += f" · {touched} entries"
        return Answer(
            title=title,
            kind=CHANGES,
            arg=arg,
            items=items,
            per_page=CHANGES_PER_PAGE,
            compact=True,
            footer=footer,
            hit_ids=list(dict.fromkeys(r.entry.id for e in events[:CHANGES_PER_PAGE] for r in e)),
        )

    def _event_row(self, event: list[ChangeRecord]) -> Line:
        """One dated change and the entries it touched: an update-log record is one row, not one row per entry
        it touched (its note when it has one, else how many items it lists; then the entries by name)."""
        row = self._change_row(event[0], note=False)
        others = event[1:]
        notes = list(dict.fromkeys(r.change.note for r in event if r.change.note))
        said = ""
        if len(notes) == 1:
            said = f": {notes[0]}"
        elif notes:
            said = f": {len(notes)} items"
        if others:
            names = [r.entry.label + scope_text(r.change, r.entry) for r in others]
            said += " — touched: " + ", ".join(dict.fromkeys(names))
        return Line(row.parts + runs(said), role="row")

    def _change_row(self, record: ChangeRecord, note: bool = True) -> Line:
        """One dated change: date, kind, where (entry label, and the paragraph it dates when the entry has
        several, so two alike rows say which text each dates), its note."""
        change, entry = record.change, record.entry
        if is_ruling(entry):  # the ruling's file title is noise here; say what it is and who ruled
            where = f"{ruling_kind(entry)} › {entry.label}" + (f" ({entry.judge})" if entry.judge else "")
        else:
            parts = [*entry.section[-1:], entry.label] if entry.section[-1:] != [entry.title] else [entry.label]
            where = " › ".join(parts)
        text = f" · {change.kind.capitalize()} · {where}{scope_text(change, entry)}"
        if change.note and note:
            text += f": {change.note}"
        return Line(runs(strong(date_text(change)), text), role="row")

    def banned(self, result: BannedResult) -> Answer:
        """Whether what was typed is banned. A unique part of one banned name is that card; part of several
        lists them all as banned; "not on the list" only when no banned name matches, with the list's bans by
        kind of card named, since those can still cover a card the list does not name."""
        early = dated.not_banned_yet(self, result, self.day) if self.day else None
        if early is not None:
            return early
        if result.record is None and result.matches:
            return self._banned_several(result)
        if result.record is None:
            links = [Link(e.title, e.id) for e in result.near]
            parts: list[str | object] = [f"“{echo(result.query)}” is not named on {SOURCE_LABELS['obsidian-hand']}'s "
                                         "banned list."]
            if result.how == "other-version" and result.near:
                parts += ["\nThe list names ", strong(result.near[0].title), " with no experience level; the "
                          "experienced version typed is not named on it."]
            kinds = [e for e in result.kinds if e not in result.near]
            if kinds:
                parts.append("\nThe list also bans by kind of card: ")
                parts += bold_list([e.title for e in kinds], "; ")
                parts.append(". Check whether the card is one of those.")
                links += [Link(e.title, e.id) for e in kinds]
            if result.near:
                parts.append("\nClosest banned names: ")
                parts += bold_list([e.title for e in result.near])
                parts.append(".")
            return self.message("Not on the banned list", [Line(runs(*parts))], kind=BANNED,  # type: ignore[arg-type]
                                arg=result.query, links=links)
        record = result.record
        if result.kind_of_card:  # a line that bans a kind of card: never called "a card" or "this card's name"
            lines: list[Line] = [Line(runs(
                f"{record.document}'s banned list bans a kind of card: ", strong(record.title),
                ". A card of that kind is ", strong("banned"), "."
            ))]
            if result.how == "partial":
                lines.append(Line(runs(f"(“{echo(result.query)}” is part of how the list names that kind.)")))
        else:
            lines = [Line(runs(strong(record.title), " is ", strong("banned"), f" in {record.document}."))]
        if result.how == "version":
            lines.insert(0, Line(runs(
                f"The banned list names one version of “{echo(result.query)}”; other versions (another "
                "subtitle or experience level) are not named on it."
            )))
        elif result.how == "initials":
            lines.append(Line(runs(f"(“{echo(result.query)}” read as the initials of its name.)")))
        elif result.how == "partial" and not result.kind_of_card:
            lines.append(Line(runs(f"(“{echo(result.query)}” is part of this card's name, and of no other banned "
                                   "card's.)")))
            if result.one_version:
                lines.append(Line(runs(
                    "The list names this one version; other versions of the card (another subtitle or "
                    "experience level) are not named on it."
                )))
        if record.group:
            lines.append(Line(runs(f"Category: {record.group}")))
        if result.banned_on:
            lines.append(Line(runs(f"Banned on: {result.banned_on}")))
        if self.day:
            lines += dated.ban_lines(record, self.day)
        body: list[Block] = [Group(list(lines))]
        body += [Quote(record, p, k, inline=True) for k, p in enumerate(record.paragraphs)
                 if p.strip() and p.strip() != record.title]
        versioned = result.how == "version" or (result.how == "partial" and result.one_version)
        label = "One version banned" if versioned else "Banned"
        title = f"{'Banned kind of card' if result.kind_of_card else label}: {record.title}"
        return Answer(
            title=title,
            kind=BANNED,
            arg=result.query,
            body=body,
            facts=self.record_facts(record),
            footer=f"{source_label(record)} · banned list",
            url=self.entry_url(record),
            source=record.source,
            tone="banned",
            hit_ids=[record.id],
        )

    def _banned_several(self, result: BannedResult) -> Answer:
        """What was typed is part of several banned names: every one of them is banned; list them."""
        rows = []
        for record in result.matches:
            facts = f" ({record.group})" if record.group else ""
            rows.append(Line(runs("- ", strong(record.title), " — banned" + facts)))
        document = result.matches[0].document
        intro = Line(runs(f"“{echo(result.query)}” is part of the name of {len(result.matches)} cards on the banned "
                          f"list of {document}, all banned:"))
        first, last = result.matches[0].location, result.matches[-1].location
        where = f"{document} › {result.matches[0].section[0]}" if result.matches[0].section else document
        cite = f"{where}, {line_span(first.first_line, last.last_line)} · {first.file}"
        return Answer(
            title=f"Banned cards matching “{echo(result.query)}”",
            kind=BANNED,
            arg=result.query,
            body=[Group([intro, *rows])],
            facts=[Fact("Citation", [Line(runs(cite))])],
            links=[Link(e.title, e.id) for e in result.matches],
            footer=f"{SOURCE_LABELS['obsidian-hand']} · banned list",
            tone="banned",
            hit_ids=[e.id for e in result.matches],
        )

    def banned_list(self, results: Sequence[BannedResult]) -> Answer:
        """The whole banned list grouped by category as printed, each card with the date it was banned."""
        listed = [(r.record, r.banned_on) for r in results if r.record is not None]
        later = [record for record, _on in listed if self.day and not asof.in_force(record, self.day)]
        listed = [(record, on) for record, on in listed if record not in later]
        if not listed:
            return self.message("Banned list", [Line(runs("No banned list is loaded."))], kind=BANNED)
        groups: dict[str, list[Line]] = {}
        for record, banned_on in listed:
            when = f" — banned {banned_on}" if banned_on else ""
            groups.setdefault(record.group or "Other", []).append(Line(runs(f"- {record.title}{when}")))
        body: list[Block] = [Group([Line(runs(strong(group))), *lines]) for group, lines in groups.items()]
        if later:  # as of a day: the lines the list gained after it
            names = "; ".join(f"{r.title} ({asof.came_to_be(r)})" for r in later)
            body.insert(0, Note(runs(f"Added to the list after {self.day}, so left out: {names}."), "as-of"))
        first, last = listed[0][0], listed[-1][0]
        where = " › ".join([first.document, *first.section[:1]])
        loc, end = first.location, last.location
        span = f"{loc.file}, lines {loc.first_line}-{end.last_line}" if loc.file == end.file else loc.file
        return Answer(
            title=f"Banned list — {first.document}",
            kind=BANNED,
            arg="",
            body=body,
            facts=[Fact("Citation", [Line(runs(f"{where} ({span})"))])],
            footer=f"{len(listed)} lines · dates from the update log where it gives one",
            tone="banned",
            hit_ids=[record.id for record, _ in listed],
        )

    def message(
        self,
        title: str,
        body: Sequence[Block],
        *,
        kind: str = DEFINE,
        arg: str = "",
        links: Sequence[Link] = (),
        tone: str = "neutral",
    ) -> Answer:
        """A short answer (not found, an error, a refusal) in the same structure as a full one."""
        return Answer(title=title, kind=kind, arg=arg, body=list(body), links=list(links), tone=tone)  # type: ignore[arg-type]


def _events(records: Sequence[ChangeRecord]) -> list[list[ChangeRecord]]:
    """Change records (newest first) grouped by what made them: an update-log record leads the records of the
    entries it touched (``Change.update_id``); any other stamp is an event of its own. Order is kept."""
    groups: dict[str, list[ChangeRecord]] = {}
    for n, record in enumerate(records):
        key = record.change.update_id or f"#{n}"
        groups.setdefault(key, []).append(record)
    out = []
    for key, group in groups.items():
        lead = [r for r in group if r.entry.id == key]
        out.append(lead[:1] + [r for r in group if r not in lead[:1]])
    return out


_ROMAN = {"I": 1, "V": 5, "X": 10}


def _code_key(code: str) -> tuple[int, str] | None:
    """``III.B`` -> (3, "B"); None for anything that is not a ruleset section number."""
    m = re.fullmatch(r"([IVX]+)(?:\.([A-Z]))?", code.strip().upper().removeprefix("SECTION").strip())
    if not m:
        return None
    values = [_ROMAN[c] for c in m[1]]
    number = sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))
    return number, m[2] or ""


def _comes_after(ref: str, names: Sequence[str]) -> bool:
    """Whether section number ``ref`` would stand after the last numbered section among ``names``."""
    asked = _code_key(ref.replace(" ", ""))
    known = [k for name in names if (k := _code_key(name.split()[0])) is not None]
    return asked is not None and bool(known) and asked > max(known)


def bold_list(names: Sequence[str], separator: str = ", ") -> list[str | Run]:
    """Names in bold, with plain separators between them: how an answer lists what it offers."""
    out: list[str | Run] = []
    for n, name in enumerate(names):
        out += [separator, strong(name)] if n else [strong(name)]
    return out


def scope_text(change, entry: Entry | None, paragraph: int | None = None) -> str:  # type: ignore[no-untyped-def]
    """Which text a change dates, when that is not plain from where it is shown.

    Under one quoted paragraph (``paragraph`` given) a change of that paragraph needs no label, and one
    dating the whole entry says so. In an entry shown in full, each change names its paragraph (1-based,
    as a judge counts them). An entry of one paragraph needs no label at all.
    """
    if entry is None or len(entry.paragraphs) <= 1:
        return ""
    if is_ruling(entry) or entry.kind == "update":  # a ruling's or an update record's date is all of it
        return ""
    if change.paragraph is None:
        return " (whole entry)"
    loose = _on_own_line(change, entry)
    if paragraph is not None and change.paragraph == paragraph:
        return " (its stamp stands on a line of its own below: it may date more of the entry)" if loose else ""
    name = paragraph_name(entry, change.paragraph)
    return f" ({name}; its stamp stands on a line of its own: it may date more)" if loose else f" ({name})"


def _on_own_line(change, entry: Entry) -> bool:  # type: ignore[no-untyped-def]
    """A stamp written on a line of its own after a paragraph ("[ADDED March 16 2008]" under Targeting paradoxes'
    example): the parser dates the paragraph before it, but the page does not say whether it dates only that
    one, so the answer says so rather than leave the paragraphs above undated without a word. A stamp with a
    note ("[CHANGED 21 May 2008; a Terrain's entering play is a rulebook effect …]") says what it changed."""
    if change.line is None or change.paragraph is None or entry.source != "glossary" or change.note:
        return False  # a stamp with a note says itself what it changed
    first, last = entry.paragraph_lines(change.paragraph)
    return not first <= change.line <= last


def history_line(changes, entry: Entry | None = None, paragraph: int | None = None) -> str:  # type: ignore[no-untyped-def]
    """``Added 2007-09-20 (paragraph 2) · Changed 2008-05-21: <note>``, oldest first, identical stamps merged.

    With ``entry`` each change says which paragraph it dates (see ``scope_text``); the caller chooses the
    changes, and must only pass the ones that date the text it shows.
    """
    parts: list[str] = []
    for change in ordered_changes(changes, per_paragraph=entry is not None):
        text = f"{change.kind.capitalize()} {date_text(change)}{scope_text(change, entry, paragraph)}"
        if change.note:
            text += f": {change.note}"
        parts.append(text)
    return " · ".join(parts)


def _whole(entry: Entry | None) -> tuple[int, ...] | None:
    """Without an engine to ask: an entry of one paragraph is that paragraph; otherwise not clear."""
    return (0,) if entry is not None and len(entry.paragraphs) == 1 else None


def _paragraphs(entry: Entry, scope: tuple[int, ...] | None) -> str:
    """"this" for an entry of one paragraph, "paragraph 2" / "paragraphs 2 and 3" for a scope, "this entry"
    when the scope is not clear."""
    if len(entry.paragraphs) <= 1:
        return "this"
    if scope is None:
        return "this entry"
    if len(scope) == 1:
        return paragraph_name(entry, scope[0])
    names = [paragraph_name(entry, k) for k in scope]
    if all(n.startswith("paragraph ") for n in names):
        names = [n.removeprefix("paragraph ") for n in names]
        return "paragraphs " + ", ".join(names[:-1]) + f" and {names[-1]}"
    return ", ".join(names[:-1]) + f" and {names[-1]}"


def _rule_kind(entry: Entry) -> str:
    """Link prefix for an entry that bears on another: a house ruling is not the format's rule."""
    return "House ruling" if is_ruling(entry) else "Format rule"
