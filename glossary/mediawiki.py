"""Parse a text export of an L5R Comprehensive Rules glossary page ("Glossary T") into entries.

The wiki at rules.l5r.com was saved as plain text in two styles: a compact one (title, "From Legend
of the Five Rings Rules", "Contents |", ``[edit] Term`` headings, one paragraph per line, ``- ``
bullets, "Back to the Comprehensive Rules") and a browser-copy one ("Jump to: navigation, search",
a numbered table of contents, blank lines between paragraphs, ``•`` bullets, then "Personal tools",
"Views", "Navigation"... after the footer). Both give the same entries.

Page rules (documented in the README):

* The page title is the first line of the form ``Glossary <X>`` before the first heading.
* A heading is a line ``[edit] Term`` (or ``Term [edit]``); it starts an entry that runs to the next
  heading or to the footer. Each non-empty line is one paragraph, verbatim (stripped of surrounding
  whitespace only; a ``•`` bullet stays a ``•``, a ``- `` bullet stays ``- ``): the styles give the same
  entries, titles, stamps and links, each quoting its own file exactly.
* The footer starts at the first footer line after the first heading ("Back to the Comprehensive
  Rules", "Retrieved from ...", "Personal tools", "Views", "Navigation", "Search", "Toolbox",
  "This page was last modified ...", "Categories: ..."); everything from there on is page chrome.
* A page with no title, no headings, or no footer after its entries (a truncated copy) raises
  :class:`SourceError`; oddities inside a good page become :class:`Anomaly` records instead.
* A stamp dates the paragraph it closes, as the wiki's editors wrote them: a stamp at the end of a
  paragraph dates that paragraph, and a line holding only stamps (in the middle or at the end of an
  entry) closes, so dates, the nearest paragraph before it. A stamp-only line before any paragraph of
  the entry (straight under its heading) dates the whole entry. A stamp never dates a paragraph it
  does not close: a judge quoting one paragraph must never be shown another paragraph's date.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from urllib.parse import quote

from glossary.limits import analysed
from glossary.linking import unique_id
from glossary.model import (
    Anomaly,
    Change,
    CrossRef,
    Entry,
    Location,
    ParsedDocument,
    SourceError,
    make_id,
)
from glossary.stamps import parse_stamps, strip_stamps

KEY = "glossary"  # Entry.source of this kind (see glossary.kinds)
LABEL = "L5R Comprehensive Rules"
BASE_URL = "http://rules.l5r.com/"

# Every pattern here runs on text from a file someone else wrote, so each is linear in its input: a
# whitespace run is matched possessively (``\s++``) and only from its start (``(?<!\s)``), never re-scanned
# from each of its positions (a 40,000-space line used to take seconds in ``_SEE_RE`` and headings).
_TITLE_RE = re.compile(r"^Glossary\s++(?P<letter>\S.*)$")
_EDIT = "[edit]"
_FOOTER_EXACT = {"Personal tools", "Views", "Navigation", "Search", "Toolbox", "Powered by MediaWiki"}
_FOOTER_PREFIXES = (
    "Back to the Comprehensive Rules",
    "Retrieved from",
    "This page was last modified",
    "Categories:",
    "Category:",
)
_CHROME_LINES = {"From Legend of the Five Rings Rules", "Jump to: navigation, search", "Contents |"}
_TOC_START_RE = re.compile(r"^Contents\b")
_TOC_ITEM_RE = re.compile(r"^\d++(?:\.\d++)*+\.?\s++(?P<title>\S.*)$")

_SEE_RE = re.compile(
    r"(?<![\w])[Ss]ee\s++(?!also\b)"
    r"(?P<body>[\"“][^\"“”\n]{1,300}[\"”]|[A-Z](?:[^().\[\];\n]|\.(?!\s|$)|\([^()\n]*+\))*+)"
)
_REF_PURPOSE_RE = re.compile(
    r"(?<!\s)\s++for\s++(?:comparisons?|details|examples?|more\b|further\b).*$", re.IGNORECASE
)
_REF_SPLIT_RE = re.compile(r",?(?<!\s)\s++and\s++(?=Glossary,)")
_QUOTE = '"“”'
_Q = r"[\"“]"
_QE = r"[\"”]"
_EQUIVALENT_RE = re.compile(
    rf"\b(?:Equivalent to|[Ss]ame as|also (?:called|known as))\s++{_Q}(?P<alias>[^\"“”]+?)[.,]?{_QE}"
)
_SHORT_FOR_RE = re.compile(
    rf"{_Q}(?P<alias>[^\"“”]+?){_QE}\s++is\s++(?:an?\s++|the\s++)?short(?:hand)?(?:\s++term|\s++form)?\s++for\s++"
    rf"(?:the\s++)?(?P<full>[^.,;]++)"
)
_SAME_MEANING_RE = re.compile(
    rf"{_Q}(?P<a>[^\"“”]+?)[.,]?{_QE}\s++and\s++{_Q}(?P<b>[^\"“”]+?)[.,]?{_QE}\s++"
    r"(?:mean the same|are equivalent|are synonym)"
)
# 'The phrase “cannot raise/can not rise” negates ...': the quoted phrase names what the entry defines.
_PHRASE_RE = re.compile(r"\b[Tt]he phrase\s{1,3}[\"“](?P<phrase>[^\"“”\n]{1,80})[\"”]")
_GLUED_SUFFIX_RE = re.compile(r"(?<!\w)(?P<stem>\w++)\((?P<suffix>\w++)\)")
_QUALIFIER_RE = re.compile(r"^(?P<base>[^()]+?)(?<!\s)\s++\((?P<qualifier>[^()]++)\)$")


@dataclass(frozen=True)
class _Line:
    number: int  # 1-based
    text: str  # stripped


def _lines(text: str) -> list[_Line]:
    """Numbered, stripped lines; numbering follows "\\n" so it matches editors and grep."""
    text = text.removeprefix("\ufeff")
    return [_Line(i, raw.strip()) for i, raw in enumerate(text.split("\n"), start=1)]


def _heading_title(line: str) -> str | None:
    """The term of an ``[edit] Term`` (or ``Term [edit]``) heading line, else None."""
    if line.startswith(_EDIT):
        return line[len(_EDIT) :].strip()
    if line.endswith(_EDIT):
        return line[: -len(_EDIT)].strip()
    return None


def _is_footer(line: str) -> bool:
    return line in _FOOTER_EXACT or line.startswith(_FOOTER_PREFIXES)


def anchor(title: str) -> str:
    """MediaWiki's (legacy) section anchor: spaces -> "_", then percent-encoding with "%" -> "."."""
    return quote(title.replace(" ", "_"), safe=":", errors="replace").replace("%", ".")


def page_url(page_title: str) -> str:
    """The page's address on the rules wiki, so a quoted entry links to its original."""
    return BASE_URL + quote(page_title.replace(" ", "_"), safe=":/", errors="replace")


def find_cross_refs(paragraphs: list[str], lines: list[int] | None = None) -> list[CrossRef]:
    """References written as "See X" / "(see X)" / 'See "x."', deduplicated in order; targets left None.

    ``lines`` (one source line number per paragraph) lets lint point at the line a reference is on.
    """
    found: dict[str, int | None] = {}
    for index, paragraph in enumerate(paragraphs):
        for match in _SEE_RE.finditer(paragraph):
            body = match.group("body")
            if body[0] in _QUOTE:
                names = [body.strip(_QUOTE)]
            else:
                body = _REF_PURPOSE_RE.sub("", body)
                names = _REF_SPLIT_RE.split(body)
            for name in names:
                name = name.strip().removeprefix("Glossary,").strip().rstrip(".,:").strip()
                if name and name not in found:
                    found[name] = lines[index] if lines and index < len(lines) else None
    return [CrossRef(text=name, line=line) for name, line in found.items()]


def _phrase_aliases(title: str, paragraph: str) -> list[str]:
    """Names from 'the phrase “X”' when X holds a word of the title: Raise/rise's “cannot raise/can not rise”
    gives "cannot raise", "can not rise" and "cannot rise", so a judge typing "cannot rise" finds Raise/rise
    rather than the nearest-spelled other limit ("cannot fall")."""
    own = {w for part in title.lower().split("/") for w in part.split()}
    found: list[str] = []
    for match in _PHRASE_RE.finditer(paragraph):
        for part in match.group("phrase").split("/"):
            words = part.lower().split()
            if 1 < len(words) <= 5 and own & set(words):
                found.append(" ".join(words))
                if "can not" in found[-1]:
                    found.append(found[-1].replace("can not", "cannot"))
    return found


def derive_aliases(title: str, paragraphs: list[str]) -> list[str]:
    """Other lower-case names for an entry, from the title's own shape and from definitional phrases."""
    names: list[str] = []
    if "/" in title:  # "Raise/rise"
        names.extend(title.split("/"))
    if _GLUED_SUFFIX_RE.search(title):  # "Redirect(ion)"
        names.append(_GLUED_SUFFIX_RE.sub(r"\g<stem>", title))
        names.append(_GLUED_SUFFIX_RE.sub(r"\g<stem>\g<suffix>", title))
    qualified = _QUALIFIER_RE.match(title)
    if qualified:  # "Result (of a duel)"
        names.append(qualified.group("base"))
        names.append(f"{qualified.group('base')} {qualified.group('qualifier')}")
    if "-" in title:  # "Face-down"
        names.append(title.replace("-", " "))
        if " " not in title:
            names.append(title.replace("-", ""))
    for paragraph in paragraphs:
        names.extend(m.group("alias") for m in _EQUIVALENT_RE.finditer(paragraph))
        for match in _SHORT_FOR_RE.finditer(paragraph):
            if match.group("full").strip().lower() == title.lower():
                names.append(match.group("alias"))
        for match in _SAME_MEANING_RE.finditer(paragraph):
            names.extend((match.group("a"), match.group("b")))
        names.extend(_phrase_aliases(title, paragraph))
    aliases: list[str] = []
    own = title.lower()
    for name in names:
        alias = " ".join(name.lower().split()).strip(" .,;:")
        if alias and alias != own and alias not in aliases:
            aliases.append(alias)
    return aliases


def _table_of_contents(header: list[_Line]) -> list[_Line]:
    """Titles listed in a numbered "Contents" block of the header (browser-copy style), with their line
    numbers (so lint points at the listing); may be empty."""
    titles: list[_Line] = []
    in_toc = False
    for line in header:
        if _TOC_START_RE.match(line.text):
            in_toc = True
        elif in_toc and line.text:
            item = _TOC_ITEM_RE.match(line.text)
            if item:
                titles.append(_Line(line.number, item.group("title").strip()))
            elif titles:
                break
    return titles


def looks_like_glossary_page(text: str) -> bool:
    """Cheap check for a loader choosing a parser: a "Glossary X" title line and at least one heading."""
    lines = [line.text for line in _lines(text)]
    return any(_TITLE_RE.match(t) for t in lines) and any(_heading_title(t) is not None for t in lines)


def parse_glossary_page(text: str, file: str, *, today: datetime.date | None = None) -> ParsedDocument:
    """Entries of one glossary page; raises SourceError when the text is not a complete glossary page."""
    lines = _lines(text)
    if not any(line.text for line in lines):
        raise SourceError(file, "empty file: expected a 'Glossary <letter>' page")
    headings = [i for i, line in enumerate(lines) if _heading_title(line.text) is not None]
    first = headings[0] if headings else len(lines)
    title_line = next((line for line in lines[:first] if _TITLE_RE.match(line.text)), None)
    if title_line is None:
        raise SourceError(
            file, "not a glossary page: no 'Glossary <letter>' title line before the entries", 1
        )
    if not headings:
        raise SourceError(file, "not a glossary page: no '[edit] Term' entries", title_line.number)
    footer = next((i for i in range(first, len(lines)) if _is_footer(lines[i].text)), None)
    if footer is None:
        last = next(line.number for line in reversed(lines) if line.text)
        raise SourceError(
            file, "truncated page: no footer ('Back to the Comprehensive Rules') after the last entry", last
        )

    page_title = title_line.text
    document = f"{LABEL} — {page_title}"
    url = page_url(page_title)
    anomalies: list[Anomaly] = []
    entries: list[Entry] = []
    starts = [i for i in headings if i < footer]
    for i in (i for i in headings if i > footer):
        anomalies.append(
            Anomaly(file, lines[i].number, "content-after-footer", "heading after the page footer ignored")
        )
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else footer
        entry = _entry(lines[start], lines[start + 1 : end], file, page_title, document, url, today, anomalies)
        if entry is not None:
            entries.append(entry)
    _check_ids(entries, file, anomalies)
    _check_toc(_table_of_contents(lines[:first]), entries, file, anomalies)
    return ParsedDocument(
        file=file, source="glossary", document=document, entries=entries, anomalies=anomalies
    )


def _entry(
    heading: _Line,
    body: list[_Line],
    file: str,
    page_title: str,
    document: str,
    url: str,
    today: datetime.date | None,
    anomalies: list[Anomaly],
) -> Entry | None:
    """The entry under one heading; None (and an anomaly) for a heading without a term."""
    title = _heading_title(heading.text) or ""
    if not title:
        anomalies.append(Anomaly(file, heading.number, "empty-heading", "'[edit]' heading without a term"))
        return None
    kept = [line for line in body if line.text and line.text not in _CHROME_LINES and line.text != page_title]
    paragraphs = [line.text for line in kept]
    if not paragraphs:
        anomalies.append(Anomaly(file, heading.number, "empty-entry", f"entry {title!r} has no text"))
    searched = [analysed(p) for p in paragraphs]  # stamps, references, aliases: within the line cap
    changes = _changes(searched, kept, file, today, anomalies)
    return Entry(
        id=make_id("glossary", title),
        source="glossary",
        document=document,
        kind="term",
        title=title,
        section=[page_title],
        paragraphs=paragraphs,
        location=Location(file, heading.number, kept[-1].number if kept else heading.number),
        lines=[(line.number, line.number) for line in kept],
        aliases=derive_aliases(title, searched),
        changes=changes,
        see_also=find_cross_refs(searched, [line.number for line in kept]),
        url=f"{url}#{anchor(title)}",
    )


def _changes(
    paragraphs: list[str],
    lines: list[_Line],
    file: str,
    today: datetime.date | None,
    anomalies: list[Anomaly],
) -> list[Change]:
    """Changes of one entry, each pointed at the paragraph it dates (None: the whole entry)."""
    lone = [not strip_stamps(p).strip(" .,;") for p in paragraphs]
    leading = next((i for i, is_lone in enumerate(lone) if not is_lone), len(lone))
    changes: list[Change] = []
    for index, (paragraph, line) in enumerate(zip(paragraphs, lines, strict=True)):
        stamps, unparsed = parse_stamps(paragraph, today=today)
        for bad in unparsed:
            anomalies.append(
                Anomaly(file, line.number, "unparsed-stamp", f"unparsed stamp {bad.raw!r}: {bad.reason}")
            )
        if not stamps:
            continue
        if not lone[index]:
            target: int | None = index
        elif index < leading:
            target = None
        else:
            target = max(i for i in range(index) if not lone[i])
        seen: set[tuple[str, str]] = set()
        for stamp in stamps:
            changes.append(stamp.to_change(paragraph=target, line=line.number))
            for kind, message in stamp.anomalies:
                if (kind, message) not in seen:
                    seen.add((kind, message))
                    anomalies.append(Anomaly(file, line.number, kind, message))
    return changes


def _check_ids(entries: list[Entry], file: str, anomalies: list[Anomaly]) -> None:
    """Two headings with the same slug would collide in the index: keep both, suffix the later ids."""
    taken = {entry.id for entry in entries}
    seen: set[str] = set()
    counters: dict[str, int] = {}
    for entry in entries:
        base = entry.id
        if base in seen:
            entry.id = unique_id(base, taken, counters)
            taken.add(entry.id)
            anomalies.append(
                Anomaly(
                    file, entry.location.first_line, "duplicate-id", f"{base} repeated; renamed {entry.id}"
                )
            )
        seen.add(entry.id)


def _check_toc(toc: list[_Line], entries: list[Entry], file: str, anomalies: list[Anomaly]) -> None:
    """A table of contents that disagrees with the headings hints at a damaged copy."""
    if not toc:
        return
    titles = {entry.title for entry in entries}
    listed = {item.text for item in toc}
    for missing in (item for item in toc if item.text not in titles):
        anomalies.append(
            Anomaly(file, missing.number, "toc-mismatch", f"contents lists {missing.text!r} but no such entry")
        )
    for extra in (e for e in entries if e.title not in listed):
        anomalies.append(
            Anomaly(file, extra.location.first_line, "toc-mismatch", f"entry {extra.title!r} not in contents")
        )
