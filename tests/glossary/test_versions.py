"""Experience levels in card names (``glossary.versions``): what decides whether a banned line names the card a
player typed or asked about."""

from __future__ import annotations

import pytest

from glossary.versions import names_level, spelled_out, without_level, without_subtitle


@pytest.mark.parametrize(
    ("text", "says"),
    [("moshi eihime exp", True), ("Moshi Eihime Experienced", True), ("hantei xp2", True), ("exp 2cw", True),
     ("Moshi Eihime", False), ("moshi eihime inexperienced", False), ("Moshi Eihime non-experienced", False),
     ("moshi eihime non experienced", False), ("an expert player", False)],
)
def test_names_level(text: str, says: bool) -> None:
    assert names_level(text) is says


def test_the_level_is_spelled_out_and_taken_out() -> None:
    assert spelled_out("isawa tadaka exp 2cw") == spelled_out("isawa tadaka xp2cw") == "isawa tadaka experienced 2cw"
    assert without_level("moshi eihime exp") == "moshi eihime"


def test_a_versioned_title_without_its_subtitle() -> None:
    assert without_subtitle("Isawa Tadaka, Seven Thunder (Experienced 2CW)") == "Isawa Tadaka Experienced 2CW"
    assert without_subtitle("Moshi Eihime") is None and without_subtitle("Lies, Lies, Lies") is None
