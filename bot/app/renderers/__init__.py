"""One renderer per medium, each turning the same ``bot.app.answer.Answer`` into its own form.

* ``discord_markdown``: Discord's embeds (Markdown escaped, clipped and paged to Discord's limits);
* ``text``: plain text for the console and the command-line tools (rule text verbatim, never escaped);
* ``html``: the exported rulebook's pages.
"""
