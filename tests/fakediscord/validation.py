"""Discord's documented request limits, checked the way the real API reports them.

Every check returns a nested ``errors`` dict shaped like Discord's "Invalid Form Body" (code 50035) answer,
e.g. ``{"content": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": "..."}]}}``, so a bot that
breaks a limit against the fake fails exactly as it would in production.
"""

from __future__ import annotations

import re
from typing import Any

CONTENT_MAX = 2000
EMBEDS_MAX = 10
EMBED_TITLE_MAX = 256
EMBED_DESCRIPTION_MAX = 4096
EMBED_FIELDS_MAX = 25
EMBED_FIELD_NAME_MAX = 256
EMBED_FIELD_VALUE_MAX = 1024
EMBED_FOOTER_MAX = 2048
EMBED_AUTHOR_MAX = 256
EMBED_TOTAL_MAX = 6000
CHOICES_MAX = 25
CHOICE_NAME_MAX = 100
CHOICE_VALUE_MAX = 100
ACTION_ROWS_MAX = 5
ROW_BUTTONS_MAX = 5
BUTTON_LABEL_MAX = 80
CUSTOM_ID_MAX = 100
SELECT_OPTIONS_MAX = 25
COMMAND_NAME_RE = re.compile(r"^[-_\w]{1,32}$")
EPHEMERAL = 1 << 6
SUPPRESS_EMBEDS = 1 << 2
IS_COMPONENTS_V2 = 1 << 15

Errors = dict[str, Any]


def _err(code: str, message: str) -> Errors:
    return {"_errors": [{"code": code, "message": message}]}


def _max_len(value: str, limit: int) -> Errors | None:
    if len(value) > limit:
        return _err("BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")
    return None


def _between(value: str, low: int, high: int) -> Errors | None:
    if not low <= len(value) <= high:
        return _err("BASE_TYPE_BAD_LENGTH", f"Must be between {low} and {high} in length.")
    return None


def _put(errors: Errors, path: list[str], err: Errors | None) -> None:
    """Store ``err`` at the nested ``path`` (Discord nests errors by JSON path; list indexes are strings)."""
    if err is None:
        return
    node = errors
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node.setdefault(path[-1], {}).setdefault("_errors", []).extend(err["_errors"])


def embed_size(embed: dict[str, Any]) -> int:
    """Characters that count towards the 6,000 per-message embed budget."""
    total = len(embed.get("title") or "") + len(embed.get("description") or "")
    total += len((embed.get("footer") or {}).get("text") or "")
    total += len((embed.get("author") or {}).get("name") or "")
    for field in embed.get("fields") or []:
        total += len(field.get("name") or "") + len(field.get("value") or "")
    return total


def check_embeds(embeds: list[dict[str, Any]]) -> Errors:
    """Limits on the ``embeds`` array: count, per-field lengths and the 6,000-character total."""
    errors: Errors = {}
    if len(embeds) > EMBEDS_MAX:
        _put(errors, ["embeds"], _max_len("x" * len(embeds), EMBEDS_MAX))
        return errors
    total = 0
    for i, embed in enumerate(embeds):
        base = ["embeds", str(i)]
        if embed.get("title") is not None:
            _put(errors, [*base, "title"], _max_len(embed["title"], EMBED_TITLE_MAX))
        if embed.get("description") is not None:
            _put(errors, [*base, "description"], _max_len(embed["description"], EMBED_DESCRIPTION_MAX))
        footer = embed.get("footer") or {}
        if footer.get("text") is not None:
            _put(errors, [*base, "footer", "text"], _max_len(footer["text"], EMBED_FOOTER_MAX))
        author = embed.get("author") or {}
        if author.get("name") is not None:
            _put(errors, [*base, "author", "name"], _max_len(author["name"], EMBED_AUTHOR_MAX))
        fields = embed.get("fields") or []
        if len(fields) > EMBED_FIELDS_MAX:
            _put(errors, [*base, "fields"], _max_len("x" * len(fields), EMBED_FIELDS_MAX))
        for j, field in enumerate(fields):
            fbase = [*base, "fields", str(j)]
            _put(errors, [*fbase, "name"], _between(field.get("name") or "", 1, EMBED_FIELD_NAME_MAX))
            _put(errors, [*fbase, "value"], _between(field.get("value") or "", 1, EMBED_FIELD_VALUE_MAX))
        total += embed_size(embed)
    if total > EMBED_TOTAL_MAX and not errors:
        _put(errors, ["embeds"], _err("MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size of 6000"))
    return errors


def _check_component(comp: dict[str, Any], path: list[str], errors: Errors, seen: set[str]) -> None:
    ctype = comp.get("type")
    custom_id = comp.get("custom_id")
    if custom_id is not None:
        _put(errors, [*path, "custom_id"], _between(custom_id, 1, CUSTOM_ID_MAX))
        if custom_id in seen:
            _put(
                errors,
                [*path, "custom_id"],
                _err("COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated"),
            )
        seen.add(custom_id)
    if ctype == 2:  # button
        if comp.get("label") is not None:
            _put(errors, [*path, "label"], _max_len(comp["label"], BUTTON_LABEL_MAX))
        style = comp.get("style")
        if style == 5 and not comp.get("url"):
            _put(errors, [*path, "url"], _err("BASE_TYPE_REQUIRED", "This field is required"))
        if style in (1, 2, 3, 4) and custom_id is None:
            _put(errors, [*path, "custom_id"], _err("BASE_TYPE_REQUIRED", "This field is required"))
    elif ctype == 3:  # string select
        options = comp.get("options") or []
        if len(options) > SELECT_OPTIONS_MAX:
            _put(errors, [*path, "options"], _max_len("x" * len(options), SELECT_OPTIONS_MAX))
        for k, opt in enumerate(options):
            _put(errors, [*path, "options", str(k), "label"], _between(opt.get("label") or "", 1, 100))
            _put(errors, [*path, "options", str(k), "value"], _between(opt.get("value") or "", 1, 100))
    for k, child in enumerate(comp.get("components") or []):
        _check_component(child, [*path, "components", str(k)], errors, seen)


def check_components(components: list[dict[str, Any]], flags: int = 0) -> Errors:
    """Action-row layout limits (classic components) and custom-id rules (all components)."""
    errors: Errors = {}
    seen: set[str] = set()
    if not flags & IS_COMPONENTS_V2:
        if len(components) > ACTION_ROWS_MAX:
            _put(errors, ["components"], _max_len("x" * len(components), ACTION_ROWS_MAX))
            return errors
        for i, row in enumerate(components):
            if row.get("type") != 1:
                _put(
                    errors,
                    ["components", str(i), "type"],
                    _err("UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).'),
                )
                continue
            children = row.get("components") or []
            if not children:
                _put(errors, ["components", str(i), "components"], _between("", 1, ROW_BUTTONS_MAX))
            buttons = [c for c in children if c.get("type") == 2]
            selects = [c for c in children if c.get("type") in (3, 5, 6, 7, 8)]
            if len(buttons) > ROW_BUTTONS_MAX:
                _put(
                    errors,
                    ["components", str(i), "components"],
                    _max_len("x" * len(buttons), ROW_BUTTONS_MAX),
                )
            if selects and len(children) > 1:
                _put(
                    errors,
                    ["components", str(i), "components"],
                    _err("COMPONENT_LAYOUT_WIDTH_EXCEEDED", "The specified component exceeds the maximum width"),
                )
    for i, comp in enumerate(components):
        _check_component(comp, ["components", str(i)], errors, seen)
    return errors


def check_allowed_mentions(allowed: Any) -> Errors:
    errors: Errors = {}
    if allowed is None:
        return errors
    if not isinstance(allowed, dict):
        _put(
            errors,
            ["allowed_mentions"],
            _err("MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType"),
        )
        return errors
    for i, item in enumerate(allowed.get("parse") or []):
        if item not in ("users", "roles", "everyone"):
            _put(
                errors,
                ["allowed_mentions", "parse", str(i)],
                _err("ENUM_TYPE_COERCE", f'Value "{item}" is not a valid enum value.'),
            )
    return errors


def check_message(data: dict[str, Any], *, require_body: bool = True) -> tuple[int, Errors] | None:
    """Validate a message body (create/edit/callback data). Returns (json code, errors) or None if valid."""
    errors: Errors = {}
    content = data.get("content")
    if content is not None:
        if not isinstance(content, str):
            _put(errors, ["content"], _err("BASE_TYPE_STRING", "Must be a string."))
        else:
            _put(errors, ["content"], _max_len(content, CONTENT_MAX))
    flags = int(data.get("flags") or 0)
    errors.update(check_embeds(data.get("embeds") or []))
    errors.update(check_components(data.get("components") or [], flags))
    errors.update(check_allowed_mentions(data.get("allowed_mentions")))
    if errors:
        return 50035, errors
    if require_body and not (
        content
        or data.get("embeds")
        or data.get("components")
        or data.get("attachments")
        or data.get("poll")
        or data.get("sticker_ids")
    ):
        return 50006, {}
    return None


def check_choices(choices: Any) -> Errors:
    errors: Errors = {}
    if not isinstance(choices, list):
        _put(errors, ["choices"], _err("BASE_TYPE_REQUIRED", "This field is required"))
        return errors
    if len(choices) > CHOICES_MAX:
        _put(errors, ["choices"], _max_len("x" * len(choices), CHOICES_MAX))
        return errors
    for i, choice in enumerate(choices):
        _put(errors, ["choices", str(i), "name"], _between(str(choice.get("name") or ""), 1, CHOICE_NAME_MAX))
        value = choice.get("value")
        if isinstance(value, str):
            _put(errors, ["choices", str(i), "value"], _between(value, 1, CHOICE_VALUE_MAX))
    return errors


def check_command(cmd: dict[str, Any]) -> Errors:
    """The subset of application-command rules a bot can plausibly break."""
    errors: Errors = {}
    ctype = cmd.get("type", 1)
    name = cmd.get("name") or ""
    if ctype == 1:
        if not COMMAND_NAME_RE.match(name) or name != name.lower():
            _put(errors, ["name"], _err("APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid"))
        _put(errors, ["description"], _between(cmd.get("description") or "", 1, 100))
    else:
        _put(errors, ["name"], _between(name, 1, 32))
        if cmd.get("description"):
            _put(
                errors,
                ["description"],
                _err("APPLICATION_COMMAND_INVALID_DESCRIPTION", "Context menu commands cannot have description"),
            )
    _check_options(cmd.get("options") or [], ["options"], errors)
    return errors


def _check_options(options: list[dict[str, Any]], path: list[str], errors: Errors) -> None:
    if len(options) > 25:
        _put(errors, path, _max_len("x" * len(options), 25))
    seen_optional = False
    for i, opt in enumerate(options):
        opath = [*path, str(i)]
        name = opt.get("name") or ""
        if not COMMAND_NAME_RE.match(name) or name != name.lower():
            _put(errors, [*opath, "name"], _err("APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid"))
        _put(errors, [*opath, "description"], _between(opt.get("description") or "", 1, 100))
        if opt.get("type") in (1, 2):
            _check_options(opt.get("options") or [], [*opath, "options"], errors)
            continue
        if opt.get("required"):
            if seen_optional:
                _put(
                    errors,
                    [*opath, "required"],
                    _err(
                        "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                        "Required options must be placed before non-required options",
                    ),
                )
        else:
            seen_optional = True
        if opt.get("autocomplete") and opt.get("choices"):
            _put(
                errors,
                [*opath, "autocomplete"],
                _err("AUTOCOMPLETE_AND_CHOICES_INVALID", "Autocomplete cannot be set with choices"),
            )
        if opt.get("choices"):
            _merge(errors, opath, check_choices(opt["choices"]))


def _merge(errors: Errors, path: list[str], sub: Errors) -> None:
    """Graft a nested errors dict produced for a sub-object at ``path``."""
    if not sub:
        return
    node = errors
    for key in path:
        node = node.setdefault(key, {})
    for key, value in sub.items():
        node.setdefault(key, {}).update(value)


def mentions_that_ping(content: str, allowed: dict[str, Any] | None) -> dict[str, Any]:
    """Who would actually be notified by ``content`` under ``allowed_mentions`` (Discord's semantics).

    Without allowed_mentions every mention in the content pings; with it, only the parsed types or the
    explicitly listed ids do. Embeds never ping, so only content is considered.
    """
    parse = None if allowed is None else set(allowed.get("parse") or [])
    listed_users = {int(x) for x in (allowed or {}).get("users") or []}
    listed_roles = {int(x) for x in (allowed or {}).get("roles") or []}
    users = [int(m) for m in re.findall(r"<@!?(\d+)>", content)]
    roles = [int(m) for m in re.findall(r"<@&(\d+)>", content)]
    everyone = bool(re.search(r"@(everyone|here)", content))
    if parse is None:
        return {"everyone": everyone, "users": users, "roles": roles}
    return {
        "everyone": everyone and "everyone" in parse,
        "users": [u for u in users if "users" in parse or u in listed_users],
        "roles": [r for r in roles if "roles" in parse or r in listed_roles],
    }


MODAL_TITLE_MAX = 45
MODAL_COMPONENTS_MAX = 5
LABEL_TEXT_MAX = 45
LABEL_DESCRIPTION_MAX = 100
TEXT_INPUT_MAX = 4000
PLACEHOLDER_MAX = 100


def check_modal(data: dict[str, Any]) -> Errors:
    """A modal (interaction callback type 9): title, custom id, 1-5 labelled (or row-wrapped) text inputs."""
    errors: Errors = {}
    _put(errors, ["title"], _between(data.get("title") or "", 1, MODAL_TITLE_MAX))
    _put(errors, ["custom_id"], _between(data.get("custom_id") or "", 1, CUSTOM_ID_MAX))
    components = data.get("components") or []
    _put(errors, ["components"], _between("x" * len(components), 1, MODAL_COMPONENTS_MAX))
    seen: set[str] = set()
    for i, top in enumerate(components):
        path = ["components", str(i)]
        if top.get("type") == 18:  # label
            _put(errors, [*path, "label"], _between(top.get("label") or "", 1, LABEL_TEXT_MAX))
            if top.get("description") is not None:
                _put(errors, [*path, "description"], _max_len(top["description"], LABEL_DESCRIPTION_MAX))
            inputs = [(top.get("component") or {}, [*path, "component"])]
        elif top.get("type") == 1:  # legacy action row holding one text input
            inputs = [(c, [*path, "components", str(k)]) for k, c in enumerate(top.get("components") or [])]
        else:
            _put(errors, [*path, "type"], _err("UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1, 18).'))
            continue
        for comp, cpath in inputs:
            if comp.get("type") != 4:
                continue
            custom_id = comp.get("custom_id") or ""
            _put(errors, [*cpath, "custom_id"], _between(custom_id, 1, CUSTOM_ID_MAX))
            if custom_id in seen:
                _put(errors, [*cpath, "custom_id"], _err("COMPONENT_CUSTOM_ID_DUPLICATED", "Duplicated custom id"))
            seen.add(custom_id)
            if comp.get("style") not in (1, 2):
                _put(errors, [*cpath, "style"], _err("BASE_TYPE_CHOICES", "Value must be one of (1, 2)."))
            high = comp.get("max_length")
            if high is not None and not 1 <= int(high) <= TEXT_INPUT_MAX:
                _put(errors, [*cpath, "max_length"], _err("NUMBER_TYPE_MAX", f"Must be {TEXT_INPUT_MAX} or less."))
            if comp.get("value") is not None:
                _put(errors, [*cpath, "value"], _max_len(comp["value"], min(int(high or TEXT_INPUT_MAX),
                                                                              TEXT_INPUT_MAX)))  # fmt: skip
            if comp.get("placeholder") is not None:
                _put(errors, [*cpath, "placeholder"], _max_len(comp["placeholder"], PLACEHOLDER_MAX))
    return errors
