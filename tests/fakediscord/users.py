"""The test-side API: act as a Discord user (run a command, type into autocomplete, click, pick a context
menu entry, submit a modal, attach a file) and, by default, wait for the bot's final answer.

Each action builds the interaction (``payloads``), registers its ``InteractionRecord`` and dispatches it
on the gateway session of the shard that owns the guild, so the bot receives it exactly as from Discord.
"""

from __future__ import annotations

import time
from typing import Any

from .models import FakeGuild, FakeUser, snowflake
from .records import InteractionRecord


class UserActionsMixin:
    """``FakeDiscord``'s user actions; ``member`` acts unless ``user=`` says otherwise."""

    def _register(
        self, payload: dict[str, Any], user: FakeUser, guild: FakeGuild | None, age: float = 0.0
    ) -> InteractionRecord:
        rec = InteractionRecord(self, int(payload["id"]), payload["token"], payload["type"], payload, user, guild)
        self.interactions[rec.id] = rec
        self._by_token[rec.token] = rec
        rec.dispatched_at = time.perf_counter()
        rec.created_at = rec.dispatched_at - age
        return rec

    def create_interaction(
        self, itype: int = 2, data: dict[str, Any] | None = None, message: dict[str, Any] | None = None
    ) -> InteractionRecord:
        """An interaction Discord knows about but sends to nobody: for poking the REST endpoints directly."""
        payload = self._interaction_payload(
            itype, data or {"name": "raw", "type": 1}, self.member, self.guild, message=message
        )
        return self._register(payload, self.member, self.guild)

    async def _dispatch_interaction(
        self,
        itype: int,
        data: dict[str, Any],
        user: FakeUser | None,
        guild: FakeGuild | None,
        *,
        message: dict[str, Any] | None = None,
        settle: bool = True,
        timeout: float = 5.0,
        shard: int | None = None,
        age: float = 0.0,
    ) -> InteractionRecord:
        """Send an interaction of type ``itype`` to the shard that owns ``guild`` (or, with ``shard``, to
        that shard's session: what a guild's interactions do while it moves to another shard, e.g. when a
        bot is resharded); by default wait until the bot has answered it. ``age``: seconds since Discord
        created it (a late delivery, as after a gateway backlog or a RESUME); its id and its 3-second window
        start that long ago."""
        user = user or self.member
        payload = self._interaction_payload(itype, data, user, guild, message=message, age=age)
        rec = self._register(payload, user, guild, age)
        session = self.session_for_guild(guild) if shard is None else self.session_for_shard(shard)
        await self.dispatch_event(session, "INTERACTION_CREATE", payload)
        if settle:
            await rec.wait_until(lambda r: r.settled, timeout)
        return rec

    async def invoke_command(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        user: FakeUser | None = None,
        guild: FakeGuild | None = None,
        dm: bool = False,
        settle: bool = True,
        timeout: float = 5.0,
        shard: int | None = None,
        age: float = 0.0,
    ) -> InteractionRecord:
        """A user runs slash command ``name`` ("group sub" for subcommands); waits for the final answer.

        ``dm=True``: in a direct message with the bot (no guild); a guild-only command is refused, as the
        Discord client would not offer it.
        """
        guild = None if dm else (self.guild if guild is None else guild)
        if dm:
            cmd = self._find_command(name.split()[0], 1, None)
            if 1 not in (cmd.get("contexts") or [0, 1, 2]) or cmd.get("dm_permission") is False:
                raise ValueError(f"/{name} is not available in direct messages")
        data = self._command_data(name, options, guild)
        return await self._dispatch_interaction(
            2, data, user, guild, settle=settle, timeout=timeout, shard=shard, age=age
        )

    async def autocomplete(
        self,
        name: str,
        option: str,
        value: str,
        options: dict[str, Any] | None = None,
        *,
        user: FakeUser | None = None,
        guild: FakeGuild | None = None,
        timeout: float = 5.0,
        settle: bool = True,
        age: float = 0.0,
    ) -> InteractionRecord:
        """A user types ``value`` into autocomplete option ``option``; waits for the choices (type 8)."""
        guild = self.guild if guild is None else guild
        data = self._command_data(name, {**(options or {}), option: value}, guild, focused=option)
        return await self._dispatch_interaction(4, data, user, guild, timeout=timeout, settle=settle, age=age)

    async def click(
        self,
        message: dict[str, Any],
        custom_id: str,
        *,
        values: list[str] | None = None,
        user: FakeUser | None = None,
        settle: bool = True,
        timeout: float = 5.0,
        age: float = 0.0,
    ) -> InteractionRecord:
        """A user clicks button ``custom_id`` (or picks ``values`` in a select) on ``message``."""
        current = self.messages.get(int(message["id"]), message)
        comp = next((c for c in self.components_of(current) if c.get("custom_id") == custom_id), None)
        if comp is None:
            raise LookupError(
                f"no component with custom_id {custom_id!r} on message {message['id']}; have "
                f"{[c.get('custom_id') for c in self.components_of(current)]}"
            )
        if comp.get("disabled"):
            raise ValueError(f"component {custom_id!r} is disabled; a user cannot click it")
        guild = self._guild_by_channel(int(current["channel_id"]))
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": comp["type"], "id": comp.get("id")}
        if comp["type"] != 2:
            data["values"] = list(values or [])
        return await self._dispatch_interaction(
            3, data, user, guild, message=current, settle=settle, timeout=timeout, age=age
        )

    async def context_menu(
        self,
        name: str,
        message: dict[str, Any] | None = None,
        *,
        target_user: FakeUser | None = None,
        user: FakeUser | None = None,
        guild: FakeGuild | None = None,
        settle: bool = True,
        timeout: float = 5.0,
    ) -> InteractionRecord:
        """A user picks app command ``name`` from a message's (or a user's) context menu."""
        guild = self.guild if guild is None else guild
        ctype = 3 if message is not None else 2
        cmd = self._find_command(name, ctype, guild)
        data: dict[str, Any] = {"id": cmd["id"], "name": cmd["name"], "type": ctype}
        if message is not None:
            data["target_id"] = message["id"]
            data["resolved"] = {"messages": {message["id"]: message}}
        else:
            target = target_user or self.other_member
            data["target_id"] = str(target.id)
            data["resolved"] = {
                "users": {str(target.id): target.payload()},
                "members": {str(target.id): {k: val for k, val in target.member_payload().items() if k != "user"}},
            }
        return await self._dispatch_interaction(2, data, user, guild, settle=settle, timeout=timeout)

    async def submit_modal(
        self,
        rec: InteractionRecord,
        values: dict[str, str] | None = None,
        *,
        user: FakeUser | None = None,
        settle: bool = True,
        timeout: float = 5.0,
        shard: int | None = None,
    ) -> InteractionRecord:
        """The user fills in the modal the bot opened for ``rec`` and submits it (interaction type 5).

        Fields not in ``values`` keep the value the bot filled in. As Discord's client does, a submission
        breaking a field's required/min/max rule is refused here (ValueError), never sent.
        """
        modal = rec.modal
        if modal is None:
            raise LookupError(f"the bot opened no modal for {rec.describe()}")
        values = dict(values or {})
        components = []
        for top in modal["components"]:
            inner = top.get("component") if top.get("type") == 18 else (top.get("components") or [None])[0]
            if not inner or inner.get("type") != 4:
                continue
            cid = inner["custom_id"]
            value = str(values.pop(cid, inner.get("value") or ""))
            if inner.get("required", True) and not value:
                raise ValueError(f"modal field {cid!r} is required")
            if inner.get("max_length") is not None and len(value) > int(inner["max_length"]):
                raise ValueError(f"modal field {cid!r} takes at most {inner['max_length']} characters")
            if inner.get("min_length") is not None and value and len(value) < int(inner["min_length"]):
                raise ValueError(f"modal field {cid!r} takes at least {inner['min_length']} characters")
            field_data = {"type": 4, "id": inner.get("id"), "custom_id": cid, "value": value}
            if top.get("type") == 18:
                components.append({"type": 18, "id": top.get("id"), "component": field_data})
            else:
                components.append({"type": 1, "id": top.get("id"), "components": [field_data]})
        if values:
            raise ValueError(f"the modal has no field(s) {sorted(values)}")
        data = {"custom_id": modal["custom_id"], "components": components}
        return await self._dispatch_interaction(
            5, data, user or rec.user, rec.guild, message=rec.payload.get("message"), settle=settle, timeout=timeout,
            shard=shard,
        )

    def upload(self, filename: str, data: bytes, content_type: str = "text/markdown; charset=utf-8") -> dict[str, Any]:
        """A file a user attaches to a command (pass the result as an attachment option's value)."""
        aid = snowflake()
        self.files[aid] = data
        return self._attachment_payload(aid, filename, len(data), content_type)

    def attachment_data(self, message: dict[str, Any], index: int = 0) -> bytes:
        """The bytes of a file the bot attached to ``message``."""
        return self.files[int(message["attachments"][index]["id"])]
