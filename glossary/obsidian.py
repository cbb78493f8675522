"""Parser for "The Obsidian Hand Ruleset", a community tournament format document.

The document is plain text with a few fixed parts, each recognised by its own marker line:
an update log ("Updates", then ``[MM/DD/YYYY]`` blocks, not in date order), "Initial Guidelines"
(topics headed ``Topic:``), "Banned Cards" (``*** Category ***`` lines, one card per line), and
numbered parts ``I. CARDINAL RULES`` / ``II. THE PLAYER – A. Clan Alignment`` whose text holds
untitled sub-headings, cardinal rules and ``** Group **`` lists of player abilities.

Every paragraph is a source line kept exactly as written (bullets and indentation included),
because the bot quotes it verbatim. After parsing, each update record is linked to the entries it
changed (fuzzy name matching with rapidfuzz, since the log names things slightly differently from
the body) and those entries get a dated ``Change`` pointing back at the update.
"""

from __future__ import annotations

import datetime
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from rapidfuzz import fuzz, process, utils

from glossary.limits import analysed
from glossary.linking import unique_id
from glossary.model import (
    BULLETS,
    Anomaly,
    Change,
    ChangeKind,
    CrossRef,
    Entry,
    EntryKind,
    Location,
    ParsedDocument,
    Restatement,
    Severity,
    SourceError,
    make_id,
)
from glossary.stamps import NO_SUCH_DAY, date_problem

SOURCE = "obsidian-hand"
DOCUMENT = "The Obsidian Hand Ruleset"

# Part markers (whole stripped lines). These are the format's fixed part names, not topic titles.
_UPDATES = re.compile(r"^updates$", re.IGNORECASE)
_GUIDELINES = re.compile(r"^initial guidelines$", re.IGNORECASE)
_BANNED = re.compile(r"^banned cards$", re.IGNORECASE)
# Line patterns run on stripped lines of a file someone else wrote, so each is linear in the line: whitespace
# runs are matched possessively (``\s++``) and only from their start (``(?<!\s)``), and no lazy group is
# followed by ``\s*$`` (which re-scanned a run from each of its positions: seconds on a 20,000-space line).
# "II. THE PLAYER – A. Clan Alignment" (en dash or hyphen) or "I. CARDINAL RULES".
_ROMAN = re.compile(
    r"^(?P<num>[IVXLC]+)\.\s++(?P<name>[A-Z][A-Z0-9 ,’'&/-]*?)"
    r"(?:(?<!\s)\s++[–-]\s++(?P<letter>[A-Z])\.\s++(?P<sub>\S.*))?$"
)
_UPDATE_STAMP = re.compile(r"^\[(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})\]$")
_BRACKETED = re.compile(r"^\[[^\]]*\]?$")
_CATEGORY = re.compile(r"^\*{3}(?P<name>[^*]++)\*{3}$")  # the name is stripped where it is used
_GROUP = re.compile(r"^\*{2}(?P<name>[^*]++)\*{2}$")
_CARDINAL = re.compile(r"^Cardinal Rule\s++(?P<num>\d++)\s*+:\s*+(?P<title>\S(?:.*\S)?)\s*$", re.IGNORECASE)
_STUB = re.compile(r"^\*\s*+see\s++\S", re.IGNORECASE)  # "* see Enlightened Open"
_LETTERED = re.compile(r"^(?P<letter>[A-Z])\.\s++(?P<rest>\S.*)$")
_SEE = re.compile(r"\b[Ss]ee\s++((?:[A-Z][\w’']*+)(?:\s++(?:(?:of|and|the)\s++)?[A-Z][\w’']*+)*+)")
_EXAMPLE = re.compile(r"^(?:example\b|i\.?\s*e\b|e\.?\s*g\b)", re.IGNORECASE)
_TERMINAL = ".:;,!?"
_SENTENCE_END = tuple('.!?:)”"')
_BANNED_WORD = re.compile(r"\bbanned\b", re.IGNORECASE)
_ADDED_WORD = re.compile(r"\badded\b", re.IGNORECASE)
_ABILITY_WORD = re.compile(r"\babilit(?:y|ies)\b", re.IGNORECASE)
# "Ninjitsu, Enlightened, & Lobby – added Performing ..." : subjects before a spaced dash.
_SUBJECTS = re.compile(r"^(?P<subjects>[^–—]+?)(?<!\s)\s++[–—-]\s++\S")
_SUBJECT_SPLIT = re.compile(r"(?<!\s)\s*+(?:,|&|\band\b)\s*+")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")

PartKind = Literal["updates", "guidelines", "banned", "numbered"]

NAME_CUTOFF = 85  # rapidfuzz ratio for a subject named in the update log vs an entry title
REFERENCE_CUTOFF = 90  # rapidfuzz ratio for a "see X" reference vs a title in this document
MENTION_CUTOFF = 90  # rapidfuzz partial_ratio for a title mentioned inside an update sentence


@dataclass
class _Line:
    no: int  # 1-based source line number
    text: str  # exactly as written (without the line break)

    @property
    def bare(self) -> str:
        return self.text.strip()


@dataclass(frozen=True)
class _Entry:
    """An entry whose heading has been read and whose body lines are still being collected."""

    key: tuple[str, ...]
    kind: EntryKind
    title: str
    section: list[str]
    head: _Line
    aliases: list[str]


@dataclass
class _Part:
    kind: PartKind
    head: _Line
    body: list[_Line] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Small line classifiers (public ones are tested directly)


def _ends_terminal(text: str) -> bool:
    return bool(text) and text[-1] in _TERMINAL


def _heading_shape(text: str) -> bool:
    """A line that could be a heading on its own: short, capitalised, no colon, no final punctuation."""
    bare = text.strip()
    if not bare or len(bare) > 60 or len(bare.split()) > 6:
        return False
    if bare.startswith(BULLETS) or bare.startswith("[") or _EXAMPLE.match(bare):
        return False
    if ":" in bare or _ends_terminal(bare):
        return False
    return bare[0].isupper()


def is_heading(line: str, next_line: str | None) -> bool:
    """True for a sub-heading: heading-shaped and followed by body text (not by another heading).

    The ruleset marks its sub-headings only by shape ("Deck Restrictions", "B. Province Strength"),
    so this is how they are told apart from list items, example lines and ordinary paragraphs.
    """
    if not _heading_shape(line) or next_line is None or not next_line.strip():
        return False
    nxt = next_line.strip()
    if _ROMAN.match(nxt) or _GROUP.match(nxt) or _CATEGORY.match(nxt):
        return False
    return not _heading_shape(nxt)


def is_topic_heading(line: str) -> bool:
    """An "Initial Guidelines" topic line: a short phrase ending with a colon ("Deck Construction:")."""
    bare = line.strip()
    if not bare.endswith(":") or bare.startswith(BULLETS) or _EXAMPLE.match(bare):
        return False
    phrase = bare[:-1].strip()
    if not phrase or not phrase[0].isupper() or any(c in phrase for c in ".:;!?"):
        return False
    return len(phrase.split()) <= 6


def _is_ability_name(text: str) -> bool:
    """An ability's name line: heading-shaped and at most five words; ability text always has a colon."""
    return _heading_shape(text) and len(text.split()) <= 5


def _short_note(text: str) -> str:
    """The first sentence of an update line, verbatim (the whole line if it is one sentence)."""
    bare = text.strip()
    m = re.search(r"[.!?](?=\s++[A-Z])", bare)
    return bare[: m.end()] if m else bare


def _core_title(title: str) -> str:
    """A title without its letter prefix ("B. Province Strength" -> "Province Strength")."""
    m = _LETTERED.match(title)
    return m.group("rest") if m else title


def _aliases(*names: str) -> list[str]:
    """Lower-case lookup names, plus a plain-apostrophe form so "koan's robes" finds "Koan’s Robes"."""
    out: list[str] = []
    for name in names:
        for form in (name.lower(), name.lower().replace("’", "'")):
            if form and form not in out:
                out.append(form)
    return out


# ---------------------------------------------------------------------------------------------


class _Builder:
    """Collects entries and anomalies for one file, keeping ids unique."""

    def __init__(self, file: str, today: datetime.date) -> None:
        self.file = file
        self.today = today  # dates after it are impossible (kept as written, reported)
        self.entries: list[Entry] = []
        self.anomalies: list[Anomaly] = []
        self.stubs: set[str] = set()  # ids of abilities that only say "* see <another ability>"
        self.update_items: dict[str, list[_Line]] = {}  # update id -> its item lines (before "Old")
        self.lines: dict[str, list[int]] = {}  # entry id -> source line number of each paragraph
        self._ids: set[str] = set()
        self._id_counters: dict[str, int] = {}  # where unique_id got to for each base (linear renaming)

    def anomaly(self, line: int, kind: str, message: str, severity: Severity | None = None) -> None:
        self.anomalies.append(Anomaly(self.file, line, kind, message, severity))

    def add(
        self,
        *,
        key: tuple[str, ...],
        kind: EntryKind,
        title: str,
        section: list[str],
        head: _Line,
        body: list[_Line],
        aliases: list[str] | None = None,
        group: str | None = None,
    ) -> Entry:
        base = make_id(SOURCE, *key)
        entry_id = unique_id(base, self._ids, self._id_counters)
        if entry_id != base:
            self.anomaly(head.no, "duplicate-id", f"{base} already used; this one is {entry_id}")
        self._ids.add(entry_id)
        self.lines[entry_id] = [ln.no for ln in body]
        last = body[-1].no if body else head.no
        entry = Entry(
            id=entry_id,
            source=SOURCE,
            document=DOCUMENT,
            kind=kind,
            title=title,
            section=section,
            paragraphs=[ln.text for ln in body],
            location=Location(self.file, head.no, last),
            lines=[(ln.no, ln.no) for ln in body],
            aliases=aliases or [],
            group=group,
        )
        self.entries.append(entry)
        return entry


_PART_MARKERS: tuple[tuple[re.Pattern[str], PartKind], ...] = (
    (_UPDATES, "updates"),
    (_GUIDELINES, "guidelines"),
    (_BANNED, "banned"),
    (_ROMAN, "numbered"),
)


def _split_parts(lines: list[_Line], b: _Builder) -> list[_Part]:
    """The document's parts in order, each with the lines up to the next part marker."""
    parts: list[_Part] = []
    for ln in lines:
        bare = ln.bare
        kind = next((kind for marker, kind in _PART_MARKERS if marker.match(bare)), None)
        if kind:
            parts.append(_Part(kind, ln))
        elif parts:
            parts[-1].body.append(ln)
        else:
            b.anomaly(ln.no, "unparsed-line", f"text before the first part: {bare[:60]!r}")
    return parts


# --- update log -------------------------------------------------------------------------------


def _parse_updates(part: _Part, b: _Builder) -> None:
    """``[MM/DD/YYYY]`` records, each one ``update`` entry with its Old/New wording and one dated change."""
    today = b.today
    blocks: list[tuple[_Line, re.Match[str], list[_Line]]] = []
    for ln in part.body:
        m = _UPDATE_STAMP.match(ln.bare)
        if m:
            blocks.append((ln, m, []))
        elif blocks:
            if _BRACKETED.match(ln.bare):
                b.anomaly(ln.no, "unparsed-stamp", f"update date not in [MM/DD/YYYY] form: {ln.bare!r}")
            blocks[-1][2].append(ln)
        else:
            b.anomaly(
                ln.no, "unparsed-line", f"update log text before the first [MM/DD/YYYY]: {ln.bare[:60]!r}"
            )
    dated: list[tuple[int, str, str]] = []  # (line, as written, date to order by) of each record
    for head, m, body in blocks:
        raw = head.bare
        month, day, year = int(m["m"]), int(m["d"]), int(m["y"])
        iso = f"{year:04d}-{month:02d}-{day:02d}"
        # Kept as written, like a glossary stamp; the lint says why it cannot be right.
        reason, probable = date_problem(year, month, day, today)
        anomaly = None
        if reason == NO_SUCH_DAY:
            anomaly = f"impossible date {raw}: {NO_SUCH_DAY}"
        elif reason is not None:
            anomaly = f"impossible date {raw} ({iso} is {reason})"
            if probable:
                anomaly += f"; probably {probable}"
        if anomaly:
            b.anomaly(head.no, "impossible-date", anomaly)
        labels = [i for i, ln in enumerate(body) if ln.bare in ("Old", "New")]
        items = body[: labels[0]] if labels else body
        old = new = None
        for i in labels:
            end = next((j for j in labels if j > i), len(body))
            wording = "\n".join(ln.text for ln in body[i + 1 : end]) or None
            if body[i].bare == "Old":
                old = wording
            else:
                new = wording
        first = items[0].bare if items else ""
        kind: ChangeKind = "added" if _ADDED_WORD.search(first) and _BANNED_WORD.search(first) else "changed"
        title = f"Update {raw.strip('[]')}"
        entry = b.add(
            key=("update", iso),
            kind="update",
            title=title,
            section=["Updates"],
            head=head,
            body=body,
            aliases=_aliases(title, iso),
        )
        entry.old_wording, entry.new_wording = old, new
        entry.changes.append(
            Change(
                kind=kind,
                date=iso,
                raw=raw,
                note=_short_note(first) if first else None,
                line=head.no,
                anomaly=anomaly,
                probable_date=probable,
                update_id=entry.id,
            )
        )
        b.update_items[entry.id] = items
        if not body:
            b.anomaly(head.no, "empty-update", f"update {raw} has no text")
        dated.append((head.no, raw, probable or iso))
    _check_update_order(dated, b)


def _check_update_order(dated: list[tuple[int, str, str]], b: _Builder) -> None:
    """Report (as info) each place where the update log breaks the date order most of it follows.

    Answers sort changes by date whatever the order, but a log read top to bottom by a judge should
    say plainly that e.g. [02/15/2016] stands first, before [10/05/2015] ... [01/11/2016].
    """
    pairs = list(itertools.pairwise(dated))
    rising = sum(1 for (_, _, a), (_, _, c) in pairs if a < c)
    falling = sum(1 for (_, _, a), (_, _, c) in pairs if a > c)
    if not rising or not falling:
        return
    oldest_first = rising >= falling
    order = "oldest first" if oldest_first else "newest first"
    for (line, raw, date), (next_line, next_raw, next_date) in pairs:
        if (date > next_date) if oldest_first else (date < next_date):
            b.anomaly(
                next_line,
                "update-log-order",
                f"update log not in date order: {next_raw} (line {next_line}) comes after {raw} (line {line}),"
                f" while the rest of the log runs {order}",
            )


# --- initial guidelines -----------------------------------------------------------------------


def _parse_guidelines(part: _Part, b: _Builder) -> None:
    """The part's introduction, then one ``guideline`` entry per ``Topic:`` line."""
    intro: list[_Line] = []
    topics: list[tuple[_Line, list[_Line]]] = []
    for ln in part.body:
        # The first line is the part's own introduction even when it ends with a colon.
        if is_topic_heading(ln.text) and (intro or topics):
            topics.append((ln, []))
        elif topics:
            topics[-1][1].append(ln)
        else:
            intro.append(ln)
    b.add(
        key=("initial-guidelines",),
        kind="guideline",
        title=part.head.bare,
        section=[part.head.bare],
        head=part.head,
        body=intro,
        aliases=_aliases(part.head.bare),
    )
    for head, body in topics:
        title = head.bare[:-1].strip()
        b.add(
            key=("guideline", title),
            kind="guideline",
            title=title,
            section=[part.head.bare],
            head=head,
            body=body,
            aliases=_aliases(title),
        )


# --- banned list ------------------------------------------------------------------------------


def _parse_banned(part: _Part, b: _Builder) -> None:
    """The part's introduction as a section, then one ``banned`` entry per card line, grouped by category."""
    name = part.head.bare
    first = next((i for i, ln in enumerate(part.body) if _CATEGORY.match(ln.bare)), len(part.body))
    b.add(
        key=(name,),
        kind="section",
        title=name,
        section=[name],
        head=part.head,
        body=part.body[:first],
        aliases=_aliases(name),
    )
    category = ""
    for ln in part.body[first:]:
        m = _CATEGORY.match(ln.bare)
        if m:
            category = m["name"].strip()
            continue
        b.add(
            key=("banned", ln.bare),
            kind="banned",
            title=ln.bare,
            section=[name, category],
            head=ln,
            body=[ln],
            aliases=_aliases(ln.bare),
            group=category,
        )


# --- numbered parts ---------------------------------------------------------------------------


def _parse_numbered(part: _Part, b: _Builder) -> None:
    """A numbered part: its introduction, then cardinal rules and sub-headings, or ability groups."""
    m = _ROMAN.match(part.head.bare)
    assert m is not None  # _split_parts only makes numbered parts from matching lines
    num, name = m["num"], m["name"].strip()
    top = f"{num}. {name}"
    if m["letter"]:
        title = f"{m['letter']}. {m['sub'].strip()}"
        path = [top, title]
        key: tuple[str, ...] = (num, m["letter"], m["sub"])
        aliases = [*_aliases(m["sub"].strip()), f"{num}.{m['letter']}"]
    else:
        title, path, key = top, [top], (num, name)
        aliases = _aliases(name)
    body = part.body
    # Where the section's own introduction stops: the first structured line.
    texts = [ln.text for ln in body]
    stop = len(body)
    for i, ln in enumerate(body):
        nxt = texts[i + 1] if i + 1 < len(body) else None
        if _CARDINAL.match(ln.bare) or _GROUP.match(ln.bare) or is_heading(ln.text, nxt):
            stop = i
            break
    b.add(
        key=key, kind="section", title=title, section=path, head=part.head, body=body[:stop], aliases=aliases
    )
    rest = body[stop:]
    if any(_GROUP.match(ln.bare) for ln in rest):
        _parse_abilities(rest, path, b)
        return
    slug = "-".join(key[:2])
    # Each cardinal rule or sub-heading starts an entry that collects the lines up to the next one.
    started: list[tuple[_Entry, list[_Line]]] = []
    plain_parent: str | None = None
    for i, ln in enumerate(rest):
        nxt = rest[i + 1].text if i + 1 < len(rest) else None
        cm = _CARDINAL.match(ln.bare)
        if cm:
            n, rule = cm["num"], cm["title"]
            aliases = _aliases(f"cardinal rule {n}", rule, rule.replace(".", ""))
            started.append((_Entry(("cardinal-rule", n), "cardinal-rule", ln.bare, path, ln, aliases), []))
        elif is_heading(ln.text, nxt):
            heading = ln.bare
            lettered = _LETTERED.match(heading)
            if lettered and plain_parent is not None:
                parents = [plain_parent]
            else:
                parents = []
                plain_parent = None if lettered else heading
            section = [*path, *parents, heading]
            aliases = _aliases(_core_title(heading))
            started.append((_Entry((slug, *parents, heading), "section", heading, section, ln, aliases), []))
        elif not started:
            b.anomaly(ln.no, "unparsed-line", f"text outside any entry: {ln.bare[:60]!r}")
        else:
            started[-1][1].append(ln)
    for new, collected in started:
        b.add(
            key=new.key,
            kind=new.kind,
            title=new.title,
            section=new.section,
            head=new.head,
            body=collected,
            aliases=new.aliases,
        )


def _parse_abilities(lines: list[_Line], path: list[str], b: _Builder) -> None:
    """``** Group **`` lists: a name line, then its text lines and ``*`` footnotes."""
    found: list[tuple[str, _Line, list[_Line]]] = []
    group: str | None = None
    for ln in lines:
        gm = _GROUP.match(ln.bare)
        if gm:
            group = gm["name"].strip()
        elif group is None:
            b.anomaly(ln.no, "unparsed-line", f"text before the first ability group: {ln.bare[:60]!r}")
        elif _is_ability_name(ln.text):
            found.append((group, ln, []))
        elif found and found[-1][0] == group:
            found[-1][2].append(ln)
        else:
            b.anomaly(ln.no, "unparsed-line", f"ability text without a name: {ln.bare[:60]!r}")
    counts = Counter(head.bare.lower() for _, head, _ in found)  # a name in two groups is told apart by group
    for grp, head, body in found:
        name = head.bare
        repeated = counts[name.lower()] > 1
        key = ("ability", name, grp) if repeated else ("ability", name)
        aliases = _aliases(name, f"{name} {grp}") if repeated else _aliases(name)
        entry = b.add(
            key=key,
            kind="ability",
            title=name,
            section=[*path, grp],
            head=head,
            body=body,
            aliases=aliases,
            group=grp,
        )
        if body and all(_STUB.match(ln.bare) for ln in body):  # described elsewhere: not a link target
            b.stubs.add(entry.id)
        if not body:
            b.anomaly(head.no, "empty-ability", f"ability {name!r} has no text")


# --- linking ----------------------------------------------------------------------------------


def _resolve_references(b: _Builder) -> None:
    """ "* see Enlightened Open" stubs and "(See Player Abilities and Traits)" mentions -> entry ids."""
    keys: dict[str, str] = {}
    for e in b.entries:
        if e.kind in ("section", "ability", "guideline", "cardinal-rule") and e.id not in b.stubs:
            keys.setdefault(_core_title(e.title), e.id)
            if e.group:
                keys.setdefault(f"{e.title} {e.group}", e.id)
    choices = list(keys)
    for e in b.entries:
        if e.kind == "update":
            continue
        seen: set[str] = set()
        for para, line_no in zip(e.paragraphs, b.lines.get(e.id, []), strict=True):
            for m in _SEE.finditer(analysed(para)):
                text = m.group(1)
                if text in seen:
                    continue
                seen.add(text)
                best = process.extractOne(
                    text, choices, scorer=fuzz.ratio, processor=utils.default_process, score_cutoff=REFERENCE_CUTOFF
                )
                target = keys[best[0]] if best else None
                if target == e.id:
                    continue
                e.see_also.append(CrossRef(text=text, target=target, line=line_no))
                if target is None and e.id in b.stubs:
                    b.anomaly(
                        line_no,
                        "dangling-reference",
                        f"{e.title}: 'see {text}' names no ability in this document",
                        severity="warning",  # the ability's whole text is that pointer
                    )


def _topic(text: str) -> str | None:
    """The most repeated capitalised word in a text, singular ("Terrains" -> "Terrain"): what it is about."""
    counts: dict[str, int] = {}
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for m in _CAPITALISED.finditer(sentence):
            word = m.group(1)
            stem = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
            counts[stem] = counts.get(stem, 0) + 1
    if not counts:
        return None
    best = max(counts.items(), key=lambda kv: kv[1])
    return best[0]


def _link_updates(b: _Builder) -> None:
    """Link each update record to the entries it changed and stamp those entries with the change."""
    by_id = {e.id: e for e in b.entries}
    named = [e for e in b.entries if e.kind != "update" and e.id not in b.stubs and e.title]
    for update in [e for e in b.entries if e.kind == "update"]:
        stamp = update.changes[0]
        items = b.update_items.get(update.id, [])
        # (entry id, update line, paragraph the change dates: None when it is about the entry as a whole)
        links: list[tuple[str, _Line, int | None]] = []
        for item in items:
            for target in _targets_of(analysed(item.bare), named):
                links.append((target, item, _concerned_paragraph(by_id[target], analysed(item.bare))))
        if update.new_wording and items:  # the entry that now reads as the "New" wording: that paragraph
            wording = update.new_wording.strip()
            for e in named:
                where = [n for n, p in enumerate(e.paragraphs) if wording in p]
                if where:  # the change dates the paragraph that now reads so, not the rest of the entry
                    links.append((e.id, items[0], where[0]))
        done: set[tuple[str, int]] = set()
        for target, item, paragraph in links:
            if (target, item.no) in done or target == update.id:
                continue
            done.add((target, item.no))
            entry = by_id[target]
            if all(ref.target != target for ref in update.see_also):
                text = f"{entry.title} ({entry.group})" if entry.kind == "ability" else entry.title
                update.see_also.append(CrossRef(text=text, target=target, line=item.no))
            kind: ChangeKind = "added" if entry.kind == "banned" and stamp.kind == "added" else "changed"
            entry.changes.append(
                Change(
                    kind=kind,
                    date=stamp.date,
                    raw=stamp.raw,
                    note=_short_note(item.bare),
                    paragraph=paragraph,
                    line=stamp.line,
                    anomaly=stamp.anomaly,
                    probable_date=stamp.probable_date,
                    update_id=update.id,
                )
            )
        if not links:
            topic = _topic(" ".join(ln.bare for ln in items))
            if topic:
                update.see_also.append(CrossRef(text=topic, target=None, line=items[0].no))


# Words that say nothing about which paragraph a record concerns.
_FILLER = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be been by can clarified changed added removed reworded updated explicitly for from has "
        "have how in into is it its not of on or that the their them they this to was were what when which will "
        "with would",
    )
)
_WORD = re.compile(r"[A-Za-z]{3,}")


def _concerned_paragraph(entry: Entry, line: str) -> int | None:
    """The one paragraph of ``entry`` an update line is about, when its words single one out; else None.

    "Starting Holdings – clarified how they will not be put into the dynasty deck" concerns the paragraph that
    says they "will not go into the Dynasty deck", not Border Keep's first-turn immunity: shown under every
    paragraph it sent a judge looking for a change the immunity never had. The record is tied to a paragraph
    only when that paragraph shares at least two telling words with it and strictly more than any other;
    otherwise it keeps dating the whole entry.
    """
    if len(entry.paragraphs) < 2:
        return None
    subjects = _SUBJECTS.match(line)
    predicate = line[subjects.end() - 1 :] if subjects else line
    named = {_stem(w) for w in _WORD.findall(entry.title)}
    words = {_stem(w) for w in _WORD.findall(predicate)} - {_stem(w) for w in _FILLER} - named
    if not words:
        return None
    scores = [len(words & {_stem(w) for w in _WORD.findall(p)}) for p in entry.paragraphs]
    best = max(scores)
    if best < 2 or scores.count(best) > 1 or sorted(scores)[-2] == best:
        return None
    return scores.index(best)


def _stem(word: str) -> str:
    """Crude English stem, enough to find "Performing" in "performing" or "Targeting" in "target"."""
    word = word.lower()
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _narrow(candidates: list[Entry], predicate: str) -> list[Entry]:
    """Several same-named entries ("Ninjitsu" Open and Reaction): keep those whose text has what was changed.

    "Ninjitsu – added Performing" changed the Ninjitsu abilities whose text says "performing", not the
    one that does not; a wrong link in front of a judge is worse than a missing one. When the item names
    nothing that tells them apart, all candidates stay linked.
    """
    if len(candidates) < 2:
        return candidates
    word = _CAPITALISED.search(" " + predicate.strip(" –—-"))
    if word is None:
        return candidates
    stem = _stem(word.group(1))
    having = [e for e in candidates if stem in " ".join(e.paragraphs).lower()]
    return having if having else candidates


def _targets_of(line: str, named: list[Entry]) -> list[str]:
    """Entry ids an update line is about, by rapidfuzz matching of the names it mentions."""
    banned = bool(_BANNED_WORD.search(line))
    subjects = _SUBJECTS.match(line)
    if subjects and not banned:
        pool = [e for e in named if e.kind != "banned"]
        titles = [_core_title(e.title) for e in pool]
        ids: list[str] = []
        for subject in _SUBJECT_SPLIT.split(subjects["subjects"]):
            if not subject.strip():
                continue
            hits = process.extract(
                subject,
                titles,
                scorer=fuzz.ratio,
                processor=utils.default_process,
                limit=None,
                score_cutoff=NAME_CUTOFF,
            )
            if hits:
                top = max(score for _, score, _ in hits)
                best = [pool[i] for _, score, i in hits if score == top]
                ids += [e.id for e in _narrow(best, line[subjects.end() - 1 :]) if e.id not in ids]
        return ids
    sentence = _short_note(line)
    if banned:
        pool = [e for e in named if e.kind == "banned"]
    elif _ABILITY_WORD.search(sentence):
        pool = [e for e in named if e.kind == "ability"]
    else:
        pool = named
    found: list[tuple[float, str]] = []
    for e in pool:
        title = _core_title(e.title)
        if len(title) < 4:
            continue
        score = fuzz.partial_ratio(title, sentence, processor=utils.default_process)
        if score >= MENTION_CUTOFF:
            found.append((score, e.id))
    found.sort(key=lambda t: -t[0])
    return [entry_id for _, entry_id in found]


# "  • Seppuku – Repeatable Reaction: ..." : a list item restating a named rule.
_RESTATED_ITEM = re.compile(
    r"^(?P<indent>[^\S\n]{0,12})[•·–*-][^\S\n]{1,4}(?P<name>[^–—:\n]{1,60}?)[^\S\n]{1,4}[–—-][^\S\n]{1,4}(?P<rest>\S.*)$"
)
_SPACES = re.compile(r"\s+")


def _same_words(a: list[str], b: list[str]) -> bool:
    """Texts equal but for spacing and bullet indentation (how a restatement may be laid out)."""
    return [_SPACES.sub(" ", x).strip() for x in a] == [_SPACES.sub(" ", x).strip() for x in b]


_WORDS = re.compile(r"\w+")


def _extends(short: str, long: str) -> bool:
    """Whether ``long`` says every word of ``short``, in order, and more: a copy with an added clause."""
    mine, theirs = _WORDS.findall(short.casefold()), _WORDS.findall(long.casefold())
    if not mine or len(theirs) <= len(mine):
        return False
    it = iter(theirs)
    return all(word in it for word in mine)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())  # the ruleset indents with spaces and no-break spaces alike


def _link_restatements(b: _Builder) -> None:
    """Link an ability restated in a guideline's list ("• Seppuku – Repeatable Reaction: ...") to the ability,
    both ways, and report when the two texts differ: a judge must not quote one without knowing of the other.

    The item's own text (after the name and dash) and the more-indented lines under it are compared with the
    ability's paragraphs. A name shared by abilities of several groups is matched by the group word written
    before the item's first colon; if that does not single one out, nothing is linked.
    """
    abilities: dict[str, list[Entry]] = {}
    for e in b.entries:
        if e.kind == "ability" and e.id not in b.stubs:
            abilities.setdefault(e.title.casefold(), []).append(e)
    for holder in (e for e in b.entries if e.kind == "guideline"):
        paragraphs = holder.paragraphs
        for n, text in enumerate(paragraphs):
            m = _RESTATED_ITEM.match(text)
            if m is None or m["name"].strip().casefold() not in abilities:
                continue
            candidates = abilities[m["name"].strip().casefold()]
            if len(candidates) > 1:
                timing = m["rest"].split(":", 1)[0]
                candidates = [a for a in candidates if a.group and a.group.casefold() in timing.casefold()]
            if len(candidates) != 1:
                continue
            ability = candidates[0]
            mine = [n]
            for k in range(n + 1, len(paragraphs)):
                if _indent(paragraphs[k]) <= _indent(text) or not paragraphs[k].strip().startswith("*"):
                    break
                mine.append(k)
            stated = [m["rest"], *(paragraphs[k] for k in mine[1:])]
            theirs = list(range(len(ability.paragraphs)))
            if not theirs:
                continue
            differs = not _same_words(stated, ability.paragraphs)
            if len(stated) == len(ability.paragraphs):
                differing = [i for i, (a, t) in enumerate(zip(stated, ability.paragraphs, strict=True))
                             if not _same_words([a], [t])]
            else:  # laid out in other paragraphs: no line stands for another
                differing = list(range(min(len(mine), len(theirs))))
            paired = len(stated) == len(ability.paragraphs)
            holder.restated.append(Restatement(mine, ability.id, theirs, differs, differing, [
                i for i in differing if paired and _extends(stated[i], ability.paragraphs[i])]))
            ability.restated.append(Restatement(theirs, holder.id, mine, differs, differing, [
                i for i in differing if paired and _extends(ability.paragraphs[i], stated[i])]))
            if differs:
                first, last = holder.paragraph_lines(mine[0])[0], holder.paragraph_lines(mine[-1])[1]
                other_first, other_last = ability.location.first_line, ability.location.last_line
                b.anomaly(
                    first,
                    "divergent-restatement",
                    f"{ability.title}: '{holder.title}' (lines {first}-{last}) and the {ability.group} ability "
                    f"(lines {other_first}-{other_last}) give different texts",
                )


def _check_truncated(text: str, lines: list[_Line], b: _Builder, parts: list[_Part]) -> None:
    """A copy cut off mid-section has no final line break or stops mid-sentence."""
    last = lines[-1]
    if text.endswith("\n") and last.bare.endswith(_SENTENCE_END):
        return
    where = parts[-1].head.bare if parts else "the document"
    b.anomaly(last.no, "truncated", f"document ends abruptly inside {where!r}; parsed what is there")


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


def looks_like_obsidian_ruleset(text: str) -> bool:
    """The loader's test and the parser's own: the document's first line names the Obsidian Hand."""
    return "obsidian hand" in _first_line(text).lower()


def parse_obsidian(text: str, file: str, *, today: datetime.date | None = None) -> ParsedDocument:
    """Parse the Obsidian Hand ruleset into entries; SourceError if the text is not that document.

    ``today`` (default: the real date) is what an update dated later is impossible against.
    """
    raw_lines = text.split("\n")
    lines = [_Line(i, t[:-1] if t.endswith("\r") else t) for i, t in enumerate(raw_lines, 1)]
    lines = [ln for ln in lines if ln.bare]
    if not lines:
        raise SourceError(file, "empty document")
    if not looks_like_obsidian_ruleset(text):
        raise SourceError(
            file, f"not the Obsidian Hand ruleset (first line is {lines[0].bare[:60]!r})", lines[0].no
        )
    b = _Builder(file, today or datetime.date.today())
    parts = _split_parts(lines[1:], b)
    if not parts:
        raise SourceError(
            file, "no recognisable structure (no Updates, Banned Cards or numbered sections)", lines[0].no
        )
    handlers = {
        "updates": _parse_updates,
        "guidelines": _parse_guidelines,
        "banned": _parse_banned,
        "numbered": _parse_numbered,
    }
    for part in parts:
        handlers[part.kind](part, b)
    _resolve_references(b)
    _link_updates(b)
    _link_restatements(b)
    _check_truncated(text, lines, b, parts)
    return ParsedDocument(
        file=file, source=SOURCE, document=DOCUMENT, entries=b.entries, anomalies=b.anomalies
    )
