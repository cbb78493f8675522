"""The bot's answers to interactions: the callback, followups and edits of the original or a followup.

These routes enforce the interaction rules a bot most often breaks (the 3-second first response, a single
response, callback types valid for the interaction, followups only after a response and for 15 minutes)
and feed each ``InteractionRecord``, which is how tests see what the bot answered.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from . import validation as v
from .records import LOADING, InteractionRecord

# Callback types allowed per interaction type (PING=1 never reaches a gateway bot).
ALLOWED_CALLBACKS = {2: {4, 5, 9, 12}, 3: {4, 5, 6, 7, 9, 12}, 4: {8}, 5: {4, 5, 6, 7}}


class InteractionResponsesMixin:
    """``FakeDiscord``'s interaction routes; finds records in ``interactions`` (by id) and ``_by_token``."""

    async def _callback(self, request: web.Request, *, body: Any, iid: str, token: str, **_: Any) -> tuple[int, Any]:
        rec = self.interactions.get(int(iid))
        if rec is None or rec.token != token:
            return 404, {"message": "Unknown interaction", "code": 10062}
        if rec.callbacks:
            return 400, {"message": "Interaction has already been acknowledged.", "code": 40060}
        if time.perf_counter() - rec.created_at > self.response_deadline:
            return 404, {"message": "Unknown interaction", "code": 10062}
        if not isinstance(body, dict) or not isinstance(body.get("type"), int):
            return self._invalid(
                {"type": {"_errors": [{"code": "BASE_TYPE_REQUIRED", "message": "This field is required"}]}}
            )
        ctype = body["type"]
        if ctype not in ALLOWED_CALLBACKS.get(rec.type, set()):
            return 400, {
                "message": "Interaction callback type invalid for this interaction",
                "code": 50035,
                "errors": {
                    "type": {
                        "_errors": [
                            {
                                "code": "INTERACTION_CALLBACK_TYPE_INVALID",
                                "message": "Invalid interaction callback type",
                            }
                        ]
                    }
                },
            }
        if ctype in (6, 7) and "message" not in rec.payload:
            return 400, {"message": "Interaction has no message to update", "code": 50035}
        data = body.get("data") or {}
        if ctype in (4, 7):
            bad = v.check_message(data, require_body=ctype == 4)
            if bad:
                return self._invalid(bad[1], bad[0], nest="data")
        elif ctype == 8:
            errors = v.check_choices(data.get("choices"))
            if errors:
                return self._invalid(errors, nest="data")
        elif ctype == 9:
            errors = v.check_modal(data)
            if errors:
                return self._invalid(errors, nest="data")
        rec.callbacks.append(body)
        rec.callback_at = time.perf_counter()
        channel_id = int(rec.payload["channel_id"])
        guild_id = rec.guild.id if rec.guild else None
        msg: dict[str, Any] | None = None
        msg_type = 20 if (rec.payload.get("data") or {}).get("type", 1) == 1 else 23
        msg_type = 19 if rec.type == 3 else msg_type
        if ctype == 4:
            msg = self._new_message(
                data,
                channel_id=channel_id,
                guild_id=guild_id,
                author=self.bot_user,
                msg_type=msg_type,
                rec=rec,
                webhook=True,
            )
        elif ctype == 5:
            flags = (int(data.get("flags") or 0) & v.EPHEMERAL) | LOADING
            msg = self._new_message(
                {},
                channel_id=channel_id,
                guild_id=guild_id,
                author=self.bot_user,
                msg_type=msg_type,
                rec=rec,
                flags=flags,
                webhook=True,
            )
        elif ctype in (6, 7):
            target = int(rec.payload["message"]["id"])
            rec.original_message_id = target
            if ctype == 7:
                msg = self._edit_message(target, data)
                self.message_meta[target]["edited_at"] = rec.callback_at
        if msg is not None and ctype in (4, 5):
            rec.original_message_id = int(msg["id"])
        rec._notify()
        answer: dict[str, Any] = {
            "interaction": {
                "id": str(rec.id),
                "type": rec.type,
                "response_message_id": str(rec.original_message_id) if rec.original_message_id else None,
                "response_message_loading": ctype == 5,
                "response_message_ephemeral": bool(msg and int(msg["flags"]) & v.EPHEMERAL),
            }
        }
        if msg is not None:
            answer["resource"] = {"type": ctype, "message": msg}
        return 200, answer

    async def _followup(self, request: web.Request, *, body: Any, app: str, token: str, **_: Any) -> tuple[int, Any]:
        rec = self._by_token.get(token)
        refused = self._refuse_webhook(rec, app)  # also covers rec is None
        if refused:
            return refused
        data = body or {}
        refused = self._refuse_message(data)
        if refused:
            return refused
        original = rec.message
        if rec.response_type == 5 and original is not None and int(original["flags"]) & LOADING:
            # Discord turns the first followup after a deferred response into the original message.
            edited = self._edit_message(int(original["id"]), data)
            rec._notify()
            return 200, edited
        msg = self._new_message(
            data,
            channel_id=int(rec.payload["channel_id"]),
            guild_id=rec.guild.id if rec.guild else None,
            author=self.bot_user,
            msg_type=0,
            rec=rec,
            flags=int(data.get("flags") or 0) & v.EPHEMERAL,
            webhook=True,
        )
        rec.followup_ids.append(int(msg["id"]))
        rec._notify()
        if request.query.get("wait") in ("true", "1", "True"):
            return 200, msg
        return 204, None

    async def _webhook_message(
        self, request: web.Request, *, body: Any, app: str, token: str, mid: str, **_: Any
    ) -> tuple[int, Any]:
        rec = self._by_token.get(token)
        refused = self._refuse_webhook(rec, app)  # also covers rec is None
        if refused:
            return refused
        msg_id = rec.original_message_id if mid == "@original" else int(mid)
        if (
            msg_id is None
            or msg_id not in self.messages
            or (mid != "@original" and msg_id not in rec.followup_ids and msg_id != rec.original_message_id)
        ):
            return 404, {"message": "Unknown Message", "code": 10008}
        if request.method == "GET":
            return 200, self.messages[msg_id]
        if request.method == "DELETE":
            del self.messages[msg_id]
            rec._notify()
            return 204, None
        data = body or {}
        merged = {**self.messages[msg_id], **{k: val for k, val in data.items() if val is not None}}
        refused = self._refuse_message(merged)
        if refused:
            return refused
        msg = self._edit_message(msg_id, data)
        rec._notify()
        return 200, msg

    def _refuse_webhook(self, rec: InteractionRecord | None, app: str) -> tuple[int, Any] | None:
        """Discord's answer to a followup/webhook call on an unknown, unanswered or expired interaction."""
        if rec is None or int(app) != self.app_id or not rec.callbacks:
            return 404, {"message": "Unknown Webhook", "code": 10015}
        if time.perf_counter() - rec.created_at > self.token_lifetime:
            return 401, {"message": "Invalid Webhook Token", "code": 50027}
        return None
