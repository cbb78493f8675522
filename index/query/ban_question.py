"""The card a free-text question asks the banned list about: "is Hida Kisada banned in Obsidian Hand?".

``/banned`` is given a card; ``/ask`` is given a sentence. A ban question that names a card the list does not
hold has no banned line to quote, so the search alone answers it with whatever text mentions the card (Hida
Kisada's line in *Deck Restrictions*) or with other cards' banned lines, and never says what ``/banned`` says:
the card is not named on the list. This reads the card's name out of the few ways players ask about a ban, so
the application can put ``/banned``'s verdict first.

It is deliberately narrow: a name is read only from a sentence shaped as a ban question, and only when it looks
like a card's name rather than a rule ("is it legal to attack with a bowed personality" names no card). A
question it does not read is answered by the search alone, as before.
"""

from __future__ import annotations

import re

from glossary.versions import names_level
from index.build.state import State
from index.query import history
from index.results import BannedResult
from index.text.analysis import STOPS, fold, stem
from index.text.english import is_word

# The format the list belongs to, as players name it: "obsidian hand", "OH", "the obsidian hand ruleset".
_FORMAT = r"(?:the\s+)?(?:obsidian\s+hand|obsidian|oh)(?:\s+(?:ruleset|rules|format|tournaments?|play))?"
# What may end a sentence after the ban word or the format: "right now", "still", an alternative or an aside ("or
# did they ban that one", ", wanna run it"), a question mark.
_END = (
    r"(?:\s+(?:right\s+now|now|still|anymore|any\s+more|currently|yet|today|or\s+not|too|also|as\s+well))?"
    r"(?:\s*(?:,|;|\bor\b)\s+[^?!]*)?\s*[?.!]*\s*$"
)
_TAIL = rf"(?:\s+(?:in|for|under|by|on)\s+{_FORMAT})?{_END}"
_BANNED = (
    r"(?:banned|legal|illegal|forbidden|restricted|allowed|unbanned"
    r"|on\s+the\s+(?:(?:obsidian\s+hand|oh)\s+)?(?:banned|ban)\s+list)"
)
_ADVERB = r"(?:(?:still|now|currently|ever|actually|even|really|already|officially)\s+)?"
_LEAD = r"^(?:(?:hey|so|ok|okay|quick\s+question|question)[,:]?\s+)?(?:judge[,:]?\s+)?"
_NAME = r"(?P<name>[^?!.;:]+?)"
_SHAPES = [
    # "is Hida Kisada banned (in OH)?", "are the Koan cards legal", "is X on the banned list"
    re.compile(rf"{_LEAD}(?:is|are|was|were|isn'?t|aren'?t)\s+{_NAME}\s+{_ADVERB}{_BANNED}{_TAIL}", re.I),
    # "has Hida Kisada (ever) been banned"
    re.compile(rf"{_LEAD}(?:has|have)\s+{_NAME}\s+{_ADVERB}been\s+(?:banned|unbanned|restricted){_TAIL}", re.I),
    # "did they ban Hida Kisada", "does OH ban Hida Kisada"
    re.compile(
        rf"{_LEAD}(?:did|does|do|will|would)\s+(?:they|you|aeg|oh|obsidian\s+hand|the\s+(?:obsidian\s+hand\s+)?"
        rf"(?:ruleset|format|list|banned\s+list))\s+{_ADVERB}(?:ban|unban|restrict|allow)\s+{_NAME}{_TAIL}",
        re.I,
    ),
    # "did Counterattack get banned", "has Superior Tactics been hit by the ban list", "X got banned or nah?"
    re.compile(rf"{_LEAD}(?:did|has|have)\s+{_NAME}\s+(?:get|got|gotten|been)\s+{_ADVERB}(?:banned|hit\s+by\s+the"
               rf"\s+ban\s*(?:list|hammer)){_TAIL}", re.I),
    re.compile(rf"{_LEAD}{_NAME}\s+(?:got|gets|get)\s+banned{_TAIL}", re.I),
    # "Doji Hoturi still legal", "X still ok?" (with "still": a card's standing, not a situation's)
    re.compile(rf"{_LEAD}(?:(?:is|are)\s+)?{_NAME}\s+still\s+(?:legal|ok|okay|allowed){_TAIL}", re.I),
    # "can I run Togashi Yokuni or is he banned"
    re.compile(rf"{_LEAD}(?:can|may)\s+i\s+(?:still\s+)?(?:play|run|use|include)\s+{_NAME}\s+or\s+(?:is|are|was|did)"
               rf"\s+(?:it|he|she|they|that)\s+(?:get\s+)?(?:banned|legal|illegal){_END}", re.I),
    # "why was Hida Kisada banned", "when did Hida Kisada get banned"
    re.compile(rf"{_LEAD}(?:why|when)\s+(?:is|was|were|did)\s+{_NAME}\s+(?:get\s+|become\s+)?{_BANNED}{_TAIL}",
               re.I),
    # "Hida Kisada banned?"; "hida kisada legal in OH?" (a bare "phoenix alignment legal?" asks of a situation)
    re.compile(rf"{_LEAD}{_NAME}\s+(?:is\s+|still\s+)?banned{_TAIL}", re.I),
    # "hida kisada legal in OH?", "house of tao ok to play in OH?", "is X fine to run in obsidian hand"
    re.compile(rf"{_LEAD}(?:(?:is|are|r)\s+)?{_NAME}\s+(?:is\s+|still\s+)?(?:legal|illegal|ok|okay|fine|allowed)"
               rf"(?:\s+to\s+(?:play|run|use))?\s+(?:in|for|under)\s+{_FORMAT}{_END}", re.I),
    # "can I play Hida Kisada in Obsidian Hand?": legality in the format, which is the list's question
    re.compile(rf"{_LEAD}(?:can|may)\s+i\s+(?:still\s+)?(?:play|run|use|include)\s+{_NAME}\s+(?:in|for|under)\s+"
               rf"{_FORMAT}{_END}", re.I),
]
# Words no card name asked about holds: a pronoun or a word that makes the phrase a situation, not a name ("it",
# "attacking with a bowed personality", "4 copies of a card").
_NOT_IN_NAMES = frozenset(
    " ".join((
        "it its this that these those they them he she him her i me my we us you your",
        "with to from at by if when while during after before into onto against without because than",
        "which what who how why where is are was were be been get gets got put or",
        "copy copies deck decks proxy proxies rule rules action actions",
    )).split()
)
_ARTICLE = re.compile(r"^(?:the\s+|my\s+|a\s+|an\s+)?(?:cards?\s+)?", re.I)
_CARD_WORD = re.compile(r"\s+cards?$", re.I)
_REMARK = re.compile(r"\s*\([^)]*\)")
MAX_NAME_WORDS = 6
_SENTENCE_END = re.compile(r"(?<=[?!])\s+|(?<=\.)\s+(?=[A-Za-z])")


def asked_name(question: str) -> str | None:
    """The name as the question spells it, when a sentence of it is shaped as a ban question ("is block supply lines
    banned in OH? can i run it") and what it asks about is a few words with no pronoun or word of situation in them
    ("it", "with", "copies"); else None."""
    return _asked(question)[0]


def _asked(question: str) -> tuple[str | None, str]:
    """``asked_name``, and the sentence it was read from."""
    text = " ".join((question or "").replace("’", "'").replace("`", "").replace('"', "").split())
    for sentence in _SENTENCE_END.split(text):
        for shape in _SHAPES:
            m = shape.match(sentence)
            name = _as_name(m["name"]) if m else None
            if name:  # a shape whose words are no name ("when did X get banned" read whole) gives way to the next
                return name, sentence
    return None, ""


def _as_name(said: str) -> str | None:
    """What the shape read as the card, without an article, "card(s)" or a remark in brackets ("house of tao (the
    dragon SH from diamond)"), if it can be a name at all."""
    unremarked = _REMARK.sub(lambda m: m[0] if names_level(m[0]) else " ", said)  # "(Experienced 2CW)" stays
    name = _CARD_WORD.sub("", _ARTICLE.sub("", unremarked.strip(" ,'")))
    words = fold(name).split()
    if not words or len(words) > MAX_NAME_WORDS or any(w.isdigit() for w in words):
        return None
    if _NOT_IN_NAMES.intersection(words) or all(w in STOPS for w in words):
        return None
    return name


def _unlisted_card(st: State, name: str, sentence: str) -> bool:
    """Whether a name the list does not hold is a card's name, so "not named on the banned list" may be said of
    it: not something the sources define ("terrain", "strongholds"), not mostly the rules' own words ("a second
    terrain", "crane clan stronghold"; "superior tactics", half of them, is a card) nor a practice ("gold
    splitting"), not a banned card spelt another way ("the Nanashi village stronghold" is Nanashi Mura, "Koans hat"
    Koan's Jingasa, "the black lion stronghold" House of the Black Lion: the search finds those), and not in a
    sentence that says a banned card's whole name ("is the Hantei emperor personality banned": Hantei is)."""
    said = f" {fold(sentence)} "
    if any(f" {banned} " in said for banned in st.banned_names):
        return False
    key = fold(name)
    words = key.split()
    if key in st.exact or key.replace(" ", "") in st.exact or " ".join(stem(w) for w in words) in st.stemmed:
        return False
    content = [w for w in words if w not in STOPS]
    names = [w for w in content if stem(w) not in st.rule_words]
    if 2 * len(names) < len(content) or not names or content[-1].endswith("ing"):
        return False  # "gold splitting" is a practice, not a card ("Rallying Cry" is a card)
    # a banned card spelt another way: a proper name of its ("nanashi", "koans"), or two of its words in a row
    # ("black lion"); a plain word of it ("house", in House of the Black Lion) is not its name: "House of Tao" is
    # another card
    if st.banned_proper.intersection(stem(w) for w in names if not is_word(w)):
        return False
    pairs = {f"{a} {b}" for a, b in zip(words, words[1:], strict=False) if a not in STOPS and b not in STOPS}
    return not any(f" {pair} " in f" {banned} " for pair in pairs for banned in st.banned_names)


def banned_asked(st: State, question: str) -> BannedResult | None:
    """``/banned``'s answer for the card the question asks about, or None when it names none. A card found on the
    list (or several sharing the words) is always answered; "not on the list" only for a name that is a card's."""
    if not st.banned_names:
        return None
    name, sentence = _asked(question)
    if not name:
        return None
    result = history.banned(st, name)
    found = result.record is not None or bool(result.matches) or result.how == "other-version"
    return result if found or _unlisted_card(st, name, sentence) else None
