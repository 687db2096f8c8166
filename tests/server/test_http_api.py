"""The HTTP API on a real server: bearer tokens and roles, sessions, roster import, the
event and state queries in each caller's view, the join sheet, the web app mount."""

from __future__ import annotations

import random
import re

import httpx
import pytest

from conteur.server.cli.simulate import next_commands, setup_commands
from conteur.server.web.app import Served, create_app
from conteur.server.testing import Device, Venue

ROSTER = {
    "name": "Elysium",
    "ruleset": "met",
    "scenes": [{"id": "hall", "name": "Hall"}],
    "characters": [
        {"id": "anna", "name": "Anna", "player": "Alice", "scene": "hall",
         "sheet": {"physical": 6, "social": 3, "mental": 4, "merits": ["Lucky"]}},
        {"id": "bruno", "name": "Bruno", "player": "Bob", "scene": "hall",
         "sheet": {"physical": 5, "social": 5, "mental": 5}},
    ],
}


@pytest.fixture
def venue(tmp_path):
    with Venue(tmp_path / "chronicle.db") as v:
        yield v


def client(venue: Venue, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=venue.url, headers=headers, timeout=10)


@pytest.fixture
def night(venue):
    """A session made over HTTP from a roster: (storyteller client, imported tokens)."""
    st = client(venue, venue.token())
    assert st.post("/sessions", json={"session": "night", "name": "Elysium"}).json()["type"] == "ack"
    imported = st.post("/sessions/night/roster", json=ROSTER)
    assert imported.status_code == 200, imported.text
    return st, imported.json()


def player(venue, imported, character: str) -> httpx.Client:
    token = next(p["token"] for p in imported["players"] if p["character"] == character)
    return client(venue, token)


def test_health_needs_no_token(venue):
    body = client(venue, None).get("/health").json()
    assert body["status"] == "ok" and body["head"] == 0


def test_no_token_or_a_bad_one_is_401_and_a_player_on_a_storyteller_route_is_403(venue, night):
    _, imported = night
    assert client(venue, None).get("/sessions").status_code == 401
    assert client(venue, "nope").get("/sessions").status_code == 401
    anna = player(venue, imported, "anna")
    assert anna.post("/sessions", json={"session": "x"}).status_code == 403
    assert anna.post("/sessions/night/roster", json=ROSTER).status_code == 403
    assert anna.get("/sessions/other/events").status_code == 403  # bound to "night"


def test_creating_a_session_is_idempotent_and_opening_it_twice_is_refused(venue, night):
    st, _ = night
    first = st.get("/sessions/night/events").json()[0]
    again = st.post("/sessions", json={"session": "night"}).json()  # a retried POST
    assert again == {"type": "ack", "id": "create:night", "seqs": [first["seq"]]}
    twice = st.post("/sessions/night/commands", json={"id": "o2", "command": {"type": "open_session"}}).json()
    assert twice["type"] == "reject" and twice["code"] == "rule" and "already open" in twice["message"]


def test_roster_import_returns_join_tokens_that_open_the_websocket(venue, night):
    st, imported = night
    assert [p["character"] for p in imported["players"]] == ["anna", "bruno"]
    assert imported["observer"] and imported["rejected"] == []
    listed = st.get("/sessions").json()
    assert listed[0]["session"] == "night" and listed[0]["characters"] == 2
    me = player(venue, imported, "anna").get("/me").json()
    assert me == {"role": "player", "character": "anna", "session": "night", "name": "Alice"}
    again = st.post("/sessions/night/roster", json=ROSTER).json()  # nothing added twice
    assert st.get("/sessions").json()[0]["head"] == listed[0]["head"]
    assert again["players"][0]["token"] != imported["players"][0]["token"]


async def test_a_roster_token_says_hello(venue, night):
    _, imported = night
    token = imported["players"][0]["token"]
    async with Device(venue.ws_url, token, "") as anna:
        assert anna.welcome["viewer"]["character"] == "anna"
        assert "session.character_added" in anna.types()


def test_an_invalid_roster_is_a_400_naming_the_problem(venue, night):
    st, _ = night
    bad = st.post("/sessions/night/roster", json={"characters": [{"id": "x", "sheet": {"physical": "lots"}}]})
    assert bad.status_code == 400 and "physical" in bad.text


@pytest.mark.parametrize("body, named", [
    ({"characters": {}}, "characters"),  # an object where the list goes
    ({"characters": [{"id": ""}]}, "id"),  # no token can be made for no one
    ({"scenes": [{"id": ""}]}, "id"),
    ({"session": "another"}, "session"),  # the URL names the session
    ({"options": {"turn_seconds": 4.5}}, "turn_seconds"),
])
def test_a_roster_the_schema_refuses_is_a_400_naming_the_field_and_nothing_is_written(venue, night, body, named):
    st, _ = night
    before = st.get("/sessions/night/events").json()
    bad = st.post("/sessions/night/roster", json=body)
    assert bad.status_code == 400 and named in bad.text, bad.text
    assert st.get("/sessions/night/events").json() == before


def test_a_roster_with_the_urls_session_and_a_whole_number_written_as_a_float_is_taken(venue, night):
    st, _ = night
    taken = st.post("/sessions/later/roster", json={"session": "later", "options": {"turn_seconds": 6.0}})
    assert taken.status_code == 200, taken.text
    assert st.get("/sessions/later/state").json()["session"]["turn_seconds"] == 6


def test_events_are_in_the_callers_view(venue, night):
    st, imported = night
    everything = st.get("/sessions/night/events").json()
    mine = player(venue, imported, "anna").get("/sessions/night/events").json()
    assert [e["seq"] for e in everything] == [e["seq"] for e in mine]  # same events, other forms
    sheets = {e["event"]["character"]: e["event"]["sheet"] for e in mine
              if e["event"]["type"] == "session.character_added"}
    assert sheets["anna"]["physical"] == 6 and sheets["bruno"] is None
    wall = client(venue, imported["observer"]).get("/sessions/night/events").json()
    assert all(e["event"].get("sheet") is None for e in wall)
    page = st.get("/sessions/night/events", params={"after": everything[1]["seq"], "limit": 2}).json()
    assert [e["seq"] for e in page] == [e["seq"] for e in everything[2:4]]


def test_state_is_true_for_the_storyteller_and_folded_from_its_view_for_a_player(venue, night):
    st, imported = night
    true = st.get("/sessions/night/state").json()
    assert true["session"]["characters"]["bruno"]["sheet"]["physical"] == 5
    anna = player(venue, imported, "anna").get("/sessions/night/state").json()
    assert anna["session"]["characters"]["anna"]["sheet"]["physical"] == 6
    assert anna["session"]["characters"]["bruno"]["sheet"] is None
    first = st.get("/sessions/night/events").json()[0]["seq"]
    early = st.get("/sessions/night/state", params={"at": first}).json()
    assert early["session"]["status"] == "open" and early["session"]["characters"] == {}


def test_state_leaves_finished_challenges_to_its_pages_and_at_seq_answers_the_whole_state(venue):
    """The head's state carries the live state, the count of finished challenges
    and the last few; ``/state/done`` pages through all of them, the same as the whole
    state at that seq holds, in each caller's own view; bad paging is a 400 naming it."""
    rng = random.Random("state-done")
    chronicle = venue.runtime.chronicle
    for actor, command in setup_commands(rng, "met"):
        chronicle.submit("long", command, actor).result()
    for _ in range(300):
        for actor, command in next_commands(rng, "met", chronicle.state("long")):
            chronicle.submit("long", command, actor).result()
    st = client(venue, venue.token())
    anna_id = sorted(chronicle.state("long").session.characters)[0]
    minted = st.post("/sessions/long/tokens", json={"role": "player", "character": anna_id})
    for who in (st, client(venue, minted.json()["token"])):
        live = who.get("/sessions/long/state").json()
        whole = who.get("/sessions/long/state", params={"at": live["head"]}).json()
        everything = sorted((c for page in whole["met"]["done"] for c in page.values()),
                            key=lambda c: int(c["id"][1:]))
        assert live["met"]["done"] == [] and "finished" not in whole
        assert live["finished"] == {"count": len(everything), "recent": everything[-16:]}
        assert len(everything) > 16, "the night should have finished more than the last few"
        assert {k: v for k, v in live.items() if k not in ("met", "finished")} == \
            {k: v for k, v in whole.items() if k != "met"}
        pages, after = [], 0
        while page := who.get("/sessions/long/state/done", params={"after": after, "limit": 10}).json()["challenges"]:
            pages += page
            after = int(page[-1]["id"][1:])
        assert pages == everything
        first = who.get("/sessions/long/state/done").json()
        assert first == {"head": live["head"], "count": len(everything), "challenges": everything}
    for bad in ({"limit": 0}, {"limit": 1001}, {"after": -1}, {"after": "c3"}):
        answer = st.get("/sessions/long/state/done", params=bad)
        assert answer.status_code == 400 and next(iter(bad)) in answer.text, (bad, answer.text)


def test_commands_over_http_are_authorised_like_the_websocket(venue, night):
    _, imported = night
    anna = player(venue, imported, "anna")
    other = anna.post("/sessions/night/commands",
                      json={"id": "h1", "command": {"type": "leave_scene", "character": "bruno"}}).json()
    assert other["type"] == "reject" and other["code"] == "forbidden"
    own = anna.post("/sessions/night/commands",
                    json={"id": "h2", "command": {"type": "leave_scene", "character": "anna"}}).json()
    assert own["type"] == "ack"
    retry = anna.post("/sessions/night/commands",
                      json={"id": "h2", "command": {"type": "leave_scene", "character": "anna"}}).json()
    assert retry == own


def test_the_join_sheet_has_one_qr_code_per_character_with_working_tokens(venue, night):
    st, imported = night
    page = st.post("/sessions/night/join-sheet", json={})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.text.count("<svg") == 2 and "Anna" in page.text and "Bruno" in page.text
    tokens = re.findall(r"#join=([A-Za-z0-9_-]+)&amp;session=night", page.text)
    assert len(tokens) == 2
    assert client(venue, tokens[0]).get("/me").json()["character"] == "anna"
    old = player(venue, imported, "anna")
    assert old.get("/me").status_code == 200  # a plain reprint keeps the old sheet working
    st.post("/sessions/night/join-sheet", json={"revoke_previous": True})
    assert old.get("/me").status_code == 401


def test_tokens_are_minted_for_a_known_character_or_a_wall_display(venue, night):
    st, _ = night
    wall = st.post("/sessions/night/tokens", json={"role": "observer"}).json()
    assert wall["role"] == "observer" and wall["link"].endswith(f"#join={wall['token']}&session=night")
    assert st.post("/sessions/night/tokens", json={"role": "player", "character": "zed"}).status_code == 404


def test_closing_a_session_reveals_its_seed(venue, night):
    st, _ = night
    assert st.post("/sessions/night/close").json()["type"] == "ack"
    closed = st.get("/sessions/night/events").json()[-1]["event"]
    assert closed["type"] == "session.closed" and len(closed["seed"]) == 64


def test_the_web_app_is_served_at_the_root_next_to_the_api(tmp_path):
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>conteur</title>")
    (web / "app.js").write_text("console.log('hi')")
    with Served(create_app(tmp_path / "c.db", web_dir=web)) as served:
        assert "conteur" in httpx.get(served.url + "/").text
        assert httpx.get(served.url + "/app.js").status_code == 200
        assert httpx.get(served.url + "/health").json()["status"] == "ok"
        assert httpx.get(served.url + "/schema/openapi.json").json()["info"]["title"] == "conteur"


def test_every_handler_declares_its_parameters_the_way_litestar_2_23_wants(tmp_path):
    """Inferred path/query parameters, inferred dependencies and unmarked bodies are
    deprecated (gone in Litestar 3): building the app and its schema warns about none."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        app = create_app(tmp_path / "c.db", web_dir=None)
        assert app.openapi_schema.paths
