"""Find dated change stamps ("[ADDED Sept 20 2007]") inside a paragraph of rules text.

The L5R rules wiki marks edits with bracketed stamps written by hand, so they vary: month-first
or day-first dates, full or abbreviated month names, two-digit years, a reason after ``;``, a word
before the verb, two stamps in one bracket, a bracket closed with ``}`` and even a year typo
(``3008``). This module turns each stamp into :class:`StampMatch` (ready to become a
``glossary.model.Change``) and reports bracketed text that looks like a stamp but cannot be read,
so ``lint`` can point at it. It never raises on any input.

Rules (documented in the README):

* A bracket is a stamp candidate when it starts with a capitalised change verb ("Added"), contains a
  verb in capitals, or contains a date ("[changed]" alone is ordinary text). Verbs: ADDED, CHANGED,
  CLARIFIED, CLARIFICATION (= clarified), UPDATED, REMOVED.
* Dates: ``March 16 2008``, ``Sept. 20, 2007``, ``22 September 2007``, ``Jul 17 07``. Month names come
  from :mod:`calendar`; any prefix of at least three letters of a month name is accepted (``Sept``).
  Two-digit years are read as 20YY (the wiki dates from 2007-2010).
* Notes: text before the verb ("Ability"), text between verb and date ("material on X") and text
  after the date (the reason after ``;``) become the note, joined with ``; ``.
* Anomalies: a ``}`` closer or a missing closer ("unbalanced-bracket"); a date after ``today``, before
  :data:`EARLIEST_YEAR`, or on a day that does not exist ("impossible-date"). The date is still kept
  exactly as written; for an impossible year, ``probable_date`` is the unique one-digit correction
  between :data:`EARLIEST_YEAR` and ``today``'s year, if there is exactly one.
"""

from __future__ import annotations

import calendar
import datetime
import re
from dataclasses import dataclass, field

from glossary.model import Change, ChangeKind

#: The L5R card game was first published in 1995; no rules stamp can be older.
EARLIEST_YEAR = 1995
NO_SUCH_DAY = "no such day"

_VERBS: dict[str, ChangeKind] = {
    "added": "added",
    "changed": "changed",
    "clarified": "clarified",
    "clarification": "clarified",
    "updated": "updated",
    "removed": "removed",
}


def _month_table() -> dict[str, int]:
    """Month name -> number for every English month name and every prefix of 3+ letters ("sept").

    Python leaves LC_TIME at "C" unless the program changes it, so :mod:`calendar` gives English names.
    """
    table: dict[str, int] = {}
    for number in range(1, 13):
        name = calendar.month_name[number].lower()
        for end in range(3, len(name) + 1):
            table.setdefault(name[:end], number)
    return table


#: Month name or prefix of 3+ letters ("sept") -> month number; what reads a date in words elsewhere too
#: (``index.query.parsing.named_days``).
MONTHS = _month_table()
#: A regular-expression alternation of ``MONTHS``' keys, longest first.
MONTH_PATTERN = "|".join(sorted((re.escape(m) for m in MONTHS), key=len, reverse=True))
_DAY = r"(?P<{name}>\d{{1,2}})(?:st|nd|rd|th)?"
_YEAR = r"(?P<{name}>\d{{4}}|\d{{2}})(?!\d)"
_SEP = r"(?:\s*+,\s*+|\s++)"  # possessive: a whitespace run is read once (linear on hostile text)
_DATE_RE = re.compile(
    rf"(?<![\w])(?:"
    rf"{_DAY.format(name='d1')}\s++(?P<m1>{MONTH_PATTERN})(?:\.|\b){_SEP}{_YEAR.format(name='y1')}"
    rf"|(?P<m2>{MONTH_PATTERN})(?:\.|\b)\s*+{_DAY.format(name='d2')}(?!\d){_SEP}{_YEAR.format(name='y2')}"
    rf")",
    re.IGNORECASE,
)
_VERB_RE = re.compile(r"\b(" + "|".join(_VERBS) + r")\b", re.IGNORECASE)
# "[" ... then "]", "}" or end of text; no nested brackets.
_BRACKET_RE = re.compile(r"\[(?P<body>[^\[\]{}\n]*)(?P<close>[\]}]|$)")
_NOTE_STRIP = " \t,;:-–—"
_SEPARATOR_ONLY = re.compile(r"^[\s,;&/]*+(?:and)?[\s,;&/]*+$", re.IGNORECASE)


@dataclass
class StampMatch:
    """One change stamp read from a paragraph; ``start``/``end`` are offsets of its bracket."""

    kind: ChangeKind
    date: str | None
    raw: str
    start: int
    end: int
    note: str | None = None
    probable_date: str | None = None
    anomalies: list[tuple[str, str]] = field(default_factory=list)  # (kind, message) for lint

    @property
    def anomaly(self) -> str | None:
        """All anomaly messages in one string, as ``Change.anomaly`` holds them."""
        return "; ".join(message for _, message in self.anomalies) or None

    def to_change(self, paragraph: int | None = None, line: int | None = None) -> Change:
        """The model's ``Change`` for this stamp."""
        return Change(
            kind=self.kind,
            date=self.date,
            raw=self.raw,
            note=self.note,
            paragraph=paragraph,
            line=line,
            anomaly=self.anomaly,
            probable_date=self.probable_date,
        )


@dataclass(frozen=True)
class UnparsedStamp:
    """A bracket that looks like a change stamp but could not be read (reported as "unparsed-stamp")."""

    raw: str
    start: int
    reason: str


def _looks_like_stamp(body: str) -> bool:
    first = _VERB_RE.match(body.strip())
    verb_at_start = first is not None and not first.group(1).islower()
    capital_verb = any(m.group(1).isupper() for m in _VERB_RE.finditer(body))
    return verb_at_start or capital_verb or _DATE_RE.search(body) is not None


def _clean_note(text: str) -> str:
    return text.strip(_NOTE_STRIP)


def _join_notes(*parts: str) -> str | None:
    kept = [p for p in (_clean_note(p) for p in parts) if p]
    return "; ".join(kept) or None


def probable_year(year: int, today: datetime.date) -> int | None:
    """The unique year in [EARLIEST_YEAR, today] that differs from ``year`` in exactly one digit.

    A typo changes one digit ("3008"); when two corrections are possible, neither is evident.
    """
    written = f"{year:04d}"
    candidates = set()
    for position, digit in enumerate(written):
        for replacement in "0123456789":
            if replacement != digit:
                candidate = int(written[:position] + replacement + written[position + 1 :])
                if EARLIEST_YEAR <= candidate <= today.year:
                    candidates.add(candidate)
    return candidates.pop() if len(candidates) == 1 else None


def date_problem(year: int, month: int, day: int, today: datetime.date) -> tuple[str | None, str | None]:
    """Why a written date cannot be right, and the evident intended ISO date; ``(None, None)`` if it is fine.

    The reason is :data:`NO_SUCH_DAY`, "in the future" or "before 1995". Shared by every parser that reads
    hand-written dates, so they all flag the same dates and propose the same corrections.
    """
    try:
        written = datetime.date(year, month, day)
    except ValueError:
        return NO_SUCH_DAY, None
    if written > today:
        reason = "in the future"
    elif year < EARLIEST_YEAR:
        reason = f"before {EARLIEST_YEAR}"
    else:
        return None, None
    fixed = probable_year(year, today)
    try:
        probable = datetime.date(fixed, month, day).isoformat() if fixed is not None else None
    except ValueError:  # 29 February in a non-leap corrected year
        probable = None
    return reason, probable


def _read_date(match: re.Match[str], today: datetime.date) -> tuple[str, str | None, list[tuple[str, str]]]:
    """ISO date as written, probable date, anomalies."""
    day_text = match.group("d1") or match.group("d2")
    month_text = match.group("m1") or match.group("m2")
    year_text = match.group("y1") or match.group("y2")
    day, month, year = int(day_text), MONTHS[month_text.lower()], int(year_text)
    if len(year_text) == 2:
        year += 2000
    iso = f"{year:04d}-{month:02d}-{day:02d}"
    reason, probable = date_problem(year, month, day, today)
    if reason is None:
        return iso, None, []
    if reason == NO_SUCH_DAY:
        return iso, None, [("impossible-date", f"impossible date {iso}: {NO_SUCH_DAY}")]
    message = f"impossible date {iso} ({reason})"
    if probable:
        message += f"; probably {probable}"
    return iso, probable, [("impossible-date", message)]


def parse_stamps(
    paragraph: str, *, today: datetime.date | None = None
) -> tuple[list[StampMatch], list[UnparsedStamp]]:
    """All change stamps in ``paragraph`` (in order) and the stamp-like brackets that could not be read."""
    today = today or datetime.date.today()
    stamps: list[StampMatch] = []
    unparsed: list[UnparsedStamp] = []
    for bracket in _BRACKET_RE.finditer(paragraph):
        body = bracket.group("body")
        if not _looks_like_stamp(body):
            continue
        raw = bracket.group(0)
        bracket_anomalies: list[tuple[str, str]] = []
        if bracket.group("close") == "}":
            bracket_anomalies.append(
                ("unbalanced-bracket", f"unbalanced bracket: {raw!r} is closed with '}}'")
            )
        elif bracket.group("close") == "":
            bracket_anomalies.append(("unbalanced-bracket", f"unbalanced bracket: {raw!r} is never closed"))
        found, reason = _parse_body(body, raw, bracket.start(), bracket.end(), today)
        if not found:
            unparsed.append(UnparsedStamp(raw=raw, start=bracket.start(), reason=reason))
            continue
        for stamp in found:
            stamp.anomalies[:0] = bracket_anomalies
        stamps.extend(found)
    return stamps, unparsed


def _parse_body(
    body: str, raw: str, start: int, end: int, today: datetime.date
) -> tuple[list[StampMatch], str]:
    """Stamps in one bracket body, or ([], why not)."""
    dates = list(_DATE_RE.finditer(body))
    if not dates:
        return [], "no date in day/month/year form"
    if not _VERB_RE.search(body[: dates[0].start()]):
        return [], "no change verb (ADDED, CHANGED, CLARIFIED, UPDATED, REMOVED) before the date"
    stamps: list[StampMatch] = []
    previous_end = 0
    tail_start = len(body)
    for date in dates:
        segment = body[previous_end : date.start()]
        verbs = list(_VERB_RE.finditer(segment))
        if verbs:
            verb = verbs[-1]
            before, between = segment[: verb.start()], segment[verb.end() :]
            kind = _VERBS[verb.group(1).lower()]
            if stamps:  # text between two stamps belongs to the first one (its reason)
                stamps[-1].note = _join_notes(stamps[-1].note or "", before)
                prefix = ""
            else:
                prefix = before
        elif stamps and _SEPARATOR_ONLY.match(segment):  # "[ADDED Oct 1 2007 and Nov 3 2007]"
            kind, prefix, between = stamps[-1].kind, "", ""
        else:  # a date inside a reason: part of the previous stamp's note
            tail_start = previous_end
            break
        iso, probable, anomalies = _read_date(date, today)
        stamps.append(
            StampMatch(
                kind=kind,
                date=iso,
                raw=raw,
                start=start,
                end=end,
                note=_join_notes(prefix, between),
                probable_date=probable,
                anomalies=anomalies,
            )
        )
        previous_end = date.end()
        tail_start = previous_end
    tail = body[tail_start:]
    if stamps and _clean_note(tail):
        stamps[-1].note = _join_notes(stamps[-1].note or "", tail)
    return stamps, ""


def strip_stamps(paragraph: str) -> str:
    """The paragraph without any stamp-like brackets (used to tell a lone stamp line from text)."""
    return _BRACKET_RE.sub(lambda m: "" if _looks_like_stamp(m.group("body")) else m.group(0), paragraph)
