"""One catalogue of messages per language, as data: events/messages/
holds every string a person reads; Python reads it (events/catalogue.py) and the server
serves it to the web app at /messages/, which reads it too (client/web/messages.js)."""

from __future__ import annotations

import enum
import json
import re
from pathlib import Path

import httpx
import pytest

from conteur.events import catalogue
from conteur.events.catalogue import LANGS, MESSAGES_DIR, fill, section, text
from conteur.server.web.app import Served, create_app

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "client" / "web"


def test_every_language_has_every_sentence_app_string_and_export_label():
    for name in ("sentences", "app", "export", "join"):
        assert set(section(name, "fr")) == set(section(name, "en")), name
    # the review page's words for statuses and reasons: French may name more of them
    assert set(section("review", "fr")) >= set(section("review", "en"))


def test_every_template_in_a_language_names_the_same_fields():
    fields = re.compile(r"\{(\w+)\}")
    for name in ("sentences", "app", "export", "review", "join"):
        en, fr = section(name, "en"), section(name, "fr")
        for key in en.keys() & fr.keys():
            assert set(fields.findall(en[key])) == set(fields.findall(fr[key])), (name, key)


def test_fill_writes_fields_as_javascript_does():
    assert fill("{a} and {b}{c}", {"a": 3, "b": None}) == "3 and "
    assert (text(True), text(2.0), text(2.5), text("x")) == ("true", "2", "2.5", "x")
    assert catalogue.catalogue("de") == catalogue.catalogue("en")  # unknown: English


def test_fill_substitutes_as_a_regular_expression_does_every_template_and_odd_braces():
    """``fill`` makes each template a ``str.format`` pattern once (the review page tells
    1,500 rows at first): the same text as substituting each ``{name}`` as JavaScript's
    ``replace(/\\{(\\w+)\\}/g, ...)`` does, braces that are not a field kept as written."""
    field = re.compile(r"\{(\w+)\}")
    templates = ["{x}}{", "{{x}}", "}{x}{", "{ {x} }", "{x}{z}{y}{}", "{1}{x2}", "{a b} {x}", "", "no field"]
    templates += [t for lang in LANGS for name in catalogue.catalogue(lang) for t in section(name, lang).values()]
    for template in templates:
        # every field given as text or a whole number (most sentences: ``format_map`` at
        # once), some not, one missing, one a number that is not exactly an int
        every = {name: f"<{name}{i}>" if i % 2 else i for i, name in enumerate(field.findall(template))}
        some = dict(every, **{name: v for name, v in zip(every, (None, True, 2.0, Flag.ON))})
        for fields in ({"x": 1.0, "y": None, "z": True, "1": "q", "x2": 3}, {}, {"x": "{y}", "y": "}"},
                       every, some, dict(list(every.items())[1:]), {"{x}": "no", **every}):
            assert fill(template, fields) == field.sub(lambda m: text(fields.get(m[1])), template), (template, fields)


class Flag(enum.IntEnum):
    ON = 1


def test_no_translation_table_is_left_in_code():
    # the French words of each former table, now only in events/messages/fr.json
    for path in [*WEB.glob("*.js"), ROOT / "events" / "narrate.py", ROOT / "server" / "audit" / "export.py",
                 ROOT / "server" / "web" / "http_join.py", ROOT / "server" / "web" / "door.py"]:
        code = path.read_text(encoding="utf-8")
        for word in ("Physique", "TEMPS MORT", "Chronique de séance", "Jeton du conteur", "Défis joués à la main",
                     "rejoindre la partie", "installez une fois"):
            assert word not in code, (path.name, word)


def test_the_server_serves_the_catalogues_beside_the_web_app(tmp_path):
    with Served(create_app(tmp_path / "c.db")) as served:
        for lang in LANGS:
            got = httpx.get(f"{served.url}/messages/{lang}.json")
            assert got.status_code == 200
            assert got.json() == json.loads((MESSAGES_DIR / f"{lang}.json").read_text(encoding="utf-8"))
        assert httpx.get(f"{served.url}/messages.js").status_code == 200
        assert httpx.get(f"{served.url}/messages/de.json").status_code == 404


@pytest.mark.parametrize("name", ["messages/en.json", "messages/fr.json", "messages.js"])
def test_the_service_worker_keeps_the_catalogues_for_offline_use(name):
    assert f'"{name}"' in (WEB / "sw.js").read_text()
