"""``python -m index … --as-of DATE`` and ``python -m index history TERM``: the command line's dated answers.

The facts are the entry model's (``glossary.asof``), the same the bot words; here they are printed as the
index command line prints everything: plain lines (texts verbatim, each cited) or, with ``--json``, rows.
"""

from __future__ import annotations

import argparse
import calendar
import json
import textwrap
from typing import TYPE_CHECKING, Any

from glossary import asof
from glossary.model import Change, Entry, citation, paragraph_name
from index.query.parsing import check_date

if TYPE_CHECKING:
    from index.engine import Engine


def day_of(value: str) -> str:
    """``--as-of``: 2015-11-01, or 2015-11 / 2015 meaning the end of that month or year; ValueError otherwise."""
    text = check_date(value, "--as-of")
    parts = [int(p) for p in text.split("-")]
    year, month = parts[0], parts[1] if len(parts) > 1 else 12
    day = parts[2] if len(parts) > 2 else calendar.monthrange(year, month)[1]
    return f"{year:04d}-{month:02d}-{day:02d}"


def _wrap(text: str) -> str:
    return "\n".join(textwrap.fill(line, 100, initial_indent="   ", subsequent_indent="   ")
                     for line in text.splitlines() if line.strip())


def _when(change: Change) -> str:
    if change.anomaly and change.probable_date and change.probable_date != change.date:
        return f"{change.date} (as printed; read as {change.probable_date})"
    return change.date or change.raw


def _updates(engine: Engine) -> list[Entry]:
    return [e for e in engine.corpus.entries if e.kind == "update"]


def print_on_day(state: asof.EntryOnDay, rules: list[Entry]) -> None:
    """One entry as it stood on the day: left-out paragraphs and later format updates said, texts verbatim."""
    e, day = state.entry, state.day
    print(f"{e.label}  [{e.id}]  as of {day}")
    print(f"   {citation(e)}")
    if not state.exists:
        print(f"   did not exist yet on {day}: added {state.added_on}")
        return
    for c in state.probable:
        print(f"   the printed date {c.date} cannot be right; read as its probable date {c.probable_date}")
    if state.added_later:
        n = len(state.added_later)
        names = ", ".join(f"{paragraph_name(e, k)} {d}" for k, d in state.added_later)
        print(f"   {n} paragraph{'s' if n != 1 else ''} of this entry {'were' if n != 1 else 'was'} added later "
              f"(left out): {names}")
    now, later = asof.later_updates(rules, day)
    for rule in now:
        print(f"   in force on {day}: {rule.label} [{rule.id}] ({asof.came_to_be(rule) or 'undated'})")
    for rule in later:
        print(f"   made after {day} (left out): {rule.label} [{rule.id}] ({asof.came_to_be(rule)})")
    for p in state.paragraphs:
        print(_wrap(p.text))
        if p.earlier_from is not None:
            print(f"   (the Old wording of {p.earlier_from.label}, {citation(p.earlier_from)}: as it read before "
                  + ", ".join(_when(c) for c in p.earlier_from.changes) + ")")
        elif p.later:
            said = "; ".join(f"{c.kind} on {_when(c)}" for c in p.later)
            print(f"   ({said}; the earlier wording is not in the sources)")


def dispatch(engine: Engine, args: argparse.Namespace) -> int:
    """``history`` and the lookups given ``--as-of``."""
    if args.command == "history":
        return history(engine, args)
    day = day_of(args.as_of)
    updates = _updates(engine)
    limit = args.limit or 5
    entries: list[Entry]
    left: list[str] = []
    if args.command == "define":
        r = engine.define(" ".join(args.term), limit=limit)
        entries = list(r.same_name) or ([r.entry] if r.entry else [])
    elif args.command == "banned":
        b = engine.banned(" ".join(args.card))
        entries = [b.record] if b.record else list(b.matches)
    else:
        if args.command == "search":
            hits = engine.search(" ".join(args.question), limit=limit, source=args.source, since=args.since)
        else:
            hits = engine.section(" ".join(args.ref), limit=limit)
        entries = []
        for h in hits:
            came = asof.on_day(h.entry, day).added_after(h.paragraph)
            if came is None:
                entries.append(h.entry)
            else:
                left.append(f"{h.entry.label} [{h.entry.id}] (added {came})")
    states = [asof.on_day(e, day, updates) for e in entries]
    rules = {e.id: [r for r in (engine.get(i) for i in e.overridden_by) if r is not None] for e in entries}
    if args.json:
        rows = [{"id": s.entry.id, "title": s.entry.title, "citation": citation(s.entry),
                 "as_of": s.to_dict(), "banned": s.exists if args.command == "banned" else None,
                 "left_out_later": [r.id for r in asof.later_updates(rules[s.entry.id], day)[1]]} for s in states]
        print(json.dumps({"as_of": day, "results": rows, "left_out": left}, ensure_ascii=False, indent=1))
        return 0
    if not states:
        print("No matching entries." if args.command != "banned" else f"Not on the banned list: {' '.join(args.card)}")
    for s in states:
        if args.command == "banned":
            verdict = (f"BANNED on {day} (since {s.added_on or asof.came_to_be(s.entry)})" if s.exists and
                       asof.came_to_be(s.entry) else f"NOT YET BANNED on {day} (banned {s.added_on})"
                       if not s.exists else f"BANNED as loaded; the list does not date this ban, so {day} is not told")
            print(f"{verdict}: {s.entry.title} — {citation(s.entry)}")
            continue
        print_on_day(s, rules[s.entry.id])
    if left:
        print(f"Left out, not yet in the rules on {day}: " + "; ".join(left))
    return 0


def history(engine: Engine, args: argparse.Namespace) -> int:
    """Every dated change of the entry, oldest first, each with the paragraph it dates; the format's update
    records that concern it, each quoted and cited."""
    term = " ".join(args.term)
    entry = engine.get(term)
    if entry is None:
        r = engine.define(term)
        entry = r.entry or (r.same_name[0] if r.same_name else None)
        if entry is None:
            names = "; ".join(f"{c.label} [{c.id}]" for c in r.candidates)
            print("No entry found." + (f" Did you mean: {names}" if names else ""))
            return 0
    rows: list[tuple[str, dict[str, Any]]] = []
    shown: set[str] = set()
    updates = _updates(engine)
    for change in asof.dated_changes(entry):
        record = next((u for u in updates if u.id == change.update_id and u.id != entry.id), None)
        if record is not None:
            shown.add(record.id)
            rows.append((asof.effective(change) or "", _update_row(record, change)))
            continue
        para = change.paragraph
        text = entry.paragraphs[para] if para is not None and 0 <= para < len(entry.paragraphs) else entry.text
        rows.append((asof.effective(change) or "", {
            "date": change.date, "effective_date": asof.effective(change), "kind": change.kind, "raw": change.raw,
            "note": change.note, "paragraph": para, "quote": text, "citation": citation(entry, para),
            "update": None,
        }))
    for record in updates:
        if record.id not in shown and record.id != entry.id and entry.id in record.overrides:
            first = asof.dated_changes(record)
            rows.append(((asof.effective(first[0]) or "") if first else "",
                         _update_row(record, first[0] if first else None)))
    rows.sort(key=lambda r: r[0] or "9999")
    if args.json:
        print(json.dumps({"id": entry.id, "title": entry.title, "history": [row for _d, row in rows]},
                         ensure_ascii=False, indent=1))
        return 0
    print(f"History of {entry.label}  [{entry.id}]  {citation(entry)}")
    if not rows:
        print("   the loaded sources give no date for any of its text")
    for _d, row in rows:
        where = ("whole entry" if row["paragraph"] is None else paragraph_name(entry, row["paragraph"]))
        if row["update"]:
            where = f"update {row['update']}"
        note = f": {row['note']}" if row["note"] else ""
        date = row["date"] or "?"
        if row["effective_date"] and row["effective_date"] != row["date"]:
            date += f" (as printed; read as {row['effective_date']})"
        print(f"{date}  {row['kind'].upper()}  {where}{note}")
        print(f"   {row['citation']}")
        print(_wrap(row["quote"]))
    return 0


def _update_row(record: Entry, change: Change | None) -> dict[str, Any]:
    return {
        "date": change.date if change else None, "effective_date": asof.effective(change) if change else None,
        "kind": change.kind if change else "updated", "raw": change.raw if change else "",
        "note": change.note if change else None, "paragraph": None, "quote": record.text,
        "citation": citation(record), "update": record.id,
    }
