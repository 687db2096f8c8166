"""The messages of every side, one catalogue per language, as data.

``events/messages/<lang>.json`` holds every string a person reads, in sections: the
event ``sentences`` (``narrate.py`` here, ``client/web/narrate.js`` in the web app: the
same keys and templates), the web ``app``'s strings, the ``review`` page's, the
chronicle record's ``export`` labels, the printed ``join`` sheet's words and the
``refusals``: what each rule or code a refusal cites asks of the player, for screens in
another language than the server's English messages. The server serves the folder at
``/messages/`` to the web app (``client/web/messages.js``); Python reads it here. A template's ``{name}``
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


# template -> (a str.format pattern of positional fields, its fields, the same pattern with
# the fields named, or None when a field's name is not a keyword str.format takes)
_SPLIT: dict[str, tuple[str, tuple[str, ...], str | None]] = {}
# the kinds of value str.format writes as JavaScript's String() does ("" for None, "true"
# for True and "2" for 2.0 are ``text``'s): exactly these, not their subclasses
PLAIN = frozenset((str, int))

# A rule's number (MET-3, ACT-12) as the server's refusals cite it: the event keeps it (its
# message and its rule), a sentence a person reads goes without it. The web app strips
# them with the same pattern (client/web/messages.js).
_RULE = r"(?:MET|ACT|V5|TIME|FAIR)-\d+[a-z]?"
RULE_CODE = re.compile(rf"\s*\({_RULE}(?:,\s*{_RULE})*\)|\b{_RULE}:?\s?")


def without_rule_codes(text: str) -> str:
    return RULE_CODE.sub("", text).strip()


FIRST_RULE = re.compile(rf"\b{_RULE}")


def refusal_words(message: str, code: str, lang: str) -> str | None:
    """What a refusal asks of the player in ``lang``'s own words (the ``refusals``
    section): those of the first rule ``message`` cites, else of ``code``; None when
    neither has any. The reason is read from the message, as the web app reads it from a
    ``reject`` frame, which carries no rule: the phone's notice, the tablet's log and the
    review say the same words for the same refusal (client/web/messages.js)."""
    words = section("refusals", lang)
    cited = FIRST_RULE.search(message or "")
    return (cited and words.get(cited[0])) or words.get(code or "") or None


def refusal_reason(message: str, code: str, lang: str) -> str:
    """What a screen says of a refusal: in English the server's own message without its
    rule number, in another language ``refusal_words``; "" when neither says anything, for
    the caller's "no reason given" (client/web/messages.js's refusalReason)."""
    if lang == "en":
        return without_rule_codes(message)
    return refusal_words(message, code, lang) or ""


def _split(template: str) -> tuple[str, tuple[str, ...], str | None]:
    pieces = _FIELD.split(template)  # literal, field, literal, ..., literal: as ``sub`` finds them
    literals = [p.replace("{", "{{").replace("}", "}}") for p in pieces[0::2]]
    names = tuple(pieces[1::2])
    named = None
    if all(name.isidentifier() for name in names):  # "{1}" would be a positional field
        named = literals[0] + "".join(f"{{{name}}}{literal}" for name, literal in zip(names, literals[1:]))
    found = _SPLIT[template] = ("{}".join(literals), names, named)
    return found


def named_pattern(template: str) -> str | None:
    """The template with its fields named, for ``str.format_map`` when every field is
    given and ``PLAIN`` (None: no field, or one it cannot name): ``narrate.Teller``'s
    fast path, ``fill``'s first."""
    found = _SPLIT.get(template) or _split(template)
    return found[2] if found[1] else None


def fill(template: str, fields: dict) -> str:
    """``{name}`` replaced by the field as text, "" when it is missing or None, exactly
    as client/web/messages.js does (no format specs: callers pass text already shaped).
    Each template is made once into ``str.format`` patterns (the templates are the
    catalogues' few hundred): a regular expression's substitution per sentence would be most
    of telling the review page's first screen, its 1,500 rows and 400 briefs.
    Fields that are all text or whole numbers, none missing (most sentences), go
    straight through ``format_map``: picking and converting each field in Python would be
    most of what is left."""
    pattern, names, named = _SPLIT.get(template) or _split(template)
    if not names:
        return template
    if named is not None and PLAIN.issuperset(map(type, fields.values())):
        try:
            return named.format_map(fields)
        except KeyError:  # a field missing: written "" below
            pass
    get = fields.get
    return pattern.format(*[v if type(v) is str else text(v) for v in map(get, names)])


def text(value) -> str:
    """A value as JavaScript's String() writes it, for the fields templates carry."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
