"""Regenerate docs/ruling-modal.png and docs/ruling-answer.png: what a judge sees, drawn from real payloads.

There is no Discord client here, so this runs the real bot against the tests' fake Discord, records a judge
filling in ``/ruling add`` and a player's ``/define enemy`` in that server, and draws the exact modal and
message payloads the bot sent as an HTML page styled like Discord's dark theme, which headless Chromium
turns into PNGs. Nothing in the pictures is typed by hand except what the judge entered in the form.

    .venv/bin/python docs/make_ruling_screenshots.py
"""

from __future__ import annotations

import asyncio
import html
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from fakediscord import FakeDiscord, bot_running  # noqa: E402

from bot.app.settings import Settings  # noqa: E402
from bot.discord_bot.client import JudgeBot  # noqa: E402
from index.engine import Engine  # noqa: E402

FORM = {
    "title": "Calling out enemy cards at the table",
    "text": (
        "EXAMPLE RULING — for illustration only.\n\n"
        "When an effect says \"an enemy card\", the player taking it names the battle side it looks at "
        "before choosing; Terrains and Regions are never **enemy** cards (see Terrain and Region)."
    ),
}
OPTIONS = {"applies_to": "glossary:enemy", "event": "Kotei 2026"}

CSS = """
body{margin:0;background:#313338;font-family:'DejaVu Sans',sans-serif;color:#dbdee1;font-size:15px}
.backdrop{background:rgba(0,0,0,.7);padding:40px;display:inline-block}
.modal{background:#313338;width:440px;border-radius:8px;padding:16px 16px 0;box-shadow:0 0 0 1px #1e1f22}
.modal h1{font-size:20px;color:#f2f3f5;margin:4px 0 18px}
.label{font-size:12px;font-weight:bold;text-transform:uppercase;color:#b5bac1}
.req{color:#f23f43;margin-left:3px}
.desc{font-size:13px;color:#b5bac1;margin:2px 0 8px}
.input{background:#1e1f22;border-radius:4px;padding:10px;color:#dbdee1;margin-bottom:18px;white-space:pre-wrap;
min-height:20px}
.input.para{min-height:90px}
.footer{background:#2b2d31;margin:0 -16px;padding:16px;text-align:right;border-radius:0 0 8px 8px}
.btn{display:inline-block;padding:8px 16px;border-radius:3px;font-size:14px;margin-left:8px;color:#fff}
.primary{background:#5865f2}.secondary{background:#4e5058}.success{background:#248046}.link{color:#fff}
.msg{display:flex;padding:16px 20px;width:760px}
.avatar{width:40px;height:40px;border-radius:50%;background:#5865f2;flex:none;margin-right:16px;color:#fff;
text-align:center;line-height:40px;font-weight:bold}
.name{color:#f2f3f5;font-weight:bold}.tag{background:#5865f2;color:#fff;font-size:10px;border-radius:3px;
padding:1px 4px;margin-left:4px;vertical-align:2px}.time{color:#949ba4;font-size:12px;margin-left:6px}
.used{color:#949ba4;font-size:13px;margin-bottom:4px}
.embed{background:#2b2d31;border-left:4px solid;border-radius:4px;padding:10px 16px 14px 12px;margin-top:6px;
max-width:640px}
.embed .title{color:#00a8fc;font-weight:bold;margin:4px 0 8px}
.embed .text{line-height:1.4}
.field{margin-top:10px}.field .fname{font-weight:bold;color:#f2f3f5;font-size:14px}
.embed .foot{font-size:12px;color:#b5bac1;margin-top:10px}
blockquote{border-left:4px solid #4e5058;margin:4px 0;padding-left:10px}
a{color:#00a8fc;text-decoration:none}
.row{margin-top:8px}
"""


def discord_markdown(text: str) -> str:
    """The subset of Discord Markdown the bot uses: escapes, bold, italic, links, quotes, line breaks."""
    escaped: list[str] = []

    def keep(match: re.Match[str]) -> str:
        escaped.append(html.escape(match[1]))
        return f"\x00{len(escaped) - 1}\x00"

    text = re.sub(r"\\(.)", keep, text)
    text = html.escape(text, quote=False)
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<i>\1</i>", text)
    text = re.sub(r"\[([^\]]+)\]\((https?://[^)\s]+)\)", r'<a href="\2">\1</a>', text)
    lines = []
    for line in text.split("\n"):
        lines.append(f"<blockquote>{line[5:]}</blockquote>" if line.startswith("&gt; ") else line + "<br>")
    text = "".join(lines).replace("\u200b", "")
    return re.sub(r"\x00(\d+)\x00", lambda m: escaped[int(m[1])], text)


def modal_html(modal: dict, values: dict[str, str]) -> str:
    parts = [f'<div class="backdrop"><div class="modal"><h1>{html.escape(modal["title"])}</h1>']
    for top in modal["components"]:
        comp = top["component"]
        value = values.get(comp["custom_id"], comp.get("value") or "")
        required = '<span class="req">*</span>' if comp.get("required", True) else ""
        parts.append(f'<div class="label">{html.escape(top["label"])}{required}</div>')
        if top.get("description"):
            parts.append(f'<div class="desc">{html.escape(top["description"])}</div>')
        cls = "input para" if comp.get("style") == 2 else "input"
        parts.append(f'<div class="{cls}">{html.escape(value)}</div>')
    parts.append('<div class="footer"><span class="link">Cancel</span>'
                 '<span class="btn primary">Submit</span></div></div></div>')  # fmt: skip
    return "".join(parts)


def message_html(message: dict, command: str, user: str) -> str:
    embed = message["embeds"][0]
    colour = f"#{int(embed.get('color') or 0):06x}"
    used = f'{html.escape(user)} used <span style="color:#00a8fc">{html.escape(command)}</span>'
    body = [
        f'<div class="used">{used}</div>',
        '<span class="name">Judge Bot</span><span class="tag">APP</span><span class="time">Today at 14:02</span>',
        f'<div class="embed" style="border-color:{colour}">',
    ]
    title = discord_markdown(embed.get("title") or "")
    text = discord_markdown(embed.get("description") or "")
    body.append(f'<div class="title">{title}</div><div class="text">{text}</div>')
    for f in embed.get("fields") or []:
        body.append(f'<div class="field"><div class="fname">{discord_markdown(f["name"])}</div>'
                    f'<div>{discord_markdown(f["value"])}</div></div>')  # fmt: skip
    if embed.get("footer"):
        body.append(f'<div class="foot">{html.escape(embed["footer"]["text"])}</div>')
    body.append("</div>")
    styles = {1: "primary", 2: "secondary", 3: "success", 4: "danger", 5: "secondary"}
    for row in message.get("components") or []:
        buttons = "".join(
            f'<span class="btn {styles.get(b.get("style"), "secondary")}" style="margin:0 8px 0 0">'
            f'{html.escape(b.get("label") or "")}</span>'
            for b in row.get("components") or []
        )
        body.append(f'<div class="row">{buttons}</div>')
    return f'<div class="msg"><div class="avatar">J</div><div>{"".join(body)}</div></div>'


def screenshot(page: str, out: Path, width: int, height: int, work: Path) -> None:
    path = work / (out.stem + ".html")
    path.write_text(f'<!doctype html><meta charset="utf-8"><style>{CSS}</style>{page}', encoding="utf-8")
    subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={work / 'profile'}", f"--window-size={width},{height}", f"--screenshot={out}",
         f"file://{path}"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    print(f"wrote {out.relative_to(ROOT)}")


async def record(work: Path) -> tuple[dict, dict]:
    engine = Engine.open(None, work / "index")
    async with FakeDiscord() as fake:
        role = fake.new_role("Judges")
        judge = fake.new_member("Ann", roles=[role])
        player = fake.new_member("Player")
        settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=work / "index",
                            state_dir=work / "state", cooldown_seconds=0)  # fmt: skip
        bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
        async with bot_running(fake, bot, "fake-token"):
            await fake.invoke_command("ruling config judge-role", {"role": role}, user=fake.admin)
            opened = await fake.invoke_command("ruling add", OPTIONS, user=judge)
            modal = opened.modal
            saved = await fake.submit_modal(opened, FORM)
            assert "Saved ruling" in saved.message["content"], saved.message
            answer = await fake.invoke_command("define", {"term": "enemy"}, user=player)
            assert not fake.rejected, fake.rejected
            return modal, answer.message


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        modal, message = asyncio.run(record(work))
        values = {c["component"]["custom_id"]: c["component"].get("value") or "" for c in modal["components"]}
        values.update(FORM)
        screenshot(modal_html(modal, values), ROOT / "docs" / "ruling-modal.png", 520, 640, work)
        screenshot(message_html(message, "/define", "Player"), ROOT / "docs" / "ruling-answer.png", 800, 900, work)


if __name__ == "__main__":
    main()
