"""What an answer says about dates: an entry as of a day, and an entry's history.

The facts come from the entry model (``glossary.asof``: which paragraphs stood on a day, which wording, what
came later); this module words them as blocks of the answer model, so every renderer shows them as it shows
any note, quote and citation. ``bot.app.compose`` calls it where an answer quotes rule text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.app.answer import Answer, Block, Citation, Group, Item, Line, Link, Note, Quote, emph, runs, strong
from bot.app.commands import BANNED, HISTORY
from glossary import asof
from glossary.kinds import SOURCE_LABELS, is_ruling
from glossary.model import Change, Entry, paragraph_name

if TYPE_CHECKING:
    from bot.app.compose import Composer
    from index.results import BannedResult, Hit

HISTORY_PER_PAGE = 4
_AS_OF = re.compile(r"^(?P<arg>.*)@(?P<day>\d{4}-\d{2}-\d{2})$", re.DOTALL)


def with_as_of(arg: str, day: str | None) -> str:
    """A rebuild key (a term, a question, an entry id) carrying the day it is answered as of: ``facing@2008-01-01``.
    Buttons carry only ``(kind, arg)``, so the day travels inside ``arg``."""
    return f"{arg}@{day}" if day else arg


def split_as_of(arg: str) -> tuple[str, str | None]:
    """``with_as_of`` undone: the key and its day (None when it carries none)."""
    m = _AS_OF.match(arg)
    return (m["arg"], m["day"]) if m else (arg, None)


def when(change: Change) -> str:
    """A change's date as printed, and the date it is read as when the printed one is impossible."""
    if change.anomaly and change.probable_date and change.probable_date != change.date:
        return f"{change.date} (as printed; read as {change.probable_date})"
    return change.date or change.raw


def _dates(days: Sequence[str]) -> str:
    return ", ".join(dict.fromkeys(days))


def _kind_word(change: Change) -> str:
    return {"clarified": "Clarified", "updated": "Updated"}.get(change.kind, "Changed")


# -- an entry as of a day -------------------------------------------------------------------------------------


def notes(state: asof.EntryOnDay, later_rules: Sequence[Entry] = ()) -> list[Block]:
    """What an answer as of ``state.day`` says before the text: paragraphs left out because they were added
    later, format updates not yet made, impossible dates read as their probable ones."""
    out: list[Block] = []
    lead = f"As the loaded sources stood on {state.day}."
    if state.unchanged and not later_rules:
        lead += " Nothing in this entry is dated after that day."
    out.append(Note(runs(lead), "as-of"))
    if state.added_later:
        n = len(state.added_later)
        names = ", ".join(paragraph_name(state.entry, k) for k, _d in state.added_later)
        out.append(Note(runs(
            f"{n} paragraph{'s' if n != 1 else ''} of this entry {'were' if n != 1 else 'was'} added later: "
            f"{_dates([d for _k, d in state.added_later])} ({names}); left out here."
        ), "as-of"))
    if later_rules:
        ordered = sorted(later_rules, key=lambda r: asof.came_to_be(r) or "")
        named = "; ".join(f"{r.label} ({asof.came_to_be(r)})" for r in ordered)
        out.append(Note(runs(f"Made after {state.day}, so left out: {named}."), "as-of"))
    out += probable_notes(state.probable)
    return out


def probable_notes(changes: Sequence[Change]) -> list[Block]:
    return [Note(runs(f"The printed date {c.date} cannot be right; it is read as its probable date "
                      f"{c.probable_date} for this answer."), "as-of") for c in changes]


def paragraph_blocks(
    composer: Composer, state: asof.EntryOnDay, index: int, *, inline: bool = True, role: str = "",
    marks: tuple[tuple[int, int], ...] = (), sentences: tuple[tuple[int, int], ...] = (),
) -> list[Block]:
    """Paragraph ``index`` as it stood on the day: the loaded text, or the Old wording an update record keeps
    (cited there); a paragraph changed later says so. Nothing when it was added later."""
    entry = state.entry
    stood = state.paragraph(index)
    if stood is None:
        return []
    record = stood.earlier_from
    if record is not None:
        k = next((i for i, p in enumerate(record.paragraphs) if p == record.old_wording), None)
        return [
            Line(runs(emph(f"As it read before {_dates([when(c) for c in record.changes])}: the Old wording kept by "
                           f"{record.label} of {record.document}, whose New wording replaced it then:"))),
            Quote(entry, stood.text, index, inline=inline, role=role),
            Citation(record, k, role="dash"),
        ]
    blocks: list[Block] = [Quote(entry, stood.text, index, marks, inline=inline, role=role, sentences=sentences)]
    if stood.later:
        said = "; ".join(f"{_kind_word(c).lower()} on {when(c)}" for c in stood.later)
        blocks.append(Line(runs(emph(
            f"{said[0].upper()}{said[1:]}; the earlier wording is not in the sources: this is the text after that."
        ))))
    return blocks


def not_yet(composer: Composer, state: asof.EntryOnDay, *, kind: str, arg: str) -> Answer:
    """An entry that came to be after the day: never quoted as in force; when and where it was added."""
    entry = state.entry
    first = [c for c in asof.dated_changes(entry) if asof.effective(c) == state.added_on]
    stamp = f" ({first[0].raw})" if first else ""
    what = "was not on the banned list yet" if entry.kind == "banned" else "did not exist yet"
    lines: list[Block] = [
        Line(runs(strong(entry.label), f" {what} on {state.day}: it was added on {state.added_on}{stamp}.")),
        Line(runs("Ask again without ", strong("as_of"), " to read it as it stands now.")),
        Citation(entry, None),
    ]
    lines += probable_notes(state.probable)
    return composer.message(f"{entry.label} — not yet on {state.day}", lines, kind=kind, arg=arg)


def ban_lines(record: Entry, day: str) -> list[Line]:
    """Under a ban in force on the day: whether the list dates it at all."""
    if asof.came_to_be(record) is None:
        return [Line(runs(f"The list does not date this ban, so whether it stood on {day} cannot be told from the "
                          "sources; it is on the list as loaded."))]
    return [Line(runs(f"Already banned on {day}."))]


LEGAL_THAT_DAY = "As far as that list goes, it was legal on that day."


def not_yet_banned(record: Entry, day: str) -> str:
    """What follows a banned card's name when its ban came after ``day`` (``/banned`` and ``/ask`` as of a day)."""
    came = asof.came_to_be(record)
    return (f" was not yet banned on {day}: it was added to {record.document}'s banned list"
            + (f" on {came}." if came else " later."))


def not_banned_yet(composer: Composer, result: BannedResult, day: str) -> Answer | None:
    """A banned card whose ban came after the day: "not yet banned", with the date it was banned; else None."""
    records = [result.record] if result.record is not None and result.how != "version" else list(result.matches)
    later = [r for r in records if not asof.in_force(r, day)]
    if not records or len(later) < len(records):
        return None
    rows: list[Block] = [Line(runs(strong(record.title), not_yet_banned(record, day))) for record in later]
    rows.append(Line(runs(LEGAL_THAT_DAY)))
    rows += [Citation(r, None) for r in later]
    answer = composer.message(f"Not yet banned on {day}: {later[0].title}", rows, kind=BANNED, arg=result.query)
    answer.tone = "neutral"
    return answer


# -- search results as of a day ------------------------------------------------------------------------------


def sift_hits(hits: Sequence[Hit], day: str) -> tuple[list[Hit], list[str]]:
    """Search results on the day: a result whose entry or quoted paragraph came later is left out (named)."""
    kept: list[Hit] = []
    left: list[str] = []
    for hit in hits:
        state = asof.on_day(hit.entry, day)
        came = state.added_after(hit.paragraph)
        if came is not None:
            part = state.exists and hit.paragraph is not None
            where = f", {paragraph_name(hit.entry, hit.paragraph or 0)}" if part else ""
            left.append(f"{hit.entry.label}{where} (added {came})")
            continue
        if hit.companion is not None and state.added_after(hit.companion.paragraph):
            hit.companion = None
        kept.append(hit)
    return kept, left


def left_out_note(left: Sequence[str], day: str) -> Note:
    return Note(runs(f"Left out, not yet in the rules on {day}: " + "; ".join(left) + "."), "as-of")


def not_yet_banned_notes(hits: Sequence[Hit], day: str) -> list[Note]:
    """For a banned-list line the day leaves out ("is Moshi Eihime banned?" as of 2015-12-01), what ``/banned``
    as of that day says: not yet on the list, since when, and legal as far as the list goes; "no rules text
    answers that question" would hide that the list does answer it."""
    notes: list[Note] = []
    for hit in hits:
        if hit.entry.kind != "banned" or asof.in_force(hit.entry, day):
            continue
        notes.append(Note(runs(hit.entry.label + not_yet_banned(hit.entry, day) + " " + LEGAL_THAT_DAY), "as-of"))
    return notes


# -- history ---------------------------------------------------------------------------------------------------


def history(composer: Composer, entry: Entry, lookup_updates: Sequence[Entry]) -> Answer:
    """Every dated change of ``entry``, oldest first, each with the text it dates quoted verbatim and cited,
    and the format's update records that concern the entry (each quoted with its own citation)."""
    rows: list[tuple[str, Item]] = []
    shown_updates: set[str] = set()
    for change in asof.dated_changes(entry):
        record = next((u for u in lookup_updates if u.id == change.update_id), None)
        if record is not None and record.id != entry.id:
            shown_updates.add(record.id)
            rows.append((asof.effective(change) or "", _update_item(composer, record, entry, change)))
            continue
        where = "whole entry" if change.paragraph is None else paragraph_name(entry, change.paragraph)
        head = Line(runs(strong(when(change)), f" · {change.kind.capitalize()} · {where}"
                         + (f": {change.note}" if change.note else "")), role="head")
        if change.paragraph is not None and 0 <= change.paragraph < len(entry.paragraphs):
            quoted: list[Block] = [Quote(entry, entry.paragraphs[change.paragraph], change.paragraph, role="hit")]
        else:
            quoted = [Quote(entry, entry.text, None, role="hit")]
        cited = composer.citation(entry, change.paragraph, role="hit")
        rows.append((asof.effective(change) or "", Item([Group([head, *quoted, cited], role="hit")])))
    for record in lookup_updates:
        if record.id in shown_updates or record.id == entry.id or entry.id not in record.overrides:
            continue
        first = asof.dated_changes(record)
        rows.append(((asof.effective(first[0]) or "") if first else "",
                     _update_item(composer, record, entry, first[0] if first else None)))
    rows.sort(key=lambda r: r[0] or "9999")
    title = f"History — {entry.label}"
    if not rows:
        body: list[Block] = [Line(runs(f"The loaded sources give no date for any text of {entry.label}.")),
                             composer.citation(entry)]
        return composer.message(title, body, kind=HISTORY, arg=entry.id, links=[Link(entry.label, entry.id)])
    items = [item for _d, item in rows]
    items[0].links.insert(0, Link(entry.label, entry.id))
    n = len(items)
    return Answer(
        title=title,
        kind=HISTORY,
        arg=entry.id,
        items=items,
        per_page=HISTORY_PER_PAGE,
        footer=f"{n} dated change{'s' if n != 1 else ''}, oldest first · {SOURCE_LABELS.get(entry.source, '')}",
        url=composer.entry_url(entry),
        source=entry.source,
        tone="rule",
        hit_ids=[entry.id, *shown_updates],
    )


def _update_item(composer: Composer, record: Entry, entry: Entry, change: Change | None) -> Item:
    """A format update record concerning ``entry``: its date, its whole text quoted, its citation."""
    date = when(change) if change is not None else "undated"
    label = "ruling" if is_ruling(record) else "update"
    head = Line(runs(strong(date), f" · {record.document} {label} · ", strong(record.label),
                     f" (concerns {entry.label})"), role="head")
    quote = Quote(record, record.text, None, role="hit", sentences=_lines_naming(record, entry))
    return Item([Group([head, quote, composer.citation(record, role="hit")], role="hit")],
                [Link(record.label, record.id)])


def _lines_naming(record: Entry, entry: Entry) -> tuple[tuple[int, int], ...]:
    """The offsets in ``record.text`` of its paragraphs that name ``entry`` (the update log's own links): of the
    four lines of Update 01/11/2016, "Proclaim – limited its use to the player's turn" is Proclaim's history. None
    when every paragraph would be marked (a one-line record), as with the sentence marks."""
    naming = set(record.paragraphs_naming([entry.id]))
    spans: list[tuple[int, int]] = []
    start = 0
    for k, text in enumerate(record.paragraphs):
        if k in naming and text.strip():
            lead = len(text) - len(text.lstrip())
            spans.append((start + lead, start + len(text.rstrip())))
        start += len(text) + 1  # ``Entry.text`` joins the paragraphs with one newline
    return tuple(spans) if 0 < len(spans) < len(record.paragraphs) else ()


# -- the answer as a whole --------------------------------------------------------------------------------------


def add_note(answer: Answer, note: Note) -> None:
    """``note`` opening the answer's text (its first item, for a list answer)."""
    blocks = answer.items[0].blocks if answer.items else answer.body
    at = 1 if blocks and isinstance(blocks[0], Note) and blocks[0].kind == "as-of" else 0
    blocks.insert(at, note)


def as_of_answer(answer: Answer, day: str) -> Answer:
    """An answer given as of ``day``: titled so, opened by the day it speaks for, and rebuilt on that day by its
    buttons (page, post) and ``Open`` links, which carry the day in their key."""
    if day not in answer.title:
        answer.title = f"{answer.title} — as of {day}"
    answer.arg = with_as_of(answer.arg, day)
    answer.links = [Link(ln.label, with_as_of(ln.entry_id, day)) for ln in answer.links]
    for item in answer.items:
        item.links = [Link(ln.label, with_as_of(ln.entry_id, day)) for ln in item.links]
    blocks = answer.items[0].blocks if answer.items else answer.body
    if not any(isinstance(b, Note) and b.kind == "as-of" for b in blocks[:1]):
        blocks.insert(0, Note(runs(f"As the loaded sources stood on {day}."), "as-of"))
    return answer
