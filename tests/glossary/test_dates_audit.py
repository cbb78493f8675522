"""Audit of every change date against the source files, for every paragraph of the shipped corpus.

A judge quotes one paragraph and the date printed under it. This checks, for every entry and every one of
its paragraphs (not a sample), that

1. each dated change is written on the source line it claims (``raw`` on ``line``), and its ISO date is the
   date written there (day, month and year read back from the raw stamp independently of the parser);
2. the paragraph a glossary stamp dates is the one it closes, derived here from the raw file lines: the stamp
   ends that paragraph's line, or stands on stamp-only lines straight after it; only stamp-only lines before
   any text of the entry date the whole entry. Update-log changes date the paragraph holding the new wording,
   or the entry as a whole;
3. the answer the bot gives for that paragraph (``Composer.hit_group``, as the console and Discord print it)
   shows exactly those dates, the whole-entry ones labelled so, even when the engine hands it every change
   of the entry, and cites that paragraph's own line.

Run as a script (``python tests/glossary/test_dates_audit.py``) it prints what it checked.
"""

from __future__ import annotations

import calendar
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from bot.app.answer import Citation, Dates, Line, Quote, Relation, plain_text  # noqa: E402
from bot.app.compose import Composer, history_line, own_dates  # noqa: E402, own_dates
from bot.app.renderers import discord_markdown  # noqa: E402
from bot.app.renderers import text as plain_renderer  # noqa: E402
from glossary.house import EXAMPLES_DIR  # noqa: E402
from glossary.loader import SHIPPED_SOURCES, load_corpus  # noqa: E402
from glossary.model import Change, Corpus, Entry  # noqa: E402
from index.results import Hit  # noqa: E402

# Any bracket holding a change verb: what the wiki's editors wrote (the parser's own regexes are not reused).
_VERB = r"\b(?:ADDED|CHANGED|CLARIFI\w*|UPDATED|REMOVED|Added|Changed|Clarified)\b"
_STAMP = re.compile(rf"\[[^\[\]\n]*?{_VERB}[^\[\]\n]*?[\]}}]")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")


def _source_lines(corpus: Corpus, entry: Entry) -> list[str]:
    folder = EXAMPLES_DIR if entry.source == "house" else SHIPPED_SOURCES
    return (folder / entry.location.file).read_text(encoding="utf-8").split("\n")


def _stamp_only(text: str) -> bool:
    return bool(_STAMP.search(text)) and not _STAMP.sub("", text).strip(" .,;")


def _written_date_matches(change: Change) -> bool:
    """The ISO date's day, month and year are the ones written in the raw stamp (any of the wiki's forms)."""
    assert change.date is not None
    year, month, day = (int(x) for x in change.date.split("-"))
    raw = change.raw
    if re.search(rf"\b0?{month}/0?{day}/{year}\b", raw):  # the update log's [MM/DD/YYYY]
        return True
    if change.kind and re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw.split(":", 1)[-1].strip()):  # house "Date: ..."
        return raw.split(":", 1)[-1].strip() == change.date
    names = {calendar.month_name[month].lower()[:3]}
    has_month = any(m in raw.lower() for m in names)
    has_day = re.search(rf"(?<!\d)0?{day}(?:st|nd|rd|th)?(?!\d)", raw) is not None
    has_year = re.search(rf"(?<!\d)(?:{year}|{year % 100:02d})(?!\d)", raw) is not None
    return has_month and has_day and has_year


def _expected_glossary_targets(entry: Entry, lines: list[str]) -> dict[int, int | None]:
    """Stamp line -> the paragraph (0-based) it dates, or None for the whole entry, from the raw lines."""
    texts = [lines[first - 1] for first, _last in entry.lines]
    targets: dict[int, int | None] = {}
    last_text: int | None = None
    for n, ((first, _last), text) in enumerate(zip(entry.lines, texts, strict=True)):
        if not _STAMP.search(text):
            last_text = n
            continue
        if _stamp_only(text):
            targets[first] = last_text  # closes the paragraph before it; None if no text came yet
        else:
            last_text = n
            targets[first] = n
    return targets


def audit(corpus: Corpus) -> Counter[str]:
    """Check every change and every paragraph; returns counts of what was checked (asserts on any failure)."""
    by_id = corpus.by_id()
    composer = Composer(by_id.get)
    seen: Counter[str] = Counter()
    for entry in corpus.entries:
        lines = _source_lines(corpus, entry)
        assert len(entry.lines) == len(entry.paragraphs), entry.id
        for text, (first, last) in zip(entry.paragraphs, entry.lines, strict=True):
            assert "\n".join(lines[first - 1 : last]).strip() == text.strip(), (entry.id, first)
            seen["paragraphs"] += 1
        expected = _expected_glossary_targets(entry, lines) if entry.source == "glossary" else {}
        for change in entry.changes:
            assert change.line is not None and change.raw in lines[change.line - 1], (entry.id, change)
            assert _written_date_matches(change), (entry.id, change.raw, change.date)
            if entry.source == "glossary":
                assert change.paragraph == expected[change.line], (entry.id, change.raw, change.paragraph)
            elif change.update_id is not None and change.paragraph is not None:
                update = by_id[change.update_id]
                if update.new_wording:
                    assert update.new_wording.strip() in entry.paragraphs[change.paragraph]
                else:  # tied by its words: the dated paragraph shares more of them than any other paragraph
                    shared = [_shared_words(change.note or "", p, entry.title) for p in entry.paragraphs]
                    assert shared[change.paragraph] >= 2, (entry.id, change.note)
                    assert sorted(shared)[-2] < shared[change.paragraph], (entry.id, change.note)
            seen["changes"] += 1
            seen["whole-entry changes" if change.paragraph is None else "paragraph changes"] += 1
        for p in range(len(entry.paragraphs)):
            # The engine may hand the composer every change; it must show only this paragraph's.
            group = composer.hit_group(1, Hit(entry, 1.0, [], p, list(entry.changes)))
            # A banned-list line's "banned" status line (role "status") sits between the head and the quote.
            head, quoted, *rest = [b for b in group.blocks if not (isinstance(b, Line) and b.role == "status")]
            assert isinstance(head, Line) and isinstance(quoted, Quote) and quoted.text == entry.paragraphs[p]
            # the quote's own citation stands right under it and its dates; what follows bears on it
            at = next(k for k, b in enumerate(rest) if isinstance(b, Citation))
            rows, cite = rest[:at], rest[at]
            assert isinstance(cite, Citation) and cite.paragraph == p
            # its own stamps and the whole entry's (checked above); a several-item log record's without its note
            own = own_dates(entry, entry.paragraph_changes(p))
            # What bears on the paragraph (an update, a ruling, a restatement) carries its own dates: not these.
            rows = [b for b in rows if not isinstance(b, Relation)]
            assert all(isinstance(b, Dates) for b in rows), (entry.id, p, rows)
            for medium in ("console", "discord"):
                if medium == "console":
                    dated = [line for b in rows for line in plain_renderer.lines_of(b)]
                    cited = plain_renderer.lines_of(cite)[-1]
                else:
                    dated = [discord_markdown.plain(line) for b in rows for line in discord_markdown.lines_of(b)]
                    cited = discord_markdown.plain(discord_markdown.lines_of(cite)[-1])
                printed = {d for r in dated for d in _ISO.findall(r)}
                written = {c.date for c in own if c.date} | {c.probable_date for c in own if c.probable_date}
                assert printed == written, (entry.id, p, medium, dated)
                if own:
                    assert len(dated) == 1 and dated[0] == history_line(own, entry, p), (entry.id, p, medium, dated)
                    labelled = entry.source != "house" and entry.kind != "update"  # their date is all of them
                    if any(c.paragraph is None for c in own) and len(entry.paragraphs) > 1 and labelled:
                        assert "(whole entry)" in dated[0], (entry.id, p, dated)
                first, last = entry.paragraph_lines(p)
                span = f"line {first}" if first == last else f"lines {first}-{last}"
                assert span in cited, (entry.id, p, medium, cited)
            if own:
                seen["paragraphs with dates"] += 1
            else:
                seen["paragraphs without dates"] += 1
            # The heading names the entry (and for a house ruling, who ruled and when): no other date.
            assert set(_ISO.findall(plain_text(head.parts))) <= {c.date for c in own}, (entry.id, p)
    return seen


@pytest.mark.parametrize("sources", [[SHIPPED_SOURCES], [SHIPPED_SOURCES, EXAMPLES_DIR]], ids=["shipped", "house"])
def test_every_date_and_every_paragraph_against_the_source(sources: list[Path]) -> None:
    seen = audit(load_corpus(sources))
    assert seen["paragraphs"] > 300 and seen["changes"] > 30 and seen["paragraphs with dates"] > 20


if __name__ == "__main__":
    counts = audit(load_corpus([SHIPPED_SOURCES]))
    print("checked against the source files:", ", ".join(f"{n} {what}" for what, n in counts.items()))


def _shared_words(note: str, paragraph: str, title: str) -> int:
    """Telling words (four letters or more) an update note and a paragraph share, the entry's title aside."""
    def words(text: str) -> set[str]:
        return {w.lower()[:5] for w in re.findall(r"[A-Za-z]{4,}", text)}
    filler = {"clari", "chang", "added", "expli", "will", "they", "them", "their", "into", "with", "that", "this",
              "have", "from", "when", "what"}
    return len((words(note) - words(title) - filler) & words(paragraph))
