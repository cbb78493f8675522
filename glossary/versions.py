"""Experience levels in card names: a fact about titles, read by ``/banned`` and by ``/ask``'s banned status.

The Obsidian Hand's Cardinal Rule 2 makes a card's identity its title and experience level, and its banned list
names some cards with a level ("Isawa Tadaka, Seven Thunder (Experienced 2CW)") and most without ("Moshi
Eihime"). Whether a name, or a player's question, says a level decides whether a banned line names the card
asked about; players write the level as "exp", "exp 2", "xp2cw" or "experienced".
"""

from __future__ import annotations

import re

# An experience level said: "exp", "exp2", "xp 3", "experienced". "Inexperienced" and "non-experienced" name the
# card without one, which is what a banned line with no level names.
_LEVEL = re.compile(r"(?<!non[ -])\b(?:exp|xp)\d*\b|(?<!non[ -])\bexperienced\b", re.IGNORECASE)
_ABBREVIATED = re.compile(r"(?<!non[ -])\b(?:exp|xp|experienced)\s?(?=\d|\b)", re.IGNORECASE)


def names_level(text: str) -> bool:
    """Whether ``text`` names an experience level: "moshi eihime exp" does, "Moshi Eihime" does not."""
    return _LEVEL.search(text) is not None


def without_level(text: str) -> str:
    """``text`` with its experience-level words taken out: "moshi eihime exp" -> "moshi eihime"."""
    return " ".join(_LEVEL.sub(" ", text).split())


def spelled_out(text: str) -> str:
    """Players' abbreviations of a level spelled as titles spell it: "exp 2cw" and "xp2cw" -> "experienced 2cw"."""
    return " ".join(_ABBREVIATED.sub("experienced ", text).split())


def without_subtitle(title: str) -> str | None:
    """A versioned title without its subtitle, as players name that version: "Isawa Tadaka, Seven Thunder
    (Experienced 2CW)" -> "Isawa Tadaka Experienced 2CW"; None for a title without both a subtitle and a
    parenthesised version."""
    head, comma, rest = title.partition(",")
    if not comma or "(" not in rest:
        return None
    return " ".join(f"{head} {rest.split('(', 1)[1].rstrip(')')}".split())
