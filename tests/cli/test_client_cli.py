"""``conteur client``: join by link, send a command, watch the log, print the state."""

from __future__ import annotations

import json

import msgspec
import pytest

from conteur.client.cli import describe, main, parse_link
from conteur.events import game
from conteur.events.narrate import Teller


def test_join_link_parts():
    assert parse_link("http://10.0.0.2:8000/#join=abc") == ("ws://10.0.0.2:8000/ws", "abc", "")
    assert parse_link("https://venue.lan/#join=t&session=s1") == ("wss://venue.lan/ws", "t", "s1")
    with pytest.raises(ValueError):
        parse_link("http://10.0.0.2:8000/")


def test_unknown_event_reads_as_key_values():
    assert describe({"type": "future.x", "a": 1}) == "future.x a=1"
    # the web log's sentences (events/narrate.py), with the names this viewer knows
    sealed = {"type": "met.bid_declared", "challenge": "c1", "round": 1, "character": "anna", "value": None}
    assert describe(sealed) == "c1: anna bid (sealed)."
    assert describe(sealed, Teller({"anna": "Anna"}, "fr")) == "c1 : Anna enchérit (scellé)."


def test_storyteller_joins_sends_watches_and_folds(server, setup, tmp_path, capsys):
    state = str(tmp_path / "st.sqlite")
    link = f"{server.url}/#join={setup.storyteller}"
    assert main(["join", link, "--state", state]) == 0
    assert "as storyteller" in capsys.readouterr().out
    assert main(["send", '{"type": "freeze", "scope": "session"}', "--state", state]) == 0
    assert capsys.readouterr().out.startswith("ack ")
    # TIME-5: a second freeze is refused with the rule's reason, exit 1
    assert main(["send", '{"type": "freeze", "scope": "session"}', "--state", state]) == 1
    assert "TIME-5" in capsys.readouterr().out
    assert main(["send", '{"type": "no_such_command"}', "--state", state]) == 1
    capsys.readouterr()
    assert main(["watch", "--after", "5", "--limit", "2", "--state", state]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("#6") and "entered" in lines[0]
    assert "TIME OUT" in lines[1]
    assert main(["watch", "--after", "6", "--limit", "1", "--lang", "fr", "--state", state]) == 0
    assert "TEMPS MORT" in capsys.readouterr().out
    assert main(["state", "--state", state]) == 0
    folded = json.loads(capsys.readouterr().out)
    assert folded["session"]["frozen"] is True
    server_state = json.loads(msgspec.json.encode(server.runtime.chronicle.state(setup.session), enc_hook=game.enc_hook))
    assert {k: v for k, v in folded.items() if k != "head"} == {k: v for k, v in server_state.items() if k != "head"}


def test_bad_token_exits_2(server, tmp_path, capsys):
    assert main(["join", f"{server.url}/#join=nope", "--state", str(tmp_path / "x.sqlite")]) == 2
    assert "unauthorized" in capsys.readouterr().err


def test_plugs_into_the_conteur_command(server, setup, tmp_path, capsys):
    import argparse

    from conteur.client.cli import add_command

    parser = argparse.ArgumentParser(prog="conteur")
    add_command(parser.add_subparsers(dest="command", required=True))
    state = str(tmp_path / "st.sqlite")
    args = parser.parse_args(["client", "join", f"{server.url}/#join={setup.storyteller}", "--state", state])
    assert args.func(args) == 0
    args = parser.parse_args(["client", "watch", "--limit", "1", "--state", state])
    assert args.func(args) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("#1 ")
