"""The source-kind registry: every kind of document the judge reads, described once.

A kind says how to recognise its documents, which parser reads them, how answers name it, where it is
listed, whether its entries are rules or rulings, and which extra checks ``lint`` runs on its files. The
loader dispatches by it; the index checks ``source`` filters against it; the application labels, orders and
offers ``source:`` choices from it. Adding a kind is one ``DocumentKind`` in ``KINDS`` plus its parser
module (see the development guide).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from glossary import house, mediawiki, obsidian
from glossary.limits import long_lines
from glossary.model import Anomaly, Entry, ParsedDocument

Check = Callable[[str, str], list[Anomaly]]  # (text, cited file name) -> anomalies


@dataclass(frozen=True)
class DocumentKind:
    """One kind of source document.

    ``key`` is ``Entry.source`` and the ``source:`` option's value; ``label`` how answers name the
    document kind; ``order`` where it is listed (choices, ``/about``); ``detect(text, path)`` says whether
    a file is of this kind (kinds are tried in ``order``, so a cheap suffix test can come first);
    ``parse(text, file)`` reads it; ``rulings`` marks kinds whose entries are judges' rulings applying to
    rules (labelled with judge and date, shown after the rule) rather than rules; ``expects`` describes the
    document in the "unknown kind of document" message; ``checks`` run on its text besides the parser's
    own (``python -m glossary lint`` shows what they find); ``format`` marks kinds each of whose documents
    is a format (a ruleset a server chooses to play or not: ``glossary.formats``)."""

    key: str
    label: str
    order: int
    detect: Callable[[str, Path], bool]
    parse: Callable[[str, str], ParsedDocument]
    expects: str
    rulings: bool = False
    format: bool = False
    checks: tuple[Check, ...] = field(default=(long_lines,))


KINDS: tuple[DocumentKind, ...] = (
    DocumentKind(
        house.KEY,
        house.LABEL,
        order=3,
        detect=lambda _text, path: path.suffix.lower() in house.SUFFIXES,
        parse=house.parse_house_rulings,
        expects="a Markdown house-rulings file",
        rulings=True,
    ),
    DocumentKind(
        obsidian.SOURCE,
        obsidian.DOCUMENT,
        order=2,
        detect=lambda text, _path: obsidian.looks_like_obsidian_ruleset(text),
        parse=obsidian.parse_obsidian,
        expects="the Obsidian Hand Ruleset",
        format=True,
    ),
    DocumentKind(
        mediawiki.KEY,
        mediawiki.LABEL,
        order=1,
        detect=lambda text, _path: mediawiki.looks_like_glossary_page(text),
        parse=mediawiki.parse_glossary_page,
        expects="a glossary page with '[edit] Term' entries",
    ),
)
"""In detection order (a house-rulings file is known by its suffix, before its text is looked at)."""

BY_KEY: dict[str, DocumentKind] = {k.key: k for k in KINDS}
LISTED: tuple[DocumentKind, ...] = tuple(sorted(KINDS, key=lambda k: k.order))
SOURCE_LABELS: dict[str, str] = {k.key: k.label for k in LISTED}
"""key -> label, in listing order."""


def detect(text: str, path: Path) -> DocumentKind | None:
    """The kind of a file's text (``None``: no kind recognises it)."""
    return next((k for k in KINDS if k.detect(text, path)), None)


def label(source: str) -> str:
    """How answers name a source kind (its key when unknown)."""
    kind = BY_KEY.get(source)
    return kind.label if kind else source


def is_ruling(entry: Entry) -> bool:
    """Whether ``entry`` is a judge's ruling (applies to rules) rather than a rule."""
    kind = BY_KEY.get(entry.source)
    return bool(kind and kind.rulings)


def expected() -> str:
    """What the loader accepts, for the message naming a file of no known kind."""
    names = [k.expects for k in LISTED]
    return ", ".join(names[:-1]) + ", or " + names[-1] if len(names) > 1 else names[0]
