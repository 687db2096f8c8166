"""The JSON Schema of a roster body (``POST /sessions/{session}/roster``), made from the
types the server converts it into, so that what the schema admits is what the server
takes and nothing else.

A roster differs from its types in two ways the schema says: a sheet may leave out its
``kind`` (it takes the roster's ``ruleset``, ``met`` when none is named), and ``[options]``
holds only ``OPTION_KEYS``, typed as ``open_session`` types them. One variant per ruleset
(``anyOf``) carries the first; the schema's own ``properties`` list the keys, any other
being refused."""

from __future__ import annotations

from typing import Any

import msgspec

from conteur.events import action, session, sheets, v5
from conteur.server.core.roster import OPTION_KEYS, Roster, RosterCharacter, RosterScene

RULESETS = {"met": sheets.MetSheet, "v5": sheets.V5Sheet, "action": sheets.ActionSheet}


# ``events/bounds.py`` says some bounds under ``extra`` for Litestar's msgspec plugin,
# which copies them into the OpenAPI document under these names
EXTRA = {"additional_properties": "additionalProperties", "items": "items"}


def _inline(node: Any, defs: dict) -> Any:
    """``node`` with every ``$ref`` replaced by its definition, the bounds said under
    ``extra`` in their place, and no titles or prose."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(defs[node["$ref"].rsplit("/", 1)[1]], defs)
        extra = {EXTRA[k]: v for k, v in node.get("extra", {}).items()}
        return {k: _inline(v, defs) for k, v in {**node, **extra}.items()
                if k not in ("title", "description", "discriminator", "extra")}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _schema(kind: Any) -> dict:
    made = msgspec.json.schema(kind)
    return _inline(made, made.get("$defs", {}))


def _settings(kind: type) -> dict:
    """A ruleset's settings table: the command's fields; its tag, if given, must be its own."""
    found = _schema(kind)
    found["required"] = [r for r in found.get("required", []) if r != "type"]
    if not found["required"]:
        del found["required"]
    return {"anyOf": [found, {"type": "null"}]}


def _sheet_of(ruleset: str) -> dict:
    """A character's sheet in a roster of ``ruleset``: any sheet naming its kind, or this
    ruleset's leaving it out."""
    own = _schema(RULESETS[ruleset])
    own["required"] = [r for r in own.get("required", []) if r != "kind"]
    if not own["required"]:
        del own["required"]
    return {"anyOf": [_schema(sheets.AnySheet), own, {"type": "null"}]}


def roster_body() -> dict:
    # the URL names the session: a body's own is refused unless it is the same
    whole = {k: v for k, v in _schema(Roster)["properties"].items() if k != "session"}
    opened = _schema(session.OpenSession)["properties"]
    options = {"type": "object", "properties": {k: opened[k] for k in OPTION_KEYS},
               "additionalProperties": False}
    scene = _schema(RosterScene)
    variants = []
    for ruleset in RULESETS:
        character = _schema(RosterCharacter)
        character["properties"]["sheet"] = _sheet_of(ruleset)
        variants.append({
            "type": "object",
            "properties": {**whole, "ruleset": {"enum": [ruleset]}, "options": options,
                           "v5": _settings(v5.ConfigureV5), "action": _settings(action.ConfigureAction),
                           "scenes": {**whole["scenes"], "items": scene},
                           "characters": {**whole["characters"], "items": character}},
            **({} if ruleset == "met" else {"required": ["ruleset"]}),
        })
    return {"anyOf": variants}
