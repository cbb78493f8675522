"""The per-user rate limit's table (bot.discord_bot.admission.UserCooldowns), driven with a chosen clock.

discord.py's ``dynamic_cooldown`` swept every bucket on every use; in a burst of 10,000 users at once that
check grew with the burst. Here the sweep is amortised and the limit itself behaves as before.
"""

from __future__ import annotations

from bot.discord_bot.admission import UserCooldowns


def test_a_key_over_its_rate_waits_and_other_keys_do_not() -> None:
    cooldowns = UserCooldowns(rate=2, per=30)
    assert cooldowns.retry_after(("define", 1), now=100.0) is None
    assert cooldowns.retry_after(("define", 1), now=101.0) is None
    wait = cooldowns.retry_after(("define", 1), now=102.0)
    assert wait is not None and 27 < wait <= 30
    assert cooldowns.retry_after(("ask", 1), now=102.0) is None  # another command of the same user
    assert cooldowns.retry_after(("define", 2), now=102.0) is None  # another user
    assert cooldowns.retry_after(("define", 1), now=131.0) is None  # refilled


def test_zero_seconds_turns_the_limit_off() -> None:
    cooldowns = UserCooldowns(rate=1, per=0)
    assert all(cooldowns.retry_after(7, now=100.0) is None for _ in range(5)) and len(cooldowns) == 0


def test_refilled_buckets_are_forgotten_and_a_sweep_comes_only_when_the_table_has_doubled() -> None:
    cooldowns = UserCooldowns(rate=1, per=10)
    for user in range(UserCooldowns.SWEEP_FROM):  # all used at 100 s
        cooldowns.retry_after(user, now=100.0)
    assert len(cooldowns) == UserCooldowns.SWEEP_FROM
    cooldowns.retry_after("late", now=200.0)  # every bucket refilled: the sweep forgets them
    assert len(cooldowns) == 1
    live = 3000
    for user in range(live):  # a burst of users whose buckets are all still in use
        cooldowns.retry_after(("burst", user), now=300.0)
    assert len(cooldowns) == live  # every live bucket kept; only the refilled "late" one forgotten
    wait = cooldowns.retry_after(("burst", 5), now=301.0)
    assert wait is not None  # and each still limits its user
    # the next sweep waits until the table has doubled since the last one (amortised O(1) a use)
    assert cooldowns._sweep_at > live  # noqa: SLF001
