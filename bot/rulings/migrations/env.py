"""Alembic environment: migrations run on the connection ``bot.rulings.db.migrate`` hands over.

The bot runs them itself at startup (``migrate``), so the same code path serves SQLite and
PostgreSQL and no ``alembic.ini`` or separate command is needed.
"""

from __future__ import annotations

from alembic import context

from bot.rulings.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - a developer running the alembic CLI by hand
    raise RuntimeError("run migrations through bot.rulings.db.migrate() (python -m bot.rulings migrate)")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
)
with context.begin_transaction():
    context.run_migrations()
