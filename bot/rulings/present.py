"""What the ruling commands say, as Discord Markdown strings (no Discord objects: testable alone).

Everything a judge typed is escaped (no Markdown effects, no mentions) and cut to Discord's limits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.app.renderers.discord_markdown import DESCRIPTION_LIMIT, escape, shorten
from bot.rulings.markdown import Problem
from bot.rulings.repository import ImportResult, Ruling, Version
from bot.rulings.retention import Stored
from bot.rulings.review import Flagged, before_after, changed_paragraphs

LIST_ROOM = DESCRIPTION_LIMIT - 200  # leave room for the "and N more" line


def credit(ruling: Ruling) -> str:
    parts = [ruling.judge or "", ruling.ruled_on, ruling.event or ""]
    return ", ".join(escape(p) for p in parts if p)


def ruling_line(ruling: Ruling, name_of: Callable[[str], str]) -> str:
    """``#12 **Title** — Ann, 2026-11-01, Kotei 2026 · applies to Terrain`` (``(retired)`` when it is)."""
    line = f"`#{ruling.id}` **{escape(ruling.title)}** — {credit(ruling)}"
    if ruling.applies_to:
        line += " · applies to " + ", ".join(escape(name_of(i)) for i in ruling.applies_to)
    if not ruling.active:
        line += " · *retired*"
    if ruling.review_since:
        line += f" · ⚠ {review_mark(ruling)}"
    return shorten(line, 400)


def review_mark(ruling: Ruling) -> str:
    """What ``/ruling list`` says of a flagged ruling (bot.rulings.review)."""
    return f"needs review: the rule it applies to changed on {ruling.review_since}"


def list_text(
    rulings: Sequence[Ruling], name_of: Callable[[str], str], event: str | None, flagged: bool = False
) -> str:
    if not rulings and flagged:
        where = f" for the event “{escape(event)}”" if event else ""
        return f"No ruling{where} needs review: none rests on a rule that changed since it was made or confirmed."
    if not rulings:
        where = f" for the event “{escape(event)}”" if event else ""
        return f"This server has no rulings{where} yet. Judges record them with `/ruling add`."
    lines: list[str] = []
    used = 0
    for n, ruling in enumerate(rulings):
        line = ruling_line(ruling, name_of)
        if used + len(line) + 1 > LIST_ROOM:
            lines.append(f"…and {len(rulings) - n} more: `/ruling export` has them all.")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


ACTIONS = {"add": "added", "edit": "edited", "retire": "retired", "restore": "restored", "import": "imported",
           "stands": "confirmed still standing"}


def history_text(versions: Sequence[Version]) -> str:
    """Newest first: what each version did, who, when; its text (shortened) when the text changed."""
    blocks: list[str] = []
    previous_text: dict[int, str] = {}
    for v in versions:
        previous_text[v.version] = v.text
    used = 0
    for v in reversed(versions):
        when = v.created_at.strftime("%Y-%m-%d %H:%M UTC")
        head = f"**Version {v.version}** — {ACTIONS.get(v.action, v.action)} by {escape(v.author_name)}, {when}"
        if v.note:
            head += f": “{escape(v.note)}”"
        body = ""
        if v.version == 1 or previous_text.get(v.version - 1) != v.text:
            body = "\n" + "\n".join("> " + line for line in shorten(escape(v.text), 500).split("\n"))
        block = head + body
        if used + len(block) + 2 > LIST_ROOM:
            blocks.append("…older versions are not shown (the newest are first).")
            break
        blocks.append(block)
        used += len(block) + 2
    return "\n\n".join(blocks)


def problems_text(problems: Sequence[Problem | str], limit: int = 25) -> str:
    lines = [f"- {escape(str(p))}" for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"- …and {len(problems) - limit} more (see the attached report)")
    return shorten("\n".join(lines), 3000)


def import_counts(result: ImportResult) -> str:
    return f"{len(result.added)} added, {len(result.updated)} updated, {len(result.unchanged)} unchanged"


def import_text(filename: str, result: ImportResult) -> str:
    return f"Imported **{escape(shorten(filename, 200))}**: {import_counts(result)}."


MESSAGE_ROOM = 1900  # of Discord's 2,000 characters a message holds
REPORT_FILE = "import-problems.txt"


def import_problems(filename: str, problems: Sequence[Problem], room: int = MESSAGE_ROOM) -> tuple[str, str | None]:
    """Why a file was not imported, as one message that always fits Discord, and the whole report as plain
    text when the message could not list every problem (the caller attaches it as a file)."""
    count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    head = f"Nothing was imported: **{escape(shorten(filename, 200))}** has {count}:"
    lines = [shorten(f"- {escape(str(p))}", 300) for p in problems]
    if len(head) + sum(len(line) + 1 for line in lines) <= room:
        return "\n".join([head, *lines]), None
    shown: list[str] = []
    used = len(head) + 120  # room for the closing line
    for line in lines:
        if used + len(line) + 1 > room:
            break
        shown.append(line)
        used += len(line) + 1
    tail = f"…and {len(problems) - len(shown)} more: every problem, with its line, is in the attached {REPORT_FILE}."
    report = "\n".join(f"{filename}:{p.line or '-'}: {p.message}" for p in problems) + "\n"
    return "\n".join([head, *shown, tail]), report


def audit_import(who: str, filename: str, result: ImportResult) -> str:
    """The audit channel's one line for a whole import (not one per ruling): who, which file, what changed."""
    line = f"{escape(who)} imported **{escape(shorten(filename, 200))}**: {import_counts(result)}."
    for label, rulings in (("added", result.added), ("updated", result.updated)):
        if rulings:
            line += f" {label.capitalize()}: " + ", ".join(f"`#{r.id}`" for r in rulings) + "."
    return shorten(line, MESSAGE_ROOM)


def audit_line(who: str, action: str, ruling: Ruling, note: str | None = None) -> str:
    """One line for the server's audit channel (plain text: mentions are escaped, and none are allowed)."""
    line = f"{escape(who)} {ACTIONS.get(action, action)} ruling `#{ruling.id}` **{escape(ruling.title)}**"
    line += f" (version {ruling.version}" + (f", {escape(ruling.event)}" if ruling.event else "") + ")"
    if note:
        line += f": “{escape(note)}”"
    return shorten(line, 1900)


# -- deleting a server's data (/ruling delete-all) ---------------------------------------------------------
NOTHING_STORED = "This server has nothing stored: no rulings and no ruling settings. Nothing to delete."
CONFIRM_EXPIRED = "This confirmation has expired and nothing was deleted; run `/ruling delete-all` again."


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def stored_line(rulings: int, versions: int, settings: bool, reports: int = 0) -> str:
    parts = [_count(rulings, "ruling") + " (active and retired)", _count(versions, "version") + " in their history"]
    if reports:
        parts.append(_count(reports, "answer report") + " (pending and confirmed)")
    if settings:
        parts.append("this server's ruling settings (judge role, audit channel)")
    return ", ".join(parts)


def delete_prompt(stored: Stored, minutes: int) -> str:
    """The confirmation: what would go, that it cannot be undone, and how to keep a copy first."""
    what = stored_line(stored.rulings, stored.versions, stored.settings, stored.reports)
    return (
        f"**Delete everything this bot stores for this server?** That is {what}. This cannot be undone; "
        "`/ruling export` first keeps a copy you can import again.\n"
        f"The button works for {minutes} minutes."
    )


def deleted_text(deleted: Stored) -> str:
    what = stored_line(deleted.rulings, deleted.versions, deleted.settings, deleted.reports)
    return f"Deleted {what}. Nothing of this server's rulings is left in the bot's database."


# -- rulings whose rule changed (bot.rulings.review) --------------------------------------------------------
REVIEW_FILE = "rule-change-{id}.txt"


def review_post(flagged: Flagged, name_of: Callable[[str], str], room: int = MESSAGE_ROOM) -> tuple[str, str | None]:
    """The audit channel's post for a flagged ruling: what changed, the rule before and after (verbatim, as
    quotations), and how to clear it; when that does not fit one message, the before/after goes in a file
    (returned as its text) and the message says so."""
    ruling = flagged.ruling
    head = (f"⚠ Ruling `#{ruling.id}` **{escape(ruling.title)}** ({credit(ruling)}) needs review: the rule it "
            f"applies to changed on {flagged.changed_on}.")  # fmt: skip
    tail = (f"A judge clears this with **Still stands** below (or `/ruling stands ruling:{ruling.id}`), or by "
            f"editing the ruling (`/ruling edit ruling:{ruling.id}`).")  # fmt: skip
    blocks = []
    for change in flagged.changes:
        name = escape(name_of(change.entry_id))
        if not change.after:
            blocks.append(f"**{name}** is no longer in the sources. It read:\n{_quoted(change.before)}")
            continue
        for old, new in changed_paragraphs(change.before, change.after):
            was = _quoted("\n\n".join(old)) if old else "> *(no such paragraph)*"
            now = _quoted("\n\n".join(new)) if new else "> *(removed)*"
            blocks.append(f"**{name}**, before:\n{was}\nnow:\n{now}")
    whole = "\n\n".join([head, *blocks, tail])
    if len(whole) <= room:
        return whole, None
    names = ", ".join(f"**{escape(name_of(c.entry_id))}**" for c in flagged.changes)
    short = (f"{head}\nThe text of {names} before and after is in the attached "
             f"{REVIEW_FILE.format(id=ruling.id)}.\n\n{tail}")  # fmt: skip
    return shorten(short, room), before_after(flagged, name_of)


def _quoted(text: str) -> str:
    return "\n".join("> " + line for line in escape(text).split("\n"))


def stands_line(who: str, ruling: Ruling) -> str:
    """The audit line for "still stands": the judge, the ruling, its new version."""
    return shorten(f"{escape(who)} confirmed ruling `#{ruling.id}` **{escape(ruling.title)}** still stands on the "
                   f"rule as it reads now (version {ruling.version}).", MESSAGE_ROOM)  # fmt: skip
