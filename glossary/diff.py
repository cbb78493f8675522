"""What changed between two versions of the sources: facts about entries, nothing about how to show them.

``diff(old, new)`` compares two lists of entries (two parsed corpora, or a corpus and a snapshot kept from an
earlier start) and returns a ``SourceDiff``: entries added and removed, and for entries in both the paragraphs
added, removed and changed (before and after, verbatim, each with its file and lines), the change stamps that are
new, the update-log records that are new and the banned list's lines added and removed.

Paragraph texts are compared, not stamps: a page re-exported from the wiki with a reworded paragraph and no new
stamp is still a change. Texts are compared with their runs of whitespace folded (a re-export that only re-wraps
or trims a line changes nothing a judge reads); what is shown is always the verbatim text. A paragraph that only
moved to other lines (a blank line inserted above it) is not a change.

``snapshot``/``from_snapshot`` keep a corpus's entries as plain JSON-ready data, so a later start can diff the
sources it reads against the ones it read before; ``fingerprint`` names what the digest compares (equal
fingerprints: an empty digest).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Literal

from glossary.model import Change, Entry, Location

Status = Literal["added", "removed", "changed"]
SNAPSHOT_FORMAT = 1
# Paragraphs of a replaced run are paired as "changed" when at least this alike; below, one was removed and
# another added (a rewritten entry is not shown as pairs of unrelated texts).
PAIR_AT = 0.5


def folded(text: str) -> str:
    """The text as compared: runs of whitespace made one space, ends trimmed."""
    return " ".join(text.split())


@dataclass(frozen=True)
class ParagraphChange:
    """One paragraph added, removed or changed. ``before``/``after`` are verbatim; ``old_index``/``new_index``
    0-based in the old and the new entry (None on the side where it does not exist)."""

    status: Status
    before: str | None
    after: str | None
    old_index: int | None
    new_index: int | None


@dataclass
class EntryChange:
    """An entry added, removed, or in both versions with paragraphs that changed (``old``/``new``: the entry
    in each version, None where it does not exist)."""

    status: Status
    old: Entry | None
    new: Entry | None
    paragraphs: list[ParagraphChange] = field(default_factory=list)
    stamps: list[Change] = field(default_factory=list)  # change stamps in the new version that the old lacks

    @property
    def entry(self) -> Entry:
        """The entry as it stands now (as it stood, when removed)."""
        entry = self.new or self.old
        assert entry is not None
        return entry


@dataclass
class SourceDiff:
    """The digest's facts. ``entries`` holds rule entries (not update records or banned-list lines, which are
    ``updates`` and ``banned_added``/``banned_removed``), in source order."""

    entries: list[EntryChange] = field(default_factory=list)
    updates: list[Entry] = field(default_factory=list)  # update-log records new in this version
    banned_added: list[Entry] = field(default_factory=list)
    banned_removed: list[Entry] = field(default_factory=list)
    files_added: list[str] = field(default_factory=list)
    files_removed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.entries or self.updates or self.banned_added or self.banned_removed
                    or self.files_added or self.files_removed)  # fmt: skip

    @property
    def stamps(self) -> list[tuple[Entry, Change]]:
        """Every new change stamp, with the entry it dates."""
        return [(c.entry, s) for c in self.entries for s in c.stamps]

    def counts(self) -> dict[str, int]:
        by_status = Counter(c.status for c in self.entries)
        paragraphs = Counter(p.status for c in self.entries if c.status == "changed" for p in c.paragraphs)
        return {
            "entries_added": by_status["added"],
            "entries_removed": by_status["removed"],
            "entries_changed": by_status["changed"],
            "paragraphs_added": paragraphs["added"],
            "paragraphs_removed": paragraphs["removed"],
            "paragraphs_changed": paragraphs["changed"],
            "new_stamps": len(self.stamps),
            "new_updates": len(self.updates),
            "banned_added": len(self.banned_added),
            "banned_removed": len(self.banned_removed),
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (``python -m index diff --json``): every fact with its file and lines."""
        return {
            "counts": self.counts(),
            "files_added": self.files_added,
            "files_removed": self.files_removed,
            "entries": [_entry_change_dict(c) for c in self.entries],
            "new_updates": [_where(e) | {"text": e.text} for e in self.updates],
            "banned_added": [_where(e) | {"text": e.text, "category": e.group} for e in self.banned_added],
            "banned_removed": [_where(e) | {"text": e.text, "category": e.group} for e in self.banned_removed],
        }


def _where(entry: Entry, index: int | None = None) -> dict[str, Any]:
    first, last = entry.paragraph_lines(index)
    return {"id": entry.id, "title": entry.label, "document": entry.document, "file": entry.location.file,
            "first_line": first, "last_line": last}  # fmt: skip


def _entry_change_dict(c: EntryChange) -> dict[str, Any]:
    out = _where(c.entry) | {"status": c.status, "kind": c.entry.kind}
    paragraphs = []
    for p in c.paragraphs:
        row: dict[str, Any] = {"status": p.status}
        if c.old is not None and p.old_index is not None:
            row["before"] = _where(c.old, p.old_index) | {"paragraph": p.old_index, "text": p.before}
        if c.new is not None and p.new_index is not None:
            row["after"] = _where(c.new, p.new_index) | {"paragraph": p.new_index, "text": p.after}
        paragraphs.append(row)
    out["paragraphs"] = paragraphs
    out["new_stamps"] = [{"kind": s.kind, "date": s.date, "raw": s.raw, "paragraph": s.paragraph, "line": s.line}
                         for s in c.stamps]  # fmt: skip
    return out


# -- comparing -------------------------------------------------------------------------------------------------


def _stamp_key(change: Change) -> tuple[str, str, str]:
    return (change.kind, change.raw, change.note or "")


def _new_stamps(old: Entry | None, new: Entry) -> list[Change]:
    """The new entry's own stamps (not update-log links) that the old one lacks, counted as a multiset."""
    before = Counter(_stamp_key(c) for c in (old.changes if old else []) if c.update_id is None)
    out = []
    for change in new.changes:
        if change.update_id is not None:
            continue
        key = _stamp_key(change)
        if before[key]:
            before[key] -= 1
        else:
            out.append(change)
    return out


def _similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def _replaced(old: Entry, new: Entry, i1: int, i2: int, j1: int, j2: int) -> list[ParagraphChange]:
    """A run of old paragraphs replaced by a run of new ones: pairs alike enough are "changed" (in order),
    the rest removed or added."""
    out: list[ParagraphChange] = []
    j = j1
    for i in range(i1, i2):
        best, best_j = 0.0, None
        for k in range(j, j2):
            score = _similarity(folded(old.paragraphs[i]), folded(new.paragraphs[k]))
            if score > best:
                best, best_j = score, k
        if best_j is not None and best >= PAIR_AT:
            out += [ParagraphChange("added", None, new.paragraphs[k], None, k) for k in range(j, best_j)]
            out.append(ParagraphChange("changed", old.paragraphs[i], new.paragraphs[best_j], i, best_j))
            j = best_j + 1
        else:
            out.append(ParagraphChange("removed", old.paragraphs[i], None, i, None))
    out += [ParagraphChange("added", None, new.paragraphs[k], None, k) for k in range(j, j2)]
    return out


def paragraph_changes(old: Entry, new: Entry) -> list[ParagraphChange]:
    """The paragraphs of ``new`` that differ from ``old`` in text (not in lines)."""
    a = [folded(p) for p in old.paragraphs]
    b = [folded(p) for p in new.paragraphs]
    out: list[ParagraphChange] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "delete":
            out += [ParagraphChange("removed", old.paragraphs[i], None, i, None) for i in range(i1, i2)]
        elif tag == "insert":
            out += [ParagraphChange("added", None, new.paragraphs[j], None, j) for j in range(j1, j2)]
        elif tag == "replace":
            out += _replaced(old, new, i1, i2, j1, j2)
    return out


def diff(old: Sequence[Entry], new: Sequence[Entry]) -> SourceDiff:
    """The facts between two versions of the sources (see the module docstring)."""
    before = {e.id: e for e in old}
    after = {e.id: e for e in new}
    out = SourceDiff()
    old_files = list(dict.fromkeys(e.location.file for e in old))
    new_files = list(dict.fromkeys(e.location.file for e in new))
    out.files_added = [f for f in new_files if f not in old_files]
    out.files_removed = [f for f in old_files if f not in new_files]
    for entry in new:
        previous = before.get(entry.id)
        if previous is None:
            if entry.kind == "update":
                out.updates.append(entry)
            elif entry.kind == "banned":
                out.banned_added.append(entry)
            else:
                out.entries.append(EntryChange("added", None, entry, stamps=_new_stamps(None, entry)))
            continue
        paragraphs = paragraph_changes(previous, entry)
        stamps = _new_stamps(previous, entry)
        if paragraphs or stamps:
            out.entries.append(EntryChange("changed", previous, entry, paragraphs, stamps))
    for entry in old:
        if entry.id in after:
            continue
        if entry.kind == "banned":
            out.banned_removed.append(entry)
        else:
            out.entries.append(EntryChange("removed", entry, None))
    return out


# -- keeping a version ------------------------------------------------------------------------------------------


def _change_data(change: Change) -> dict[str, Any]:
    return dict(change.__dict__)


def snapshot(entries: Iterable[Entry]) -> dict[str, Any]:
    """The entries as plain data: what ``diff`` compares and what a digest cites (ids, titles, where they stand,
    paragraphs verbatim with their lines, change stamps and update links)."""
    rows = []
    for e in entries:
        rows.append({
            "id": e.id, "source": e.source, "document": e.document, "kind": e.kind, "title": e.title,
            "label": e.label, "section": list(e.section), "paragraphs": list(e.paragraphs),
            "lines": [list(span) for span in e.lines],
            "location": [e.location.file, e.location.first_line, e.location.last_line],
            "changes": [_change_data(c) for c in e.changes], "group": e.group, "url": e.url,
        })  # fmt: skip
    return {"format": SNAPSHOT_FORMAT, "entries": rows}


def from_snapshot(data: dict[str, Any]) -> list[Entry]:
    """The entries ``snapshot`` kept (enough of each for ``diff`` and for citing it)."""
    if data.get("format") != SNAPSHOT_FORMAT:
        raise ValueError(f"unknown snapshot format {data.get('format')!r}")
    out = []
    for row in data["entries"]:
        file, first, last = row["location"]
        out.append(Entry(
            id=row["id"], source=row["source"], document=row["document"], kind=row["kind"], title=row["title"],
            section=list(row["section"]), paragraphs=list(row["paragraphs"]), location=Location(file, first, last),
            changes=[Change(**c) for c in row["changes"]], url=row.get("url"), group=row.get("group"),
            lines=[(a, b) for a, b in row["lines"]], label=row.get("label") or row["title"],
        ))  # fmt: skip
    return out


def fingerprint(entries: Iterable[Entry]) -> str:
    """A digest of what ``diff`` compares: two versions with the same fingerprint have an empty digest (lines
    and whitespace do not count)."""
    rows = sorted(
        (e.id, e.kind, e.location.file, [folded(p) for p in e.paragraphs],
         sorted(_stamp_key(c) for c in e.changes if c.update_id is None))
        for e in entries
    )  # fmt: skip
    payload = json.dumps(rows, ensure_ascii=False, separators=(",", ":"), default=list)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
