""""Not the answer?" under ``/ask`` answers, and ``/ruling feedback``, where a server's judges review the reports.

A member who asked picks the paragraph that answers (or none) from a select menu; that is a pending report
(``bot.rulings.feedback``). A judge (whoever may record rulings) confirms it, picks another paragraph (or "the
loaded rules do not answer it"), or dismisses it; a confirmed pair is the server's own kept question at once
(``index.query.overlay.Kept``). Offered in servers
only: nothing is taken from direct messages.

Every component carries its state in its custom id and is handled from the raw interaction (as the rulings
forms are), so menus and buttons keep working after a restart: ``l5r:na:<question>`` (the button under an
answer, ``bot.discord_bot.replies``), ``l5r:np:<question>`` (the member's menu), ``l5r:fb:<action>:<report>``
(a judge's buttons) and ``l5r:fc:<report>`` (a judge's menu of other paragraphs).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import paragraph_choices
from bot.app.answer import Answer
from bot.app.paragraph_choices import Choice
from bot.app.renderers.discord_markdown import NEUTRAL_COLOUR, escape, shorten
from bot.discord_bot.admission import BUSY, EXPIRE_AT, Busy, Expired, age
from bot.discord_bot.cogs.rulings import DOWN, NO_DM, RulingError, _require_judge, _scope, _service
from bot.discord_bot.replies import ARGS, CUSTOM_ID_LIMIT, EXPIRED, REPORT_PREFIX, send_error
from bot.rulings import feedback
from bot.rulings.feedback import Report
from bot.rulings.repository import NotFound
from bot.rulings.service import ConcurrentChange, Unavailable
from glossary.model import citation

if TYPE_CHECKING:
    from bot.discord_bot.client import JudgeBot

log = logging.getLogger("bot.feedback")
NONE = discord.AllowedMentions.none()

PICK_PREFIX = "l5r:np:"  # the member's menu: l5r:np:<question>
REVIEW_PREFIX = "l5r:fb:"  # a judge's buttons: l5r:fb:<ok|fix|no|next|show>:<report id>
CORRECT_PREFIX = "l5r:fc:"  # a judge's menu of other paragraphs: l5r:fc:<report id>
NONE_VALUE = "none"
DESCRIPTION_ROOM = 3900  # of an embed's 4,096 characters: rule texts that would not fit are cited, not cut
NONE_ANSWERS = "(the member found none of the quoted paragraphs answers it)"
NOT_COVERED = "The loaded rules do not answer it"  # a judge's menu option: confirm with no paragraph
NOT_ASKER = "Only the member who asked can report this answer; ask the question yourself to report it."
ASK_PICK = (
    "Which paragraph answers **“{question}”**? Your pick goes to this server's judges: if one confirms it, this "
    "server's answers to that question quote it first. Kept: the question, the paragraph and this server; your "
    "user id only until a judge has reviewed it (see the privacy notes, `/about`)."
)
OUTCOMES: dict[str, str] = {
    "saved": "Thank you: your report is waiting for this server's judges (`/ruling feedback`).",
    "duplicate": "That report is already waiting for this server's judges.",
    "yours_full": (
        f"You have {feedback.MAX_PENDING_EACH} reports waiting for this server's judges already; please wait "
        "until they have reviewed them."
    ),
    "server_full": "This server's judges have many reports to review already; please try again later.",
}


def _question(token: str) -> str:
    question = ARGS.decode(token)
    if question is None:
        raise RulingError(EXPIRED)
    return question


def _value(choice: Choice) -> str:
    return f"{choice.paragraph}:{ARGS.encode(choice.entry.id, 90)}"


def _label(choice: Choice) -> str:
    where = f"{choice.entry.label}, paragraph {choice.paragraph + 1}"
    return shorten(where + (f" (result {choice.result})" if choice.result else ""), 100)


def _menu(
    custom_id: str, options: list[Choice], placeholder: str, *, none: bool, none_label: str = "None of these answers it"
) -> discord.ui.View:
    """A select of ``options`` (Discord: 25 at most, labels and descriptions of 100 characters), and with ``none``
    one option for "no paragraph answers" (``NONE_VALUE``)."""
    select: discord.ui.Select[Any] = discord.ui.Select(custom_id=custom_id[:CUSTOM_ID_LIMIT], placeholder=placeholder)
    for choice in options[: 25 - none]:
        select.add_option(label=_label(choice), value=_value(choice),
                          description=shorten(" ".join(choice.text.split()), 100) or None)  # fmt: skip
    if none:
        select.add_option(label=none_label, value=NONE_VALUE)
    view = discord.ui.View(timeout=None)
    view.add_item(select)
    return view


def _picked(bot: JudgeBot, value: str) -> Choice:
    """The paragraph a menu's value names, in the rules loaded now."""
    number, _, ref = value.partition(":")
    entry_id = ARGS.decode(ref, bot.judge) if number.isdigit() else None
    entry = bot.judge.engine.get(entry_id) if entry_id else None
    if entry is None or not int(number) < len(entry.paragraphs):
        raise RulingError("That paragraph is no longer in the rules (they were reloaded); please pick again.")
    return Choice(entry, int(number))


def _quoted(choice: Choice) -> str:
    """The paragraph verbatim as a block quote under its citation."""
    lines = escape(choice.text).split("\n")
    return escape(citation(choice.entry, choice.paragraph)) + "\n" + "\n".join(f"> {line}" for line in lines)


class Feedback(commands.Cog):
    def __init__(self, bot: JudgeBot) -> None:
        self.bot = bot

    async def _ask(self, interaction: discord.Interaction, question: str) -> Answer:
        """The server's answer to ``question`` now (with its rulings and confirmed pairs), on a lookup worker."""
        judge = await self.bot.judge_for(interaction)

        def wanted() -> bool:  # skip the work when no response can reach Discord any more
            return interaction.response.is_done() or age(interaction) < EXPIRE_AT

        return await self.bot.lookups.run(lambda: judge.run(lambda j: j.ask(question)), wanted)

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if interaction.type is not discord.InteractionType.component:
            return
        data: dict[str, Any] = interaction.data or {}  # type: ignore[assignment]
        custom_id = str(data.get("custom_id") or "")
        values = [str(v) for v in data.get("values") or []]
        try:
            if custom_id.startswith(REPORT_PREFIX):
                await self.on_report(interaction, custom_id.removeprefix(REPORT_PREFIX))
            elif custom_id.startswith(PICK_PREFIX) and values:
                await self.on_pick(interaction, custom_id.removeprefix(PICK_PREFIX), values[0])
            elif custom_id.startswith(REVIEW_PREFIX):
                action, _, number = custom_id.removeprefix(REVIEW_PREFIX).partition(":")
                await self.on_review(interaction, action, int(number) if number.isdigit() else 0)
            elif custom_id.startswith(CORRECT_PREFIX) and values:
                number = custom_id.removeprefix(CORRECT_PREFIX)
                await self.on_correct(interaction, int(number) if number.isdigit() else 0, values[0])
            else:
                return
        except RulingError as exc:
            await send_error(interaction, str(exc))
        except Unavailable:
            await send_error(interaction, DOWN)
        except Busy:
            await send_error(interaction, BUSY)
        except Expired:
            log.info("a report interaction expired before it could be answered")
        except Exception:
            log.exception("answer report %s failed", custom_id.split(":")[1] if ":" in custom_id else "?")
            await send_error(interaction, "Sorry, something went wrong with that. It has been logged.")

    # -- the member: "Not the answer?" --------------------------------------------------------------
    async def on_report(self, interaction: discord.Interaction, token: str) -> None:
        """The button: a menu of the paragraphs the answer quoted and their entries' others, privately."""
        if interaction.guild_id is None:
            raise RulingError(NO_DM)
        _service(interaction)
        question = _question(token)
        meta = interaction.message.interaction_metadata if interaction.message is not None else None
        if meta is not None and meta.user.id != interaction.user.id:
            raise RulingError(NOT_ASKER)
        await interaction.response.defer(ephemeral=True, thinking=True)
        options = paragraph_choices.choices(await self._ask(interaction, question))
        if not options:
            await interaction.followup.send("This answer quotes no rule paragraph to correct.", ephemeral=True)
            return
        view = _menu(PICK_PREFIX + ARGS.encode(question, CUSTOM_ID_LIMIT - len(PICK_PREFIX)), options,
                     "The paragraph that answers it", none=True)  # fmt: skip
        content = ASK_PICK.format(question=escape(shorten(question, 300)))
        await interaction.followup.send(content, view=view, ephemeral=True, allowed_mentions=NONE)

    async def on_pick(self, interaction: discord.Interaction, token: str, value: str) -> None:
        """The member's pick: kept as a pending report; nothing changes in answers until a judge confirms it."""
        scope, service = _scope(interaction), _service(interaction)
        question = _question(token)
        pick = None if value == NONE_VALUE else _picked(self.bot, value).pick
        await interaction.response.defer()  # before the database: a hung one takes RULINGS_DB_TIMEOUT to give up
        outcome, _report = await service.report(scope, question, str(interaction.user.id), pick)
        await interaction.edit_original_response(content=OUTCOMES[outcome], view=None)

    # -- the judges: /ruling feedback -----------------------------------------------------------------
    async def review(self, interaction: discord.Interaction) -> None:
        """``/ruling feedback``: the oldest pending report, to confirm, correct or dismiss."""
        _service(interaction), _scope(interaction)
        await interaction.response.defer(ephemeral=True, thinking=True)  # the database may take a while
        await _require_judge(interaction)
        embed, view = await self._page(interaction, None, "")
        await interaction.followup.send(embed=embed, view=view, ephemeral=True)

    async def on_review(self, interaction: discord.Interaction, action: str, report_id: int) -> None:
        await interaction.response.defer()  # acknowledged before the database, which may take a while
        await _require_judge(interaction)  # again at every click: the role may have gone
        scope, service = _scope(interaction), _service(interaction)
        if action == "fix":
            report = await service.report_by_id(scope, report_id)
            if report is None or report.status != feedback.PENDING:
                return await self._show(interaction, report_id, "That report was reviewed meanwhile.")
            options = paragraph_choices.choices(await self._ask(interaction, report.question))
            if report.entry_id is not None and report.paragraph is not None:
                options = [c for c in options if (c.entry.id, c.paragraph) != (report.entry_id, report.paragraph)]
            none = report.entry_id is not None  # a judge may say no paragraph answers, unless the member did
            if not options and not none:
                raise RulingError("This server's answer to that question quotes no other paragraph to pick.")
            view = _menu(f"{CORRECT_PREFIX}{report_id}", options, "The paragraph that answers it", none=none,
                         none_label=NOT_COVERED)
            view.add_item(discord.ui.Button(label="Back", style=discord.ButtonStyle.secondary,
                                            custom_id=f"{REVIEW_PREFIX}show:{report_id}"))  # fmt: skip
            return await interaction.edit_original_response(view=view)
        note = ""
        if action == "ok":
            report = await service.report_by_id(scope, report_id)
            if report is None or report.status != feedback.PENDING:
                note = "That report was reviewed meanwhile: nothing was confirmed."
            elif report.entry_id is None:  # the member found no paragraph answers: the judge agrees
                note = await self._confirm(interaction, report, None)
            else:
                choice = _picked(self.bot, f"{report.paragraph}:{report.entry_id}")
                note = await self._confirm(interaction, report, choice)
        elif action == "no":
            dismissed = await service.dismiss(scope, report_id)
            note = "Dismissed: answers are unchanged." if dismissed else "That report was reviewed meanwhile."
        after = report_id if action in ("ok", "no", "next") else report_id - 1
        await self._show(interaction, after, note)

    async def on_correct(self, interaction: discord.Interaction, report_id: int, value: str) -> None:
        """A judge's own pick for a report: confirmed with that paragraph."""
        await interaction.response.defer()  # acknowledged before the database, which may take a while
        await _require_judge(interaction)
        report = await _service(interaction).report_by_id(_scope(interaction), report_id)
        if report is None or report.status != feedback.PENDING:
            return await self._show(interaction, report_id, "That report was reviewed meanwhile: nothing was changed.")
        choice = None if value == NONE_VALUE else _picked(self.bot, value)
        note = await self._confirm(interaction, report, choice)
        await self._show(interaction, report_id, note)

    async def _confirm(self, interaction: discord.Interaction, report: Report, choice: Choice | None) -> str:
        """Confirm ``report`` with ``choice``, or with no paragraph (None: the loaded rules do not answer it)."""
        service, scope = _service(interaction), _scope(interaction)
        try:
            await service.confirm(scope, report.id, str(interaction.user.id), None if choice is None else choice.pick)
        except NotFound:
            return "That report was reviewed meanwhile: nothing was changed."
        except ConcurrentChange:
            return "Another change to this server was being saved at the same moment; nothing was changed."
        question = escape(shorten(report.question, 200))
        answered = (
            "the loaded rules do not answer it" if choice is None
            else f"{escape(choice.entry.label)}, paragraph {choice.paragraph + 1}"
        )
        rulings = self.bot.get_cog("Rulings")
        if rulings is not None:  # the audit channel hears of it as of a ruling change
            who = escape(getattr(interaction.user, "display_name", None) or interaction.user.name)
            line = f"{who} confirmed an answer: “{question}” → {answered}."
            await rulings._audit(interaction, await service.config(scope), line)  # type: ignore[attr-defined]
        if choice is None:
            return (f"Confirmed: “{question}” → the loaded rules do not answer it. This server's answers to it say "
                    "so from now on.")  # fmt: skip
        return f"Confirmed: “{question}” → {answered}. This server's answers quote it first from now on."

    async def _show(self, interaction: discord.Interaction, after: int, note: str) -> None:
        """Replace the review message with the first pending report after ``after`` (or the first one)."""
        if not interaction.response.is_done():
            await interaction.response.defer()
        embed, view = await self._page(interaction, after, note)
        await interaction.edit_original_response(content=None, embed=embed, view=view)

    async def _page(
        self, interaction: discord.Interaction, after: int | None, note: str
    ) -> tuple[discord.Embed, discord.ui.View | None]:
        """One pending report as a judge reviews it: the question, the member's pick, what is answered now."""
        pending = await _service(interaction).pending(_scope(interaction))
        if not pending:
            text = (note + "\n\n" if note else "") + "No answer reports are waiting for review."
            return discord.Embed(title="Answer reports", description=text, colour=NEUTRAL_COLOUR), None
        index = next((i for i, r in enumerate(pending) if after is not None and r.id > after), 0)
        report = pending[index]
        answer = await self._ask(interaction, report.question)
        now = next(iter(paragraph_choices.choices(answer, 1)), None)
        picked = None
        if report.entry_id is not None and report.paragraph is not None:
            picked = paragraph_choices.find(answer, report.entry_id, report.paragraph, self.bot.judge.engine.get)
        parts = [note] if note else []
        parts.append(f"**Question:** “{escape(report.question)}” (reported {report.reported_at.date().isoformat()})")
        missing = NONE_ANSWERS if report.entry_id is None else "(that paragraph is no longer in the rules)"
        for label, choice, absent in (("**The member's pick:**", picked, missing), ("**Answered first now:**", now,
                                                                                    "(nothing)")):  # fmt: skip
            if choice is None:
                parts.append(f"{label} {absent}")
                continue
            block = f"{label} {_quoted(choice)}"
            if sum(len(p) + 2 for p in parts) + len(block) > DESCRIPTION_ROOM:  # rule text: whole or not at all
                block = f"{label} {escape(citation(choice.entry, choice.paragraph))} (too long to quote here)"
            parts.append(block)
        embed = discord.Embed(title=f"Answer report {index + 1} of {len(pending)}", description="\n\n".join(parts),
                              colour=NEUTRAL_COLOUR)  # fmt: skip
        embed.set_footer(text="Confirm: this server's answers to that question say the loaded rules do not answer it."
                         if report.entry_id is None else
                         "Confirm: this server's answers to that question quote the pick first.")  # fmt: skip
        view = discord.ui.View(timeout=None)
        view.add_item(discord.ui.Button(label="Confirm", style=discord.ButtonStyle.success,
                                        disabled=picked is None and report.entry_id is not None,
                                        custom_id=f"{REVIEW_PREFIX}ok:{report.id}"))  # fmt: skip
        view.add_item(discord.ui.Button(label="Pick another paragraph", style=discord.ButtonStyle.primary,
                                        custom_id=f"{REVIEW_PREFIX}fix:{report.id}"))  # fmt: skip
        view.add_item(discord.ui.Button(label="Dismiss", style=discord.ButtonStyle.danger,
                                        custom_id=f"{REVIEW_PREFIX}no:{report.id}"))  # fmt: skip
        if len(pending) > 1:
            view.add_item(discord.ui.Button(label="Next ▶", style=discord.ButtonStyle.secondary,
                                            custom_id=f"{REVIEW_PREFIX}next:{report.id}"))  # fmt: skip
        return embed, view


async def _feedback_command(interaction: discord.Interaction) -> None:
    cog = interaction.client.get_cog("Feedback")  # type: ignore[attr-defined]
    if cog is None:
        raise RulingError("Answer reports are not available in this bot.")
    await cog.review(interaction)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Feedback(bot))  # type: ignore[arg-type]
    group = bot.tree.get_command("ruling")
    if isinstance(group, app_commands.Group):  # a judges' command beside the other /ruling ones
        group.add_command(app_commands.Command(
            name="feedback", description="Review members' \"Not the answer?\" reports (judges)",
            callback=_feedback_command,
        ))  # fmt: skip
    else:
        log.warning("/ruling is not loaded: /ruling feedback is not offered")
