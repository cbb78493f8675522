"""Rulings per Discord server: recorded by its judges, kept in a database, merged into its answers.

Layers (Discord-free except the cog in ``bot/discord_bot/cogs/rulings.py``):

- ``schema``: the tables (SQLAlchemy Core), one schema for SQLite and PostgreSQL;
- ``db``: the database URL, the async engine and the versioned migrations (Alembic, run at startup);
- ``repository``: every read and write as one transaction; each change is a new version, nothing is deleted;
- ``markdown``: the house-rulings Markdown format (export, import, checks), via ``glossary.house``;
- ``service``: the scopes' in-memory overlays (``index.query.overlay``), kept fresh across processes by a poll.
"""
