"""The digest between two versions of the sources, composed as one ``Answer`` (the facts: ``glossary.diff``).

The bot posts it to subscribed channels after a reload or a start finds the sources changed, and
``python -m bot diff`` prints it; both render this one answer (Discord embeds paged, plain text whole). Each
change is one item: what changed, then the text before and after, verbatim, each with its own citation (file
and lines). Nothing here is Markdown. A server that chose its formats (``/ruling config formats``) gets the
changes of the formats it plays (``played``), and one line naming the formats whose changes were left out.
"""

from __future__ import annotations

from bot.app.answer import Answer, Block, Citation, Item, Line, Note, Quote, emph, runs, strong
from bot.app.commands import DIGEST
from bot.app.formats import left_out_line
from glossary.diff import EntryChange, ParagraphChange, SourceDiff
from glossary.formats import plays
from glossary.model import Entry, paragraph_name

DIGEST_PER_PAGE = 3  # changes per page: each quotes a text before and after
TITLE = "Rule changes: what the sources say now"
_STATUS = {"added": "Added", "removed": "Removed", "changed": "Changed"}


def _where(entry: Entry) -> str:
    """document › section › entry, as a change row names it."""
    parts = [entry.document, *(s for s in entry.section if not entry.document.endswith(s))]
    if not entry.section or entry.section[-1] != entry.title:
        parts.append(entry.label)
    return " › ".join(p for p in parts if p)


def _paragraph(change: EntryChange, p: ParagraphChange) -> list[Block]:
    """One paragraph's change: a label, then before and after (each quoted and cited)."""
    old, new = change.old, change.new
    if p.status == "changed" and old is not None and new is not None and p.old_index is not None:
        assert p.new_index is not None
        now, was = paragraph_name(new, p.new_index), paragraph_name(old, p.old_index)
        moved = f" ({was} before)" if was != now else ""
        return [
            Line(runs(strong("Reworded"), f" — {now}{moved}:"), role="label"),
            Line(runs(emph("Before:")), role="label"),
            Quote(old, p.before or "", p.old_index),
            Citation(old, p.old_index, role="dash"),
            Line(runs(emph("After:")), role="label"),
            Quote(new, p.after or "", p.new_index),
            Citation(new, p.new_index, role="dash"),
        ]
    if p.status == "added" and new is not None and p.new_index is not None:
        return [
            Line(runs(strong("Added"), f" — {paragraph_name(new, p.new_index)}:"), role="label"),
            Quote(new, p.after or "", p.new_index),
            Citation(new, p.new_index, role="dash"),
        ]
    assert old is not None and p.old_index is not None
    return [
        Line(runs(strong("Removed"), f" — {paragraph_name(old, p.old_index)} was:"), role="label"),
        Quote(old, p.before or "", p.old_index),
        Citation(old, p.old_index, role="dash"),
    ]


def _entry_item(change: EntryChange) -> Item:
    entry = change.entry
    blocks: list[Block] = [Line(runs(strong(_STATUS[change.status]), f" · {_where(entry)}"), role="head")]
    if change.status == "changed":
        for p in change.paragraphs:
            blocks += _paragraph(change, p)
    else:
        verb = "Its text:" if change.status == "added" else "Its text was:"
        blocks += [Line(runs(verb), role="label"), Quote(entry, entry.text), Citation(entry, role="dash")]
    if change.stamps:
        stamps = "; ".join(
            s.raw + (f" ({paragraph_name(entry, s.paragraph)})" if s.paragraph is not None else "")
            for s in change.stamps
        )
        blocks.append(Line(runs(strong("New change stamps"), f": {stamps}")))
    return Item(blocks)


def _record_item(entry: Entry) -> Item:
    return Item([
        Line(runs(strong("New update-log record"), f" · {_where(entry)}"), role="head"),
        Quote(entry, entry.text),
        Citation(entry, role="dash"),
    ])  # fmt: skip


def _banned_item(found: SourceDiff) -> Item:
    blocks: list[Block] = [Line(runs(strong("Banned list")), role="head")]
    for entry in found.banned_added:
        category = f" ({entry.group})" if entry.group else ""
        blocks += [Line(runs(strong("Banned"), f": {entry.title}{category}")), Citation(entry, role="dash")]
    for entry in found.banned_removed:
        blocks += [Line(runs(strong("No longer on the list"), f": {entry.title}")), Citation(entry, role="dash")]
    return Item(blocks)


def summary(found: SourceDiff) -> str:
    """One line of counts (the footer; the log)."""
    counts = found.counts()
    words = {
        "entries_added": "entry added", "entries_removed": "entry removed", "entries_changed": "entry changed",
        "paragraphs_added": "paragraph added", "paragraphs_removed": "paragraph removed",
        "paragraphs_changed": "paragraph reworded", "new_stamps": "new change stamp",
        "new_updates": "new update-log record", "banned_added": "card banned", "banned_removed": "card unbanned",
    }  # fmt: skip
    parts = []
    for key, n in counts.items():
        if n:
            noun = words[key]
            if n != 1:
                noun = noun.replace("entry ", "entries ").replace("paragraph ", "paragraphs ").replace(
                    "stamp", "stamps").replace("record", "records").replace("card ", "cards ")  # fmt: skip
            parts.append(f"{n} {noun}")
    return " · ".join(parts) or "no changes"


def played(found: SourceDiff, playing: frozenset[str] | None) -> tuple[SourceDiff, list[str]]:
    """The changes a server that plays the formats ``playing`` sees (None: every format), and the documents of
    the formats whose changes were left out."""
    if playing is None:
        return found, []
    every = [c.entry for c in found.entries] + found.updates + found.banned_added + found.banned_removed
    left = list(dict.fromkeys(e.document for e in every if not plays(e, playing)))
    shown = SourceDiff(
        entries=[c for c in found.entries if plays(c.entry, playing)],
        updates=[e for e in found.updates if plays(e, playing)],
        banned_added=[e for e in found.banned_added if plays(e, playing)],
        banned_removed=[e for e in found.banned_removed if plays(e, playing)],
        files_added=found.files_added,
        files_removed=found.files_removed,
    )
    return shown, left


def digest(found: SourceDiff, *, arg: str = "", playing: frozenset[str] | None = None) -> Answer:
    """The digest as an answer: one item per change (files, entries in source order, update-log records, the
    banned list), a few per page. ``arg`` names the digest where it is kept (a page button finds it by that);
    ``playing``: the formats the server plays (None: all)."""
    found, left = played(found, playing)
    answer = _composed(found, arg)
    if left:  # one line, where a reader meets it first
        note = Note(runs(left_out_line(left, "changes")), "formats")
        (answer.items[0].blocks if answer.items else answer.body).insert(0, note)
    return answer


def _composed(found: SourceDiff, arg: str) -> Answer:
    items: list[Item] = []
    if found.files_added or found.files_removed:
        lines = [Line(runs(strong("Source file added"), f": {f}")) for f in found.files_added]
        lines += [Line(runs(strong("Source file removed"), f": {f}")) for f in found.files_removed]
        items.append(Item([*lines]))
    items += [_entry_item(c) for c in found.entries]
    items += [_record_item(e) for e in found.updates]
    if found.banned_added or found.banned_removed:
        items.append(_banned_item(found))
    if not items:
        return Answer(title=TITLE, kind=DIGEST, arg=arg,
                      body=[Line(runs("No changes: the entries and their paragraph texts are the same."))])  # fmt: skip
    return Answer(title=TITLE, kind=DIGEST, arg=arg, items=items, per_page=DIGEST_PER_PAGE, footer=summary(found))
