"""The discord.py package: the only code that imports ``discord``.

- ``client``: the ``Bot`` subclass (cogs loaded in ``setup_hook``, reload, rulings, shutdown).
- ``cogs``: one extension per command family, named in the command registry (``bot.app.commands``).
- ``replies``: the reply pipeline (render an ``Answer`` for Discord, pages, buttons, deadlines).
- ``admission``: which interactions are answered when the bot is busy; ``logs``, ``health``, ``metrics``:
  operations.
"""
