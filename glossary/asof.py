"""An entry as the loaded sources stood on a day: the one place that reads its change dates for "as of".

The sources date their texts in three ways, and each says something different about an earlier day:

* an ``added`` stamp on a paragraph: before that date the paragraph was not there; on every paragraph (or on
  the whole entry, as a banned-list line or a house ruling is dated): the entry was not there;
* a ``changed``/``clarified`` stamp: the paragraph was there, in words the sources do not keep, unless a
  format's update record gives its Old and New wording (the Obsidian Hand's log does): then the Old wording
  is what it said;
* an update-log record is itself dated: before its date it did not amend anything yet.

An impossible date (``May 30 3008``) is read as its probable date, and the state says it did so. Nothing
here words an answer: it returns facts for the answer model (``bot.app.compose``) to say.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from glossary.model import Change, Entry, ordered_changes

# Kinds of entry whose own date (a whole-entry stamp) is when the entry came to be, whatever its verb: an
# update-log record exists from its date, a banned-list line and a ruling from theirs.
_DATED_WHOLE = frozenset({"update", "banned", "ruling"})


def effective(change: Change) -> str | None:
    """The date a change takes effect for as-of: the probable date of an impossible one, else as printed."""
    if change.anomaly and change.probable_date:
        return change.probable_date
    return change.date


def after(change: Change, day: str) -> bool:
    """Whether ``change`` is dated after ``day`` (ISO); an undated change is never said to be later."""
    when = effective(change)
    return when is not None and when > day


@dataclass
class ParagraphOnDay:
    """One paragraph of an entry as it stood on the day.

    ``text`` is verbatim: the paragraph as loaded, or the Old wording an update record gives (``earlier_from``
    is that record). ``later`` are the changes to it after the day (the earlier wording is not in the sources
    when ``earlier_from`` is None)."""

    index: int
    text: str
    later: list[Change] = field(default_factory=list)
    earlier_from: Entry | None = None


@dataclass
class EntryOnDay:
    """``entry`` on ``day``. ``exists`` is False when it came to be after the day (``added_on``); otherwise
    ``paragraphs`` are those in force, ``added_later`` the left-out paragraphs with their dates, and
    ``probable`` the impossible dates read as their probable ones in deciding this."""

    entry: Entry
    day: str
    exists: bool = True
    added_on: str | None = None
    paragraphs: list[ParagraphOnDay] = field(default_factory=list)
    added_later: list[tuple[int, str]] = field(default_factory=list)
    probable: list[Change] = field(default_factory=list)

    @property
    def unchanged(self) -> bool:
        """Nothing about the entry is later than the day: it reads on the day as loaded."""
        return self.exists and not self.added_later and not any(p.later for p in self.paragraphs)

    def paragraph(self, index: int) -> ParagraphOnDay | None:
        """Paragraph ``index`` as it stood (None: not there yet)."""
        return next((p for p in self.paragraphs if p.index == index), None)

    def added_after(self, paragraph: int | None) -> str | None:
        """The date the entry, or its paragraph ``paragraph``, came to be when that was after the day; else None:
        how a search result quoting that paragraph is told to be left out."""
        if not self.exists:
            return self.added_on
        return dict(self.added_later).get(paragraph) if paragraph is not None else None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (``python -m index … --as-of --json``): the day, whether the entry stood, what came later."""
        return {
            "day": self.day,
            "exists": self.exists,
            "added_on": self.added_on,
            "added_later": [{"paragraph": k, "date": d} for k, d in self.added_later],
            "paragraphs": [
                {"paragraph": p.index, "text": p.text, "later": [asdict(c) for c in p.later],
                 "earlier_wording_from": p.earlier_from.id if p.earlier_from else None}
                for p in self.paragraphs
            ],
            "probable_dates": [asdict(c) for c in self.probable],
        }


def came_to_be(entry: Entry) -> str | None:
    """When the entry itself appeared, when its dates say so: a whole-entry ``added`` stamp (or the own date
    of an update record, a banned-list line, a ruling), else the earliest ``added`` stamp when every
    paragraph has one. None: the sources do not date the entry's beginning."""
    whole = [c for c in entry.changes if c.paragraph is None and effective(c)]
    own = whole if entry.kind in _DATED_WHOLE else [c for c in whole if c.kind == "added"]
    if own:
        return min(effective(c) or "" for c in own)
    stamped = [p for p in range(len(entry.paragraphs)) if not entry.stamp_only(p)]
    added = {p: _added(entry, p) for p in stamped}
    if stamped and all(added.values()):
        return min(d for d in added.values() if d)
    return None


def in_force(entry: Entry, day: str) -> bool:
    """Whether ``entry`` existed on ``day`` as far as its dates tell (an undated one is taken to have)."""
    begun = came_to_be(entry)
    return begun is None or begun <= day


def on_day(entry: Entry, day: str, updates: Iterable[Entry] = ()) -> EntryOnDay:
    """``entry`` as it stood on ``day`` (ISO ``YYYY-MM-DD``); ``updates`` are the loaded update-log records,
    whose Old wording stands in for a paragraph their New wording replaced after the day."""
    state = EntryOnDay(entry, day)
    state.probable = [c for c in ordered_changes(entry.changes) if c.anomaly and c.probable_date]
    begun = came_to_be(entry)
    if begun is not None and begun > day:
        state.exists, state.added_on = False, begun
        return state
    records = [u for u in updates if u.old_wording and u.new_wording and any(after(c, day) for c in u.changes)]
    whole_later = [c for c in entry.changes if c.paragraph is None and c.kind != "added" and after(c, day)
                   and entry.kind not in _DATED_WHOLE]
    for index, text in enumerate(entry.paragraphs):
        added = _added(entry, index)
        if added is not None and added > day:
            state.added_later.append((index, added))
            continue
        if (stamps := entry.stamps_of(index)) and all(after(c, day) for c in stamps):
            continue  # the bracket of a later change, standing on its own line: said with the paragraph it dates
        own = [c for c in entry.changes if c.paragraph == index and c.kind != "added" and after(c, day)]
        paragraph = ParagraphOnDay(index, text, ordered_changes([*own, *whole_later]))
        for record in sorted(records, key=_record_date):  # the earliest later record holds the wording of the day
            if record.new_wording and record.new_wording in paragraph.text and record.old_wording:
                paragraph.text = paragraph.text.replace(record.new_wording, record.old_wording)
                paragraph.earlier_from = record
                break
        state.paragraphs.append(paragraph)
    return state


def later_updates(rules: Iterable[Entry], day: str) -> tuple[list[Entry], list[Entry]]:
    """Split the rules bearing on an entry into those in force on ``day`` and those that came later."""
    now, later = [], []
    for rule in rules:
        (now if in_force(rule, day) else later).append(rule)
    return now, later


def dated_changes(entry: Entry) -> list[Change]:
    """Every dated change of the entry, oldest first (an impossible date placed by its probable one); a
    stamp repeated word for word on one paragraph is listed once."""
    return [c for c in ordered_changes(entry.changes) if effective(c)]


def _added(entry: Entry, index: int) -> str | None:
    """The date paragraph ``index`` was added, by its own ``added`` stamp (None: not dated so)."""
    dates = [effective(c) for c in entry.changes if c.paragraph == index and c.kind == "added" and effective(c)]
    return min(d for d in dates if d) if dates else None


def _record_date(record: Entry) -> str:
    return min((effective(c) or "9999" for c in record.changes), default="9999")
