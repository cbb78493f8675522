"""``/banned``'s verdict atop an ``/ask`` that asks whether a card is banned.

"Is Hida Kisada banned in Obsidian Hand?" has no banned line to quote: the search finds the text that mentions the
card, or other cards' banned lines, and nothing said the card is not on the list, which is the answer. "Is tadaka
banned?" quotes the banned line, which does not say that only that version is banned. The engine reads the card
asked about (``index.query.ban_question``) and this says what ``/banned`` would, in one note opening the answer;
nothing is said where the first result already is the card's own banned line and says it all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.app import dated
from bot.app.answer import Note, runs, strong
from bot.app.compose import bold_list, echo
from glossary import asof
from glossary.kinds import SOURCE_LABELS
from glossary.model import Entry
from index.results import BannedResult, Hit


def verdict(result: BannedResult | None, hits: Sequence[Hit], day: str | None = None) -> Note | None:
    """The note for ``result`` (``Engine.banned_asked``, filtered to the formats played), or None when there is
    none to give or the first result says it already. ``day``: the answer is as of that day."""
    if result is None:
        return None
    first = hits[0].entry.id if hits else None
    shown = {h.entry.id for h in hits}
    record = result.record
    if record is None and result.matches:  # "koan": every banned card holding the words
        if all(m.id in shown for m in result.matches):
            return None
        return _note(f"Several cards on {result.matches[0].document}'s banned list are named with "
                     f"“{echo(result.query)}”; each is banned: ", *bold_list([m.title for m in result.matches]), ".")
    if record is None:
        return _not_named(result)
    if day is not None and not asof.in_force(record, day):
        return None if record.id in shown else _note(strong(record.title), dated.not_yet_banned(record, day),
                                                     " ", dated.LEGAL_THAT_DAY)
    if result.one_version and result.how in ("version", "partial"):  # "tadaka": which version the list bans
        return _note(f"{record.document}'s banned list names one version of “{echo(result.query)}”: ",
                     strong(record.title), " is ", strong("banned"), "; other versions (another subtitle or "
                     "experience level) are not named on it.")
    if record.id == first and result.how != "initials":
        return None
    if result.kind_of_card:
        return _note(f"{record.document}'s banned list bans a kind of card: ", strong(record.title), ".")
    since = f" (on the list since {result.banned_on})" if result.banned_on else ""
    read = f" “{echo(result.query)}” is read as the initials of its name." if result.how == "initials" else ""
    return _note(strong(record.title), " is ", strong("banned"), f" in {record.document}{since}.{read}")


def uncited(result: BannedResult | None, hits: Sequence[Hit], note: Note | None) -> list[Entry]:
    """The banned-list lines a verdict names that no result quotes ("HHoL legal in OH?" finds no text at all): each is
    cited under the note, so the ban it states has its file and line as every quoted text has."""
    if result is None or note is None:
        return []
    shown = {h.entry.id for h in hits}
    named = [result.record] if result.record is not None else list(result.matches)
    return [e for e in named if e.id not in shown]


def _not_named(result: BannedResult) -> Note:
    """What ``/banned`` says of a card the list does not name, shortened: the list's bans by kind of card are
    said too, since the card may be one of those. ``/banned``'s closest names are not: a name said here shares no
    name word with a banned card (``index.query.ban_question``), so the closest by spelling are other cards
    ("kisada" is nearest "Isawa Tadaka")."""
    parts: list[object] = [f"“{echo(result.query)}” is not named on {SOURCE_LABELS['obsidian-hand']}'s banned list."]
    if result.how == "other-version" and result.near:
        parts += [" The list names ", strong(result.near[0].title), " with no experience level; the experienced "
                  "version asked about is not named on it."]
    kinds = list(result.kinds)
    if kinds:
        parts += [" It also bans by kind of card: ", *bold_list([e.title for e in kinds], "; "), "."]
    return _note(*parts)


def _note(*parts: object) -> Note:
    return Note(runs(*parts), "banned")  # type: ignore[arg-type]


def without_other_cards(result: BannedResult | None, hits: Sequence[Hit],
                        lookup: Callable[[str], Entry | None]) -> list[Hit]:
    """The results under a "not named on the banned list" note, without other cards' banned lines and the update
    lines that only put other cards on the list: "is Doji Hoturi banned?" is not answered by Hantei's line. The
    list's lines that ban a kind of card stay, since the card may be one of that kind; so does the line an
    experienced version asked about is named by with no level ("moshi eihime exp")."""
    if result is None or result.record is not None or result.matches or result.how == "other-version":
        return list(hits)
    kinds = {e.id for e in result.kinds}
    return [h for h in hits if not _other_card(h, kinds, lookup)]


def _other_card(hit: Hit, kinds: set[str], lookup: Callable[[str], Entry | None]) -> bool:
    entry = hit.entry
    if entry.kind == "banned":
        return entry.id not in kinds
    if entry.kind != "update" or hit.paragraph is None or not 0 <= hit.paragraph < len(entry.paragraphs):
        return False
    first, last = entry.paragraph_lines(hit.paragraph)
    named = [lookup(r.target) for r in entry.see_also if r.target and r.line is not None and first <= r.line <= last]
    return bool(named) and all(e is not None and e.kind == "banned" and e.id not in kinds for e in named)
