"""The plain-text renderer: an ``Answer`` for the console and the command-line tools.

Rule text is printed exactly as the source has it (no escaping, so nothing to undo), quoted texts under a
"> " margin, labels and values as written. Nothing is clipped or paged: a terminal scrolls, and a judge
reading at a table wants the whole text. The question's words are not marked; the sentence that answers
is, between ``▶`` and ``◀`` (signs no rule text uses, so removing them gives the text back byte for byte).
"""

from __future__ import annotations

from bot.app.answer import Answer, Block, Citation, Dates, Group, Inline, Line, Link, Note, Quote, Relation
from bot.app.compose import history_line
from index.results import citation as citation_words

OPEN_LISTED = 8  # entries an ``Open:`` line spells out; the others still open by their number


def inline(parts: Inline) -> str:
    out = []
    for run in parts:
        out.append(f"{run.text} <{run.href}>" if run.href else run.text)
    return "".join(out)


SENTENCE_OPEN, SENTENCE_CLOSE = "▶", "◀"  # around the sentence that answers, in a quoted paragraph


def pointed(text: str, sentences: tuple[tuple[int, int], ...]) -> str:
    """``text`` with each answering sentence between ``▶`` and ``◀``; nothing else added or changed."""
    out, pos = [], 0
    for s, e in sentences:
        if s < pos or e <= s or e > len(text):
            continue
        out += [text[pos:s], SENTENCE_OPEN, text[s:e], SENTENCE_CLOSE]
        pos = e
    out.append(text[pos:])
    return "".join(out)


def quoted(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def citation_text(c: Citation) -> str:
    links = [f"{label} <{url}>" for label, url in c.links]
    return " · ".join([citation_words(c.entry, c.paragraph, c.until), *links])


def lines_of(block: Block) -> list[str]:
    """A block as paragraphs of text."""
    if isinstance(block, Line):
        return [inline(block.parts)]
    if isinstance(block, Note):
        return [inline(block.parts)]
    if isinstance(block, Quote):
        body = pointed(block.text, block.sentences)
        return [body if block.inline else quoted(body)]
    if isinstance(block, Citation):
        return [("— " if block.role == "dash" else "") + citation_text(block)]
    if isinstance(block, Dates):
        text = history_line(block.changes, block.entry, block.paragraph)
        return [("— " if block.role == "dash" else "") + text] if text else []
    if isinstance(block, Relation):
        lines = [inline(block.heading)]
        if block.quote is not None:
            lines.append(quoted(block.quote.text))
        if block.citation is not None:
            lines.append(("— " if block.role == "entry" else "") + citation_text(block.citation))
        if block.dates is not None and block.dates.changes:
            lines.append("— " + history_line(block.dates.changes, block.dates.entry))
        return ["\n".join(lines)]
    if isinstance(block, Group):
        return ["\n".join(line for child in block.blocks for line in lines_of(child))]
    raise TypeError(f"unknown block {type(block).__name__}")


def _unique(links: list[Link]) -> list[Link]:
    seen: set[str] = set()
    return [ln for ln in links if not (ln.entry_id in seen or seen.add(ln.entry_id))]  # type: ignore[func-returns-value]


def openable(answer: Answer) -> list[Link]:
    """What an answer can open, in the order its ``Open:`` line numbers them (``/open 2`` is the second)."""
    links = list(answer.links)
    for item in answer.items:
        links += item.links
    return _unique(links)


def _numbered(n: int, label: str) -> str:
    """``n. label``, unless the label already starts with its number (search results: "1. Terrain")."""
    label = " ".join(label.split())
    return label if label.startswith(f"{n}. ") else f"{n}. {label}"


def render(answer: Answer) -> str:
    """The whole answer as text: title, body (or every item, numbered as the answer numbers them), facts,
    the entries it can open (``/open id``) and its footer."""
    title = " ".join(answer.title.split())
    out = [title, "=" * min(len(title), 78)]
    if answer.url:
        out.append(answer.url)
    if answer.notice is not None:
        out.append(inline(answer.notice.parts))
    if answer.items:
        separator = "\n" if answer.compact else "\n\n"
        rows = ["\n".join(line for b in item.blocks for line in lines_of(b)) for item in answer.items]
        out.append(separator.join(rows))
    else:
        out.append("\n\n".join(line for b in answer.body for line in lines_of(b)))
    for fact in answer.facts:
        out.append(f"{fact.name}: " + "\n".join(line for b in fact.blocks for line in lines_of(b)))
    unique = openable(answer)
    if unique:
        listed = [f"{_numbered(n, ln.label)} (/open {ln.entry_id})" for n, ln in enumerate(unique[:OPEN_LISTED], 1)]
        if len(unique) > OPEN_LISTED:  # the rest keep their numbers, in the order the answer names them
            listed.append(f"/open {OPEN_LISTED + 1} to /open {len(unique)}: the other entries named above, in order")
        out.append("Open: " + "; ".join(listed))
    if answer.footer:
        out.append(f"[{answer.footer}]")
    return "\n".join(out)
