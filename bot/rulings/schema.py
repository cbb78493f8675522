"""The rulings tables: one schema for SQLite and PostgreSQL (changed only through a migration).

``rulings`` holds each ruling's current state (what answers are built from) and ``ruling_versions``
every state it ever had (append-only: history, and nothing a command does is ever lost). ``scopes``
holds a server's settings, a revision bumped by every change in it and when the bot left it; ``feedback``
holds players' "Not the answer?" reports and the pairs judges confirmed from them (``bot.rulings.feedback``);
``ruling_basis`` holds the rule text each ruling was made against (its "needs review" flag is
``rulings.review_since``); ``counters`` holds process-wide generations (any ruling change; ``/reload`` of the
rule documents) that other bot processes poll.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

scopes = Table(
    "scopes",
    metadata,
    Column("scope", String(64), primary_key=True),  # opaque: "guild:<id>"
    Column("revision", BigInteger, nullable=False, default=0),
    Column("judge_role_id", String(32)),
    Column("audit_channel_id", String(32)),
    Column("updated_at", DateTime(timezone=True)),
    Column("updated_by", String(64)),
    # When the bot was removed from the server (NULL while it is in it): everything of the scope is deleted
    # once this is older than the grace period (L5R_DATA_GRACE_DAYS); a re-invite before that clears it.
    Column("left_at", DateTime(timezone=True)),
    # The formats the server plays (``/ruling config formats``): a JSON list of format ids (``glossary.formats``);
    # NULL: it chose nothing, and answers show every format; "[]": it plays none.
    Column("formats", Text),
)

rulings = Table(
    "rulings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), ForeignKey("scopes.scope"), nullable=False),
    Column("version", Integer, nullable=False),  # optimistic concurrency: an edit names the version it saw
    Column("status", String(16), nullable=False),  # "active" | "retired"
    Column("title", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("applies_to", Text, nullable=False),  # JSON list of shared entry ids
    Column("event", Text),
    Column("judge", Text),  # who ruled, as shown ("Judge:" in the Markdown)
    Column("ruled_on", String(10), nullable=False),  # YYYY-MM-DD ("Date:")
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("created_by", String(64), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("updated_by", String(64), nullable=False),
    # "Needs review": the date its rule changed after it was made (NULL: nothing to review). Set by the check
    # after a reload or a start (bot.rulings.review), cleared by an edit, "still stands", or the text changing back.
    Column("review_since", String(10)),
    Index("ix_rulings_scope_status", "scope", "status"),
)

ruling_basis = Table(
    "ruling_basis",
    metadata,
    # What each entry a ruling applies to said when the ruling was made, edited or confirmed (bot.rulings.review).
    Column("ruling_id", Integer, ForeignKey("rulings.id"), primary_key=True),
    Column("entry_id", Text, primary_key=True),
    Column("scope", String(64), nullable=False),  # the ruling's (a server's data is deleted by scope)
    Column("digest", String(16), nullable=False),  # of ``text`` (index.build.asked.digest)
    Column("text", Text, nullable=False),  # the entry's paragraphs, verbatim, blank-line separated ("" if missing)
    Column("stamp", String(10)),  # the entry's newest change stamp then (YYYY-MM-DD), if it had one
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    Index("ix_ruling_basis_scope", "scope"),
)

ruling_versions = Table(
    "ruling_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ruling_id", Integer, ForeignKey("rulings.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("action", String(16), nullable=False),  # add | edit | retire | restore | import
    Column("status", String(16), nullable=False),
    Column("title", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("applies_to", Text, nullable=False),
    Column("event", Text),
    Column("judge", Text),
    Column("ruled_on", String(10), nullable=False),
    Column("note", Text),  # e.g. why it was retired
    Column("author_id", String(32), nullable=False),  # who made this version (a Discord user id)
    Column("author_name", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("ruling_id", "version", name="uq_ruling_versions_ruling_version"),
)

feedback = Table(
    "feedback",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), ForeignKey("scopes.scope"), nullable=False),
    Column("status", String(16), nullable=False),  # "pending" | "confirmed" (a dismissed report is deleted)
    Column("question", Text, nullable=False),  # as the member asked it (cleaned as /ask cleans it)
    Column("entry_id", Text),  # the paragraph picked (NULL: "none of these answers it")
    Column("paragraph", Integer),  # 0-based, as in index/asked.json
    Column("digest", String(16)),  # its text's digest then (index.build.asked.digest): a changed text drops the pair
    Column("reporter_id", String(32)),  # who reported it, only while it is pending (NULL once reviewed)
    Column("reported_at", DateTime(timezone=True), nullable=False),
    Column("reviewed_by", String(32)),  # the judge who confirmed it (a Discord user id)
    Column("reviewed_at", DateTime(timezone=True)),
    Index("ix_feedback_scope_status", "scope", "status"),
)

# The sources as a bot process last read them (bot.rulings.digests): a snapshot of their entries per fingerprint
# (glossary.diff), which fingerprint the last digest brought them to, each digest between two of them, the
# channels subscribed to digests (/changes subscribe) and one delivery row per digest and channel.
source_snapshots = Table(
    "source_snapshots",
    metadata,
    Column("fingerprint", String(64), primary_key=True),  # glossary.diff.fingerprint
    Column("data", LargeBinary, nullable=False),  # zlib-compressed JSON of glossary.diff.snapshot
    Column("created_at", DateTime(timezone=True), nullable=False),
)

source_head = Table(
    "source_head",
    metadata,
    Column("name", String(32), primary_key=True),  # "sources": one row
    Column("fingerprint", String(64), nullable=False),  # the version the latest digest brought the sources to
    Column("generation", BigInteger, nullable=False),  # bumped by each move: who moves it from N sends digest N
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

digests = Table(
    "digests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("generation", BigInteger, nullable=False),  # the head's generation it moved from: one digest each
    Column("old_fingerprint", String(64), nullable=False),
    Column("new_fingerprint", String(64), nullable=False),
    Column("summary", Text, nullable=False),  # one line of counts (for the log)
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("generation", name="uq_digests_generation"),
)

subscriptions = Table(
    "subscriptions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), ForeignKey("scopes.scope"), nullable=False),
    Column("channel_id", String(32), nullable=False),
    Column("status", String(16), nullable=False),  # "active" | "failed" (the bot cannot post there: not retried)
    Column("created_by", String(32), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("failed_at", DateTime(timezone=True)),
    Column("failure", Text),  # what Discord said, e.g. "403 Missing Access"
    UniqueConstraint("scope", "channel_id", name="uq_subscriptions_scope_channel"),
)

digest_deliveries = Table(
    "digest_deliveries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("digest_id", Integer, ForeignKey("digests.id"), nullable=False),
    Column("subscription_id", Integer, ForeignKey("subscriptions.id"), nullable=False),
    Column("status", String(16), nullable=False),  # "pending" | "sending" | "sent" | "failed"
    Column("attempts", Integer, nullable=False, default=0),
    Column("claimed_at", DateTime(timezone=True)),  # when a process took it to send (the database decides who)
    Column("message_id", String(32)),
    Column("error", Text),
    UniqueConstraint("digest_id", "subscription_id", name="uq_digest_deliveries_digest_subscription"),
)

counters = Table(
    "counters",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("value", BigInteger, nullable=False, default=0),
)

RULINGS_COUNTER = "rulings"
RELOAD_COUNTER = "reload"
