"""The messages of every side, one catalogue per language, as data (issue 16, item 3).

``events/messages/<lang>.json`` holds every string a person reads, in sections: the
event ``sentences`` (``narrate.py`` here, ``client/web/narrate.js`` in the web app: the
same keys and templates), the web ``app``'s strings, the ``review`` page's, the
chronicle record's ``export`` labels and the printed ``join`` sheet's words. The server serves the folder at ``/messages/`` to
the web app (``client/web/messages.js``); Python reads it here. A template's ``{name}``
is filled by ``fill``, the same way as the JavaScript's: a missing or None field is "".
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

LANGS = ("en", "fr")
MESSAGES_DIR = Path(__file__).resolve().parent / "messages"

_FIELD = re.compile(r"\{(\w+)\}")


@cache
def catalogue(lang: str) -> dict[str, dict[str, str]]:
    """Every section of one language; an unknown language is English."""
    lang = lang if lang in LANGS else "en"
    return json.loads((MESSAGES_DIR / f"{lang}.json").read_text(encoding="utf-8"))


def section(name: str, lang: str) -> dict[str, str]:
    return catalogue(lang)[name]


def fill(template: str, fields: dict) -> str:
    """``{name}`` replaced by the field as text, "" when it is missing or None, exactly
    as client/web/messages.js does (no format specs: callers pass text already shaped)."""
    return _FIELD.sub(lambda m: text(fields.get(m[1])), template)


def text(value) -> str:
    """A value as JavaScript's String() writes it, for the fields templates carry."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
