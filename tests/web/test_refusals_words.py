"""A refused command's reason in the reader's language: every rule a refusal cites and
every code it can carry has words in the ``refusals`` section of every catalogue, and a
French screen (the phone's notice, the tablet's log, the review) says those words rather
than the server's English message, in Python and in the web app alike.

The rules and codes are read from the deciders' source (``refuse(...)`` and
``RuleViolation(...)`` in events/), so a new refusal without words fails here."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import msgspec
import pytest

from conteur.events.catalogue import LANGS, refusal_reason, refusal_words, section, without_rule_codes
from conteur.events.game import CommandRejected
from conteur.events.narrate import Teller, sentence
from tests.support.node_support import run_web_module

ROOT = Path(__file__).resolve().parents[2]
RULE_NUMBER = re.compile(r"\b(?:MET|ACT|V5|TIME|FAIR)-\d+[a-z]?")
KEY = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b")
# codes the server's front gives a command it could not take: a reject frame's
# ``unavailable`` (retry), an error frame's that names the command it answers
FRONT_CODES = {"unavailable", "rate_limited", "too_large", "unknown_command"}
# the refusals whose rule or code is a variable: a helper that passes its caller's on
# (every caller's is a literal, read below), and ``refuse`` itself
PASSED_ON = {("desk.py", "_open_scene"), ("model.py", "refuse")}


def _literals(node: ast.AST | None) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.Constant)]
    return []


def deciders_refusals() -> tuple[set[str], set[str], set[tuple[str, str]]]:
    """The rule numbers (the rule argument, and the first one each message cites: what a
    screen reads the rule from), the codes, and where a rule or code is not a literal."""
    rules: set[str] = set()
    codes: set[str] = set()
    unread: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "events").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for call in ast.walk(function):
                if not isinstance(call, ast.Call):
                    continue
                name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
                if name not in ("refuse", "RuleViolation"):
                    continue
                keywords = {k.arg: k.value for k in call.keywords}
                positional = call.args + [None] * 3
                message = positional[0] if positional[0] is not None else keywords.get("message")
                if name == "refuse":
                    rule = positional[1] if positional[1] is not None else keywords.get("rule")
                    code = positional[2] if positional[2] is not None else keywords.get("code")
                else:
                    rule, code = keywords.get("rule"), keywords.get("code")
                cited = RULE_NUMBER.search(" ".join(_literals(message)))
                if cited:
                    rules.add(cited[0])
                for value, into in ((rule, rules), (code, codes)):
                    if value is None:
                        if into is codes:
                            codes.add("rule")  # the default
                    elif isinstance(value, ast.Constant):
                        if into is codes or RULE_NUMBER.fullmatch(value.value):
                            into.add(value.value)
                    else:
                        unread.add((path.name, function.name))
    return rules, codes, unread


def test_the_deciders_refusals_are_found():
    rules, codes, unread = deciders_refusals()
    # a sample the deciders surely refuse with: the scan still reads them
    assert {"MET-2", "MET-16", "TIME-5", "TIME-6", "ACT-12", "V5-9"} <= rules
    assert {"rule", "invalid", "forbidden", "not_found", "frozen", "out_of_game"} <= codes
    # a refusal whose rule or code is computed cannot be checked for words: only these
    assert unread == PASSED_ON


@pytest.mark.parametrize("lang", LANGS)
def test_every_rule_and_code_a_refusal_carries_has_plain_words(lang):
    rules, codes, _ = deciders_refusals()
    words = section("refusals", lang)
    missing = sorted(k for k in rules | codes | FRONT_CODES if not words.get(k, "").strip())
    assert missing == [], f"{lang}: a refusal citing these would fall back to no reason"
    bad = {k: v for k, v in words.items() if RULE_NUMBER.search(v) or KEY.search(v)}
    assert bad == {}
    assert set(words) == set(section("refusals", "en"))


MET_2 = "round 2 of challenge c1 takes no throw now (it is at round 3, bidding) (MET-2)"
UNCITED = "the session is frozen"  # a message citing no rule: its code's words


def rejected(message: str, code: str) -> CommandRejected:
    return CommandRejected(command_type="throw", code=code, message=message, character="anna", rule="MET-2")


def test_a_french_reader_gets_the_rules_words_else_the_codes_in_python():
    fr = section("refusals", "fr")
    assert refusal_words(MET_2, "rule", "fr") == fr["MET-2"]
    assert refusal_words(UNCITED, "frozen", "fr") == fr["frozen"]
    # the first rule cited wins over the code
    assert refusal_words("Time Out: the window waits (TIME-5, MET-16)", "frozen", "fr") == fr["TIME-5"]
    assert refusal_words("something new", "summoned", "fr") is None
    teller = Teller({"anna": "Anna"}, "fr")
    told = sentence(rejected(MET_2, "rule"), teller)
    assert fr["MET-2"] in told and "round" not in told, told
    assert fr["frozen"] in sentence(rejected(UNCITED, "frozen"), teller)
    # a code no catalogue knows (a newer server's): the reason is said to be unsaid
    assert section("sentences", "fr")["refused_unsaid"] in sentence(rejected("something new", "summoned"), teller)
    # English keeps the server's own message
    assert without_rule_codes(MET_2) in sentence(rejected(MET_2, "rule"), Teller({"anna": "Anna"}, "en"))


def test_a_french_reader_gets_the_rules_words_else_the_codes_in_the_web_app():
    fr = section("refusals", "fr")
    frames = [{"type": "reject", "id": "c1", "code": "rule", "message": MET_2},
              {"type": "reject", "id": "c2", "code": "frozen", "message": UNCITED}]
    # what the phone's and the tablet's notice says of a reject frame (client/web/ui.js refusal)
    said = json.loads(run_web_module(
        "messages.js", f"['fr', 'en'].map((lang) => {json.dumps(frames)}.map((f) => refusalReason(f, lang)))",
        names="refusalReason"))
    assert said == [[fr["MET-2"], fr["frozen"]], [without_rule_codes(MET_2), UNCITED]]
    assert said[0] == [refusal_reason(f["message"], f["code"], "fr") for f in frames]
    # the tablet's log says what the review says, in French and in English
    events = [rejected(MET_2, "rule"), rejected(UNCITED, "frozen"), rejected("something new", "summoned")]
    for lang in LANGS:
        wire = json.dumps([msgspec.to_builtins(e) | {"type": "command_rejected"} for e in events])
        told = json.loads(run_web_module(
            "narrate.js", f"{wire}.map(teller({{ characters: {{ anna: {{ name: 'Anna' }} }}, scenes: {{}} }}, {json.dumps(lang)}))",
            names="teller"))
        assert told == [sentence(e, Teller({"anna": "Anna"}, lang)) for e in events]
        if lang == "fr":
            assert fr["MET-2"] in told[0] and fr["frozen"] in told[1], told
