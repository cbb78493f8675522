"""Rulings as house-rulings Markdown (the ``L5R_HOUSE_RULINGS`` format), both ways.

Export writes what ``glossary.house`` reads, and import reads with ``glossary.house`` itself (its parser
and its lint), so a file exported from one server imports into another unchanged, and a folder of
house-rulings files imports into a server. A ruling typed into Discord is checked the same way before it
is stored: it must read back from its own Markdown exactly as typed (no ``##`` heading starting another
ruling, no first line taken for metadata), or the export would not round-trip.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from bot.rulings.importing import ImportLimits, heading_count
from bot.rulings.repository import Draft, Ruling
from glossary.house import parse_house_rulings
from glossary.model import Change, CrossRef, Entry, Location, SourceError
from index.query.overlay import NameResolver, scoped_id

DOCUMENT = "Server rulings"
TITLE_MAX = 200
TEXT_MAX = 4000  # Discord's limit for one text input in a modal: an edit must fit back into one
EVENT_MAX = 100
APPLIES_MAX = 10
NAME_ECHO = 100  # characters of a typed name shown back in a problem (the field takes 400; a file line any)


@dataclass(frozen=True)
class Problem:
    """Something wrong with submitted or imported text; ``line`` is 1-based in the file, when known."""

    message: str
    line: int | None = None

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


def clean_text(text: str) -> str:
    """Line ends unified and surrounding blank lines dropped; everything else kept as typed."""
    lines = (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(line.rstrip() for line in lines)


def clean_line(text: str | None) -> str:
    return " ".join((text or "").split())


def applies_line(ids: Sequence[str], resolver: NameResolver) -> str:
    """``Applies to:`` value naming ``ids`` so they read back as the same entries."""
    labels = [resolver.label(i) for i in ids]
    separator = "; " if any("," in label for label in labels) else ", "
    return separator.join(labels)


def ruling_markdown(
    title: str,
    text: str,
    *,
    applies_to: Sequence[str] = (),
    resolver: NameResolver | None = None,
    event: str | None = None,
    judge: str | None = None,
    ruled_on: str | None = None,
    edited_on: str | None = None,
) -> str:
    """One ``## Title`` section with its metadata lines, as ``glossary.house`` reads it."""
    meta = [f"Date: {ruled_on or dt.datetime.now(dt.UTC).date().isoformat()}"]
    if edited_on and edited_on != ruled_on:
        meta.append(f"Updated: {edited_on}")
    if judge:
        meta.append(f"Judge: {clean_line(judge)}")
    if event:
        meta.append(f"Event: {clean_line(event)}")
    if applies_to:
        meta.append(f"Applies to: {applies_line(applies_to, resolver) if resolver else ', '.join(applies_to)}")
    return f"## {title}\n" + "\n".join(meta) + "\n\n" + text + "\n"


def export_markdown(rulings: Sequence[Ruling], resolver: NameResolver, heading: str) -> str:
    """A whole server's active rulings as one house-rulings file."""
    parts = [f"# {clean_line(heading) or DOCUMENT}\n"]
    for ruling in rulings:
        parts.append(
            ruling_markdown(
                ruling.title,
                ruling.text,
                applies_to=ruling.applies_to,
                resolver=resolver,
                event=ruling.event,
                judge=ruling.judge,
                ruled_on=ruling.ruled_on,
                edited_on=ruling.edited_on,
            )
        )
    return "\n".join(parts)


def _echo(name: str) -> str:
    """A typed name as a problem quotes it: at most NAME_ECHO characters."""
    return name if len(name) <= NAME_ECHO else name[: NAME_ECHO - 1] + "…"


def resolve_names(names: Sequence[str], resolver: NameResolver) -> tuple[list[str], list[str]]:
    """Entry ids for typed names, and a readable problem for each name that names none or several."""
    ids: list[str] = []
    problems: list[str] = []
    for name in names:
        found = resolver.resolve(name)
        if len(found) == 1:
            if found[0] not in ids:
                ids.append(found[0])
        elif not found:
            problems.append(f"“{_echo(name)}” is not the name of any entry in the rules")
        else:
            problems.append(f"“{_echo(name)}” names {len(found)} entries; write one of: {', '.join(found)}")
    return ids, problems


def split_names(value: str) -> list[str]:
    """Names in an "Applies to" field: separated by commas (or by semicolons when a name has a comma)."""
    value = clean_line(value)
    separator = ";" if ";" in value else ","
    return [n.strip() for n in value.split(separator) if n.strip()]


def check_draft(
    title: str, text: str, event: str | None, applies: str, resolver: NameResolver
) -> tuple[Draft, list[str]]:
    """A modal's fields -> a Draft, plus every problem found (an empty list: it can be stored)."""
    title, text, event = clean_line(title), clean_text(text), clean_line(event) or None
    problems: list[str] = []
    if not title:
        problems.append("The title is empty.")
    elif len(title) > TITLE_MAX:
        problems.append(f"The title is {len(title)} characters long; at most {TITLE_MAX}.")
    elif title.startswith("#"):
        problems.append("The title cannot start with “#”.")
    if not text:
        problems.append("The ruling text is empty.")
    elif len(text) > TEXT_MAX:
        problems.append(f"The ruling text is {len(text)} characters long; at most {TEXT_MAX}.")
    if event and len(event) > EVENT_MAX:
        problems.append(f"The event name is {len(event)} characters long; at most {EVENT_MAX}.")
    names = split_names(applies)
    if len(names) > APPLIES_MAX:
        problems.append(f"“Applies to” names {len(names)} entries; at most {APPLIES_MAX}.")
    ids, unknown = resolve_names(names[:APPLIES_MAX], resolver)
    problems += [p[0].upper() + p[1:] + "." for p in unknown]
    draft = Draft(title=title, text=text, applies_to=tuple(ids), event=event)
    if not problems:
        problems += _round_trip(draft)
    return draft, problems


def _round_trip(draft: Draft) -> list[str]:
    """Problems that would make the exported Markdown read back differently from what was typed."""
    markdown = ruling_markdown(draft.title, draft.text, event=draft.event, judge="x", ruled_on="2000-01-01")
    try:
        doc = parse_house_rulings(markdown, "draft.md")
    except SourceError:
        return ["The ruling could not be read back as Markdown."]
    if len(doc.entries) != 1:
        return [
            "The ruling text contains a “#” or “##” heading (or a line underlined with === or ---), which would "
            "start a new ruling in the exported file; use “###” for a sub-heading."
        ]
    (entry,) = doc.entries
    if entry.title != draft.title:
        return ["The title cannot be written as a Markdown heading as typed."]
    if "".join(entry.text.split()) != "".join(draft.text.split()):
        return ["Part of the ruling text would not be kept as typed in the exported Markdown."]
    return []


def parse_import(
    data: bytes, filename: str, resolver: NameResolver, limits: ImportLimits | None = None
) -> tuple[list[Draft], list[Problem]]:
    """An uploaded house-rulings file -> drafts, or every problem (lint errors with their lines).

    Any problem means nothing is imported: a half-imported file is worse than none. Linear in the file's
    size (a scaling test holds it to that); a file over ``limits`` is refused before it is parsed. It takes
    a second or more for a big file: callers run it in a worker thread, off the event loop.
    """
    limits = limits or ImportLimits()
    if problem := limits.size_problem(len(data)):
        return [], [Problem(problem)]
    if problem := limits.count_problem(heading_count(data)):
        return [], [Problem(problem)]
    if not data.strip():
        return [], [Problem("the file is empty")]
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        return [], [Problem("this is not a text file (it contains a NUL byte)", line)]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return [], [Problem("the file is not UTF-8 text; save it as UTF-8", line)]
    try:
        doc = parse_house_rulings(text, filename)
    except SourceError as exc:
        return [], [Problem(exc.reason, exc.line)]
    problems = [Problem(f"{a.kind}: {a.message}", a.line) for a in doc.anomalies]
    if problem := limits.count_problem(len(doc.entries)):
        problems.append(Problem(problem))
    drafts: list[Draft] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for entry in doc.entries:
        line = entry.location.first_line
        names = [ref.target or ref.text for ref in entry.see_also]
        ids, unknown = resolve_names(names, resolver)
        ref_line = next((ref.line for ref in entry.see_also if ref.line), line)
        problems += [Problem(f"ruling '{entry.title}': {p}", ref_line) for p in unknown]
        dates = {c.kind: c.date for c in entry.changes if c.date}
        body = _body_text(lines, entry)
        if len(entry.title) > TITLE_MAX:
            problems.append(Problem(f"ruling '{entry.title[:40]}…': title longer than {TITLE_MAX} characters", line))
        if len(body) > TEXT_MAX:
            problems.append(Problem(f"ruling '{entry.title}': text longer than {TEXT_MAX} characters", line))
        if entry.event and len(entry.event) > EVENT_MAX:
            problems.append(Problem(f"ruling '{entry.title}': event longer than {EVENT_MAX} characters", line))
        drafts.append(
            Draft(
                title=entry.title,
                text=body,
                applies_to=tuple(ids),
                event=entry.event,
                judge=entry.judge,
                ruled_on=dates.get("added"),
            )
        )
    problems.sort(key=lambda p: p.line or 0)
    return drafts, problems


def _body_text(lines: Sequence[str], entry: Entry) -> str:
    """The ruling's body exactly as written in the file: from its first paragraph to the end of its last.

    ``lines`` is the whole file split once by the caller; only the ruling's own lines are looked at (splitting
    the file again for every ruling made an import quadratic: 8,000 rulings took minutes).
    """
    first = entry.paragraphs[0].split("\n")[0].strip()
    end = min(entry.location.last_line, len(lines))
    start = next((i for i in range(entry.location.first_line, end) if lines[i].strip() == first), None)
    if start is None:
        return clean_text(entry.text)
    return clean_text("\n".join(lines[start:end]))


def ruling_entry(ruling: Ruling, resolver: NameResolver | None = None) -> Entry:
    """A stored ruling as an ``Entry`` for the scope's overlay: paragraphs split as the export reads them."""
    paragraphs = [ruling.text]
    try:
        parsed = parse_house_rulings(f"## {ruling.title}\n\n{ruling.text}\n", "ruling.md").entries
        if len(parsed) == 1 and parsed[0].paragraphs:
            paragraphs = parsed[0].paragraphs
    except SourceError:
        pass
    changes = [Change(kind="added", date=ruling.ruled_on, raw=f"Date: {ruling.ruled_on}")]
    if ruling.edited_on and ruling.edited_on != ruling.ruled_on:
        changes.append(Change(kind="updated", date=ruling.edited_on, raw=f"Updated: {ruling.edited_on}"))
    labels = {i: (resolver.label(i) if resolver else i) for i in ruling.applies_to}
    return Entry(
        id=scoped_id(ruling.id),
        source="house",
        document=DOCUMENT,
        kind="ruling",
        title=ruling.title,
        section=[ruling.event] if ruling.event else [DOCUMENT],
        paragraphs=paragraphs,
        location=Location(f"server ruling #{ruling.id}, version {ruling.version}", 1, ruling.text.count("\n") + 1),
        changes=changes,
        see_also=[CrossRef(text=labels[i], target=i) for i in ruling.applies_to],
        judge=ruling.judge,
        event=ruling.event,
        changed_since=ruling.review_since,
    )
