"""A screen speaks the reader's language: no rule number (MET-3) and no internal key
(overbid_failed) in any message of any language, and every outcome the Mind's Eye Theatre
rules write (how a round was won, why a round started again, why a challenge ended, a
challenge's status) has its words on the phone's feed, the tablet's log and the review.
Refusals cite rules for the record: what a person reads of them goes without the number,
in Python and in the web app alike; a refused command is named in words on the tablet's log
and the review, whatever command it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from conteur.events import game
from conteur.events.catalogue import LANGS, section, without_rule_codes
from conteur.events.game import CommandRejected
from conteur.events.narrate import Teller, sentence
from tests.support.node_support import run_web_module

ROOT = Path(__file__).resolve().parents[2]
MET = (ROOT / "events" / "met.py").read_text()
SECTIONS = ("sentences", "app", "review", "export", "join", "refusals")

RULE_NUMBER = re.compile(r"\b(?:MET|ACT|V5|TIME|FAIR)-\d+")
KEY = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b")  # snake_case: a code, not a word


def readable(text: str) -> str:
    """What a reader sees of a message: not its {fields}, its markup, what a <code> holds
    (a command line), nor an address or a file name."""
    text = re.sub(r"<code>.*?</code>", "", text, flags=re.S)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\{\w+\}", "", text)
    return re.sub(r"https?://\S+|\S+\.(?:sh|md|crt|json|db)\b", "", text)


def outcome_kinds() -> dict[str, set[str]]:
    """Every value the rules give a round's ``by``, a round's or a challenge's ``reason``
    and a challenge's ``status``: the literals events/met.py writes and the ones its fields
    name in their comments."""
    reasons = set(re.findall(r"\breason\s*=\s*(?:e\.reason or )?\"(\w+)\"", MET))
    reasons |= set(re.findall(r"\breason = \"(\w+)\" if .* else \"(\w+)\"", MET)[0])
    bys = set(re.findall(r"\bby\s*=\s*\"(\w+)\"", MET)) | set(re.findall(r"_won\([^)]*\"(\w+)\"", MET))
    for field, into in (("by", bys), ("reason", reasons)):
        for listed in re.findall(rf"^\s+{field}: str(?: = \"\")?\s+#\s*([a-z_ |]+)$", MET, re.M):
            into |= {w.strip() for w in listed.split("|") if w.strip()}
    statuses = set(re.search(r"status: str = \"throwing\"\s+#\s*([a-z_ |]+)", MET)[1].replace(" ", "").split("|"))
    return {"by": bys, "reason": reasons, "status": statuses}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", SECTIONS)
def test_no_message_shows_a_rule_number_or_an_internal_key(name, lang):
    bad = {key: text for key, text in section(name, lang).items()
           if RULE_NUMBER.search(readable(text)) or KEY.search(readable(text))}
    assert bad == {}


def test_the_outcome_kinds_are_found():
    kinds = outcome_kinds()
    # a sample the rules surely write: the scan of events/met.py still reads them
    assert {"throw", "bid", "tie_debt", "zero_traits"} <= kinds["by"]
    assert {"overbid_failed", "window_closed", "timeout", "accepted", "equal_bids", "next_test", "overruled"} <= kinds["reason"]
    assert {"throwing", "window", "resolved", "cancelled"} <= kinds["status"]


@pytest.mark.parametrize("lang", LANGS)
def test_every_outcome_kind_has_words_in_the_feed_the_log_and_the_review(lang):
    kinds = outcome_kinds()
    sentences, review = section("sentences", lang), section("review", lang)
    told = {f"r_{k}" for k in kinds["by"] | kinds["reason"]} - {"r_cancelled"}  # a cancel has its own sentence
    missing = sorted(k for k in told if k not in sentences)
    assert missing == [], f"{lang}: the feed and the log would show the code itself"
    # the review's challenge page: a status and, once ended, why
    shown = {f"s_{k}" for k in kinds["status"]} | {f"r_{k}" for k in kinds["reason"]
                                                   if k not in ("equal_bids", "next_test", "retest", "overbid")}
    missing = sorted(k for k in shown if k not in review)
    assert missing == [], f"{lang}: the review would show the code itself"
    for key in told:
        assert not KEY.search(sentences[key]), (key, sentences[key])
    for key in shown:
        assert not KEY.search(review[key]), (key, review[key])


@pytest.mark.parametrize(("said", "read"), [
    ("the initiator declares its traits first (MET-3)", "the initiator declares its traits first"),
    ("simultaneous actions (ACT-8, ACT-10) wait", "simultaneous actions wait"),
    ("ACT-12: more PS wins", "more PS wins"),
    ("Time Out: the window waits (TIME-5, MET-16)", "Time Out: the window waits"),
    ("UTF-8 and Wi-Fi are words", "UTF-8 and Wi-Fi are words"),
])
def test_a_refusal_is_read_without_its_rule_number_in_python_and_in_the_web_app(said, read):
    assert without_rule_codes(said) == read
    assert json.loads(run_web_module("messages.js", f"withoutRuleCodes({json.dumps(said)})")) == read


UNKNOWN = "summon_familiar"  # a newer server's command, which this one does not know


def refusals() -> list[CommandRejected]:
    return [CommandRejected(command_type=tag, code="rule", message="not now (MET-16)", character="anna")
            for tag in sorted(game.COMMAND_BY_TAG) + [UNKNOWN]]


@pytest.mark.parametrize("lang", LANGS)
def test_a_refused_command_is_named_in_words_on_the_tablets_log_and_the_review(lang):
    sentences = section("sentences", lang)
    said = [sentence(e, Teller({"anna": "Anna"}, lang)) for e in refusals()]
    for event, text in zip(refusals(), said):
        tag = event.command_type
        assert not KEY.search(readable(text)) and not RULE_NUMBER.search(text), (tag, text)
        if tag == UNKNOWN:
            assert tag not in text and text.startswith("Anna"), text
        else:  # its name, in this language: not its type, nor another language's name
            assert sentences.get(f"cmd_{tag}") and sentences[f"cmd_{tag}"] in text, (tag, text)
    # the tablet's log (client/web/narrate.js) says each word for word the same
    events = json.dumps([msgspec.to_builtins(e) | {"type": "command_rejected"} for e in refusals()])
    told = run_web_module("narrate.js", f"{events}.map(teller({{ characters: {{ anna: {{ name: 'Anna' }} }}, scenes: {{}} }}, {json.dumps(lang)}))",
                          names="teller")
    assert json.loads(told) == said
