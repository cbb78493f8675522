"""Formats: the tournament rulesets a server may choose to play, found in the loaded documents.

A format is one document of a kind marked ``format`` in ``glossary.kinds`` (today the Obsidian Hand Ruleset,
source kind ``obsidian-hand``). Formats are not listed anywhere else: another ruleset of that kind is another
document, hence another format, named by its document title. A server's choice is stored as format ids, the
slug of that title ("the-obsidian-hand-ruleset"), which survive re-parsing and reloads as long as the title
does. Entries of other kinds (the glossary, house rulings) belong to no format and are always shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from glossary.kinds import BY_KEY
from glossary.model import Entry, slugify


@dataclass(frozen=True)
class Format:
    """One format document: its stable id, its title as the document gives it, its source kind, and whether
    it has a banned list."""

    id: str
    title: str
    source: str
    banned_list: bool = False


def format_kind(source: str) -> bool:
    """Whether documents of source kind ``source`` are formats."""
    kind = BY_KEY.get(source)
    return bool(kind and kind.format)


def format_id(entry: Entry) -> str | None:
    """The id of the format ``entry`` belongs to (``None``: a glossary entry, a ruling: no format)."""
    return slugify(entry.document) if format_kind(entry.source) else None


def formats(entries: Iterable[Entry]) -> list[Format]:
    """The formats among ``entries`` (a loaded corpus), in the order their documents were loaded."""
    found: dict[str, Format] = {}
    for entry in entries:
        fid = format_id(entry)
        if fid is None:
            continue
        known = found.get(fid)
        if known is None:
            found[fid] = Format(fid, entry.document, entry.source, entry.kind == "banned")
        elif entry.kind == "banned" and not known.banned_list:
            found[fid] = Format(fid, known.title, known.source, True)
    return list(found.values())


def plays(entry: Entry, chosen: frozenset[str] | None) -> bool:
    """Whether a server that plays the formats ``chosen`` (``None``: it chose nothing, all are shown) sees
    ``entry``: always for an entry of no format, else only when its format is chosen."""
    if chosen is None:
        return True
    fid = format_id(entry)
    return fid is None or fid in chosen
