"""The Discord-free application: the judge composes one answer model; renderers turn it into each medium.

- ``commands``: the command registry (names, options, help, the judge method that answers each).
- ``judge``: the commands over one engine (``Judge``), returning ``answer.Answer`` values.
- ``compose``: how an answer is assembled from search hits (quotes, dates, citations, relations).
- ``answer``: the format-neutral answer model.
- ``renderers``: Discord Markdown and embeds, plain text (console, CLIs), HTML.
- ``console``, ``settings``, ``startup``: the console front end, settings read once, opening the engine.

Nothing here imports discord.py (a contract in ``.importlinter`` checks it).
"""
