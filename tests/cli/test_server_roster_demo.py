"""``conteur init`` (a roster file) and ``conteur serve --demo`` (the demo chronicle), the
functions the CLI calls, on a real database."""

from __future__ import annotations

import io
import json
import re

import pytest

from conteur.server.core.auth import Tokens
from conteur.server.cli.demo import DEMO, announce, create_demo
from conteur.server.core.roster import RosterError, format_imported, init_from_roster, load_roster
from conteur.server.store.sqlite import SQLiteStore

TOML = """
session = "night-1"
name = "Elysium, first night"
ruleset = "met"

[options]
turn_seconds = 6
accept_timeout = 30

[[scenes]]
id = "elysium"
name = "Elysium"

[[characters]]
id = "anna"
name = "Anna Volkova"
player = "Alice"
scene = "elysium"
[characters.sheet]
physical = 6
social = 4
mental = 5
abilities = { Brawl = 2 }
merits = ["Lucky"]

[[characters]]
id = "iris"
name = "Iris"
[characters.sheet]
kind = "v5"
attributes = { wits = 3 }
"""


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "c.db")
    yield s
    s.close()


def test_init_from_a_toml_roster_creates_the_session_and_every_token(store, tmp_path):
    path = tmp_path / "roster.toml"
    path.write_text(TOML)
    imported = init_from_roster(store, path)
    state = store.load_state("night-1")
    assert state.session.status == "open" and state.session.turn_seconds == 6
    assert state.session.options.accept_timeout == 30
    assert state.session.characters["anna"].scene == "elysium"
    assert state.session.characters["anna"].sheet.abilities == {"Brawl": 2}
    assert state.session.characters["iris"].sheet.attributes == {"wits": 3}
    tokens = Tokens(store)
    assert tokens.check(imported.storyteller).role == "storyteller"
    assert tokens.check(imported.players[0].token).character == "anna"
    assert tokens.check(imported.observer).role == "observer"
    text = format_imported(imported, "http://10.0.0.2:8000")
    assert f"http://10.0.0.2:8000/#join={imported.players[0].token}&session=night-1" in text
    assert imported.storyteller in text
    stored = store._reader.execute("SELECT hash FROM tokens").fetchall()
    assert all(imported.storyteller not in row[0] for row in stored)  # hashed, never kept


def test_the_same_roster_as_json_gives_the_same_session(store, tmp_path):
    import tomllib

    path = tmp_path / "roster.json"
    path.write_text(json.dumps(tomllib.loads(TOML)))
    init_from_roster(store, path)
    again = init_from_roster(store, path)  # idempotent: nothing added twice
    assert again.rejected == ()
    assert len(store.read_after("night-1")) == 1 + 1 + 2 + 1  # open, scene, characters, join


@pytest.mark.parametrize("text, match", [
    ("characters = [{id = 'x', sheet = {physical = 'lots'}}]", "physical"),
    ("ruleset = 'chess'", "ruleset"),
    ("unknown = 1", "unknown"),
    ("this is not toml", r"roster.toml: Expected '='"),
])
def test_a_bad_roster_says_what_is_wrong(store, tmp_path, text, match):
    path = tmp_path / "roster.toml"
    path.write_text(text)
    with pytest.raises(RosterError, match=match):
        load_roster(path)


def test_the_demo_has_a_session_per_ruleset_with_characters(store):
    storyteller, imported = create_demo(store)
    assert sorted(store.sessions()) == sorted(r.session for r in DEMO)
    kinds = {}
    for item in imported:
        characters = store.load_state(item.session).session.characters
        assert len(characters) >= 2 and len(item.players) == len(characters)
        kinds[item.session] = {c.sheet.__struct_config__.tag for c in characters.values()}
    assert kinds == {"met-demo": {"met"}, "v5-demo": {"v5"}, "action-demo": {"action"}}
    assert Tokens(store).check(storyteller).role == "storyteller"


def test_serve_demo_prints_addresses_links_and_a_qr_code(store):
    out = io.StringIO()
    announce(store, "0.0.0.0", 8000, demo=True, out=out)
    text = out.getvalue()
    assert re.search(r"http://[0-9.]+:8000/", text)
    links = re.findall(r"/#join=([A-Za-z0-9_-]+)&session=([a-z0-9-]+)", text)
    assert {s for _, s in links} == {"met-demo", "v5-demo", "action-demo"}
    tokens = Tokens(store)
    assert all(tokens.check(t) is not None for t, _ in links)
    assert "█" in text  # the storyteller link as a terminal QR code
    heads = {s: len(store.read_after(s)) for s in store.sessions()}
    announce(store, "0.0.0.0", 8000, demo=True, out=io.StringIO())  # a second start
    assert {s: len(store.read_after(s)) for s in store.sessions()} == heads


def test_a_plain_serve_mints_a_storyteller_link_only_for_a_chronicle_without_one(store):
    first = io.StringIO()
    announce(store, "127.0.0.1", 9000, out=first)
    assert "http://127.0.0.1:9000/#join=" in first.getvalue()
    second = io.StringIO()
    announce(store, "127.0.0.1", 9000, out=second)
    assert "#join=" not in second.getvalue() and "conteur init" in second.getvalue()


async def test_conteur_serve_demo_in_its_own_process_is_playable_from_its_printed_links(tmp_path):
    """What a new user does: run the server, open two printed links, play."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    import httpx

    from conteur.server.testing import Device

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = (f"from conteur.server.cli.serve import run; run({str(tmp_path / 'demo.db')!r}, '127.0.0.1', {port}, "
            "demo=True)")
    proc = subprocess.Popen([sys.executable, "-u", "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=str(tmp_path),
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    try:
        lines = []
        while not any("Uvicorn running" in line or "Application startup complete" in line for line in lines):
            line = proc.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        text = "".join(lines)
        links = dict((s, t) for t, s in re.findall(r"Lucien\s+\S+#join=([\w-]+)&session=(met-demo)", text))
        storyteller = re.search(r"storyteller: \S+#join=([\w-]+)&session=met-demo", text).group(1)
        assert f"http://127.0.0.1:{port}/" in text and "█" in text
        assert httpx.get(f"http://127.0.0.1:{port}/health").json()["status"] == "ok"
        url = f"ws://127.0.0.1:{port}/ws"
        async with Device(url, links["met-demo"], "met-demo") as lucien, \
                Device(url, storyteller, "met-demo") as st:
            assert lucien.welcome["viewer"]["character"] == "lucien"
            ack = await lucien.command({"type": "challenge", "character": "lucien", "kind": "classic",
                                        "attribute": "physical", "defender": "mara"})
            assert ack["type"] == "ack"
            await st.wait_event("met.challenge_issued", initiator="lucien")
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_demo_leaves_a_real_chronicle_alone(store, tmp_path):
    path = tmp_path / "roster.toml"
    path.write_text(TOML)
    init_from_roster(store, path)
    out = io.StringIO()
    announce(store, "127.0.0.1", 8000, demo=True, out=out)
    assert store.sessions() == ["night-1"]
    assert "--demo ignored" in out.getvalue()


def test_join_links_use_the_public_url_when_one_is_given(store):
    out = io.StringIO()
    announce(store, "0.0.0.0", 8000, demo=True, out=out, public_url="https://conteur.lan/")
    links = re.findall(r"(\S+)/#join=", out.getvalue())
    assert links and set(links) == {"https://conteur.lan"}
