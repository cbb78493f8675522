"""Result types returned by the search engine: the contract between ``index`` and ``bot``.

They carry whole ``Entry`` objects (so the bot can render verbatim text and citations)
plus what the query found in them. ``to_dict`` gives the documented ``--json`` form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from glossary.model import SOURCE_LABELS, Change, Entry


def citation(entry: Entry) -> str:
    """Human citation: document › section path › title, file and lines (the judge's 'where is that written')."""
    # A glossary page's section ("Glossary T") already ends its document title; don't say it twice.
    parts = [entry.document, *(s for s in entry.section if not entry.document.endswith(s))]
    if not entry.section or entry.section[-1] != entry.title:
        parts.append(entry.title)
    loc = entry.location
    lines = f"lines {loc.first_line}-{loc.last_line}" if loc.last_line != loc.first_line else f"line {loc.first_line}"
    return " › ".join(p for p in parts if p) + f" ({loc.file}, {lines})"


@dataclass
class Hit:
    """One ranked entry: the paragraph that answers, highlighted, and that paragraph's change stamps."""

    entry: Entry
    score: float
    snippet: str = ""  # best paragraph, query words wrapped in **bold** (Markdown, safe for Discord)
    paragraph: int | None = None  # index into entry.paragraphs of the snippet
    changes: list[Change] = field(default_factory=list)  # stamps dating that paragraph or the whole entry

    def to_dict(self) -> dict[str, Any]:
        e = self.entry
        return {
            "id": e.id,
            "title": e.title,
            "source": e.source,
            "source_label": SOURCE_LABELS.get(e.source, e.source),
            "kind": e.kind,
            "section": list(e.section),
            "text": e.text,
            "snippet": self.snippet,
            "paragraph": self.paragraph,
            # Only the stamps dating the snippet (or the whole entry): others would misdate what is shown.
            "changes": [c.__dict__.copy() for c in self.changes],
            "citation": citation(e),
            "url": e.url,
            "score": round(self.score, 4),
        }


@dataclass
class DefineResult:
    """``define``: the entry when confident, else candidates for "did you mean"."""

    entry: Entry | None
    candidates: list[Entry] = field(default_factory=list)
    how: str = "none"  # "exact", "alias", "prefix", "fuzzy", "fulltext", "none"


@dataclass
class BannedResult:
    """``banned``: the matching banned-list record, or the nearest banned names."""

    query: str
    record: Entry | None
    banned_on: str | None = None  # ISO date from the update log, when known
    near: list[Entry] = field(default_factory=list)

    @property
    def is_banned(self) -> bool:
        return self.record is not None


@dataclass
class ChangeRecord:
    """One row of the change history: a stamp or update-log record, linked to its entry."""

    change: Change
    entry: Entry

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.entry.id,
            "title": self.entry.title,
            "source": self.entry.source,
            "section": list(self.entry.section),
            "citation": citation(self.entry),
            **{k: v for k, v in self.change.__dict__.items()},
        }
