"""Application commands as Discord keeps them: the bot's sync (bulk overwrite, create, edit, delete).

Definitions are checked with Discord's rules (``validation.check_command``) and keep their ids across
overwrites, as Discord's do. The test-side user actions look commands up here (``_find_command``) so that
every interaction a test sends matches what the bot really registered.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from . import validation as v
from .models import FakeGuild, snowflake


class CommandsMixin:
    """``FakeDiscord``'s command registry: ``commands`` maps a guild id (None: global) to the commands by id."""

    def registered_commands(self, guild_id: int | None = None) -> list[dict[str, Any]]:
        """Command definitions currently registered globally (None) or for a guild."""
        return list(self.commands.get(guild_id, {}).values())

    def _store_command(
        self, scope: int | None, definition: dict[str, Any], existing: dict[int, dict[str, Any]]
    ) -> dict[str, Any]:
        ctype = definition.get("type", 1)
        keep = next((c for c in existing.values() if c["name"] == definition["name"] and c["type"] == ctype), None)
        cmd_id = int(keep["id"]) if keep else snowflake()
        version = str(snowflake())
        stored = {
            "id": str(cmd_id),
            "application_id": str(self.app_id),
            "version": version,
            "type": ctype,
            "name": definition["name"],
            "description": definition.get("description", ""),
            "options": definition.get("options") or [],
            "default_member_permissions": definition.get("default_member_permissions"),
            "dm_permission": definition.get("dm_permission", True),
            "nsfw": definition.get("nsfw", False),
            "contexts": definition.get("contexts"),
            "integration_types": definition.get("integration_types") or [0],
            "name_localizations": definition.get("name_localizations"),
            "description_localizations": definition.get("description_localizations"),
        }
        if scope is not None:
            stored["guild_id"] = str(scope)
        return stored

    async def _commands(
        self, request: web.Request, *, body: Any, app: str, guild: str | None = None, **_: Any
    ) -> tuple[int, Any]:
        if int(app) != self.app_id:
            return 403, {"message": "Missing Access", "code": 50001}
        scope = int(guild) if guild else None
        if scope is not None and scope not in {g.id for g in self.guilds}:
            return 403, {"message": "Missing Access", "code": 50001}
        current = self.commands.setdefault(scope, {})
        if request.method == "GET":
            return 200, list(current.values())
        definitions = body if request.method == "PUT" else [body]
        if not isinstance(definitions, list):
            return 400, {
                "message": "Invalid Form Body",
                "code": 50035,
                "errors": {"_errors": [{"code": "BASE_TYPE_ARRAY", "message": "Must be an array"}]},
            }
        errors: dict[str, Any] = {}
        for i, definition in enumerate(definitions):
            err = v.check_command(definition)
            if err:
                errors[str(i)] = err
        names = [(d.get("type", 1), d.get("name")) for d in definitions]
        if len(names) != len(set(names)):
            errors.setdefault("_errors", []).append(
                {
                    "code": "APPLICATION_COMMANDS_DUPLICATE_NAME",
                    "message": "Application command names must be unique",
                }
            )
        if errors:
            return 400, {
                "message": "Invalid Form Body",
                "code": 50035,
                "errors": errors if request.method == "PUT" else errors["0"],
            }
        stored = [self._store_command(scope, d, current) for d in definitions]
        if request.method == "PUT":
            self.commands[scope] = {int(c["id"]): c for c in stored}
            return 200, stored
        current[int(stored[0]["id"])] = stored[0]
        return 201, stored[0]

    async def _command(
        self, request: web.Request, *, body: Any, app: str, cmd: str, guild: str | None = None, **_: Any
    ) -> tuple[int, Any]:
        scope = int(guild) if guild else None
        current = self.commands.setdefault(scope, {})
        found = current.get(int(cmd))
        if found is None or int(app) != self.app_id:
            return 404, {"message": "Unknown application command", "code": 10063}
        if request.method == "GET":
            return 200, found
        if request.method == "DELETE":
            del current[int(cmd)]
            return 204, None
        merged = {**found, **(body or {})}
        err = v.check_command(merged)
        if err:
            return 400, {"message": "Invalid Form Body", "code": 50035, "errors": err}
        current[int(cmd)] = self._store_command(scope, merged, current)
        return 200, current[int(cmd)]

    def _find_command(self, name: str, ctype: int, guild: FakeGuild | None) -> dict[str, Any]:
        scopes: list[int | None] = ([guild.id] if guild else []) + [None]
        for scope in scopes:
            for cmd in self.commands.get(scope, {}).values():
                if cmd["name"] == name and cmd["type"] == ctype:
                    return cmd
        raise LookupError(
            f"command {name!r} (type {ctype}) is not registered with the fake Discord; "
            f"registered: {[c['name'] for s in self.commands.values() for c in s.values()]}"
        )
