"""Discord Markdown escaping in one linear pass: rule text and user input shown as written, with no effects.

discord.py's ``escape_markdown`` looks ahead with ``[\\s\\S]*`` from every special character and matches
masked links with ``\\[.+\\]\\(.+\\)``; on text such as ``[x](`` repeated that is quadratic or worse (5,000
repetitions took about a minute, holding the GIL, so one answer froze the whole bot). Here every
special character is escaped where it stands, found by one regex whose alternatives are a single
character or a bounded line-start marker, so the cost is one pass over the text.

What is made inert (Discord's parser, like CommonMark, drops a backslash before any ASCII punctuation):

* emphasis, underline, strike-through, spoilers, inline code and code blocks: ``* _ ~ | ` `` anywhere;
* masked links ``[text](url)``: ``[`` anywhere (a link needs it unescaped);
* autolinks ``<https://…>``, user/role/channel mentions ``<@id> <@&id> <#id>``, timestamps and custom
  emoji: ``<`` anywhere;
* block syntax at the start of a line (or of the escaped fragment, which may be placed at one):
  quotes ``>``/``>>>``, headers ``#``, sub-text ``-#``, lists ``-``/``+``/``*`` and ``1.``;
* the escape character itself, ``\\``, so a source backslash can never cancel one of ours;
* ``@everyone``/``@here`` and ``@<digits>``: a zero-width space after the ``@`` (``escape_mentions``),
  as Discord documents for showing them without a ping.

A bare ``https://…`` stays a link Discord shows as written; only its special characters are escaped.
Every escape is undone exactly by ``bot.app.renderers.discord_markdown.plain``: the console shows the source text.
"""

from __future__ import annotations

import re

ZWSP = "\u200b"

# One alternative per kind of special text; each is a single character or a line-start marker whose
# quantifiers are possessive, so no position is ever scanned twice.
_SPECIAL = re.compile(r"[\\*_~|`\[<]|(?m:^)[ \t]*+(?:[#>+\-]|\d++\.)")
# "@everyone", "@here", "@123…": the ``@`` gets a zero-width space after it (one more if the text already
# has some there, so undoing the escape gives back exactly what was written).
_MENTION = re.compile(rf"@(?={ZWSP}*+(?:everyone|here|[!&]?\d))")


def _escape_one(match: re.Match[str]) -> str:
    text = match.group()
    if len(text) == 1:  # an inline special character, or a one-character line-start marker
        return "\\" + text
    if text.endswith("."):  # "  12." -> "  12\." (an ordered-list number)
        return text[:-1] + "\\."
    return text[:-1] + "\\" + text[-1]  # indentation, then the marker


def escape_markdown(text: str) -> str:
    """``text`` with every Discord Markdown construct escaped (see the module docstring); linear time."""
    return _SPECIAL.sub(_escape_one, text)


def escape_mentions(text: str) -> str:
    """``text`` with ``@everyone``, ``@here`` and raw ids unable to mention anyone; linear time."""
    return _MENTION.sub("@" + ZWSP, text)
