"""Generated house-rulings files for the import tests: as many rulings as asked, some with a bad date."""

from __future__ import annotations


def house_file(count: int, *, bad_dates: int = 0, tag: str = "", start: int = 0) -> bytes:
    """``count`` rulings in the format ``/ruling export`` writes (~150 bytes each); the first ``bad_dates``
    of them carry an impossible date (a lint problem each). ``tag`` changes every text (a re-import that
    updates them all); ``start`` numbers the titles from there."""
    parts = ["# Generated rulings\n"]
    for i in range(start, start + count):
        date = "2026-13-40" if i - start < bad_dates else f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"
        parts.append(
            f"## Generated ruling {i}\nDate: {date}\nJudge: Ann\nEvent: Kotei {i % 7}\nApplies to: Terrain\n\n"
            f"Ruling {i}{tag}: a Terrain played during a duel waits.\n\n- it stays in play\n"
        )
    return "\n".join(parts).encode()
