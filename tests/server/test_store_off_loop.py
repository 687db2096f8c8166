"""No store call of the serving path waits on the event loop (server/core/offload.py).

A store call made from the loop's own thread holds every socket, ping and request of the
process until the database answers: a stalled PostgreSQL froze whole servers so. The
real SQLite store is served here with each of its calls noted, with whether it came from
a running event loop; then a night's HTTP and websocket traffic goes through the real
server (every HTTP route a tablet or a phone uses, a device joining through the
channel, commands, a roster import, a join sheet, a revocation, the review and the
export), and a session the server no longer holds in memory (as a failed commit leaves
it) is looked at again. Not one of those calls may come from the loop.
"""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from bench.harness import prepare_venue
from conteur.server.core.auth import digest, grant_id
from conteur.server.store.sqlite import SQLiteStore
from tests.support.faults_support import toggle
from conteur.server.testing import Device
from conteur.server.web.app import Served, Settings, create_app

# what a store answers from memory, never waiting for its database: a command's append is
# queued to the writer's thread (``submit_on``), the store's trouble is what it last saw
NEVER_WAITS = {"submit", "submit_on", "trouble", "deadline", "snapshot_every", "follow"}


def on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class Watched:
    """The real store, each call that may wait noted when it comes from an event loop."""

    def __init__(self, store):
        self._store = store
        self.watching = False
        self.on_loop: list[str] = []
        self._lock = threading.Lock()

    def __getattr__(self, name):
        found = getattr(self._store, name)
        if not callable(found) or name in NEVER_WAITS:
            return found

        def call(*args, **kwargs):
            if self.watching and on_a_loop():
                with self._lock:
                    self.on_loop.append(name)
            return found(*args, **kwargs)
        return call


async def on_the_server(rt, fn, *args):
    """``fn(*args)`` called on the server's event loop, as its own code calls it."""
    async def call():
        return fn(*args)
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call(), rt.hub._loop))


ROSTER = {"name": "second", "ruleset": "met", "scenes": [{"id": "yard", "name": "Yard"}],
          "characters": [{"id": "cleo", "name": "Cleo", "scene": "yard",
                          "sheet": {"kind": "met", "physical": 5, "social": 4, "mental": 3}}]}


async def test_no_store_call_of_http_or_websocket_traffic_waits_on_the_event_loop(tmp_path):
    path = tmp_path / "chronicle.db"
    venue = prepare_venue(path, "hall", players=2)
    (character, token), (other, _) = venue.players
    store = Watched(SQLiteStore(path))
    try:
        with Served(create_app(store, settings=Settings(), web_dir=None)) as served:
            store.watching = True  # start-up (the states preloaded, the timers armed) aside
            rt = served.runtime
            st = {"Authorization": f"Bearer {venue.storyteller}"}
            async with httpx.AsyncClient(base_url=served.url, timeout=30) as http:
                async def ask(method: str, url: str, body=None, headers=st, ok=200):
                    answer = await http.request(method, url, headers=headers, json=body)
                    assert answer.status_code == ok, (method, url, answer.text)
                    return answer

                # a phone joining through the channel and keeping its own credential
                phone = Device(served.ws_url, token, "hall", device="phone", create=False, channel=True)
                await phone.connect()
                assert phone.welcome is not None, phone.frames
                assert (await phone.command(toggle(character, False)))["type"] == "ack"
                await phone.sync()
                tablet = Device(served.ws_url, venue.storyteller, "hall", device="tablet", create=False)
                await tablet.connect()
                # venue-wide: decided in every open session
                assert (await tablet.command({"type": "freeze", "scope": "venue"}))["type"] == "ack"
                assert (await tablet.command({"type": "resume", "scope": "venue"}))["type"] == "ack"
                await tablet.close()
                await ask("GET", "/me")
                await ask("GET", "/sessions")
                await ask("POST", "/sessions/", {"session": "annex", "name": "Annex"})
                for get in ("state", "events", "windows", "state/done", "devices", "review/first",
                            "review/verify", "export?format=md", "review/items", "review/fairness"):
                    await ask("GET", f"/sessions/hall/{get}")
                await ask("GET", "/sessions/hall/state?at=2")
                await ask("POST", "/sessions/hall/commands", {"id": "h1", "command": toggle(character, True)})
                minted = (await ask("POST", "/sessions/hall/tokens", {"role": "player", "character": character})).json()
                await ask("POST", "/sessions/hall/join-sheet", {"revoke_previous": True, "characters": [other]})
                await ask("GET", "/sessions/hall/devices")
                await ask("POST", f"/sessions/hall/devices/{grant_id(digest(minted['token']))}/revoke", {})
                await ask("GET", "/me", headers={"Authorization": f"Bearer {minted['token']}"}, ok=401)
                await ask("POST", "/sessions/second/roster", ROSTER)
                await ask("POST", "/channel", {"id": "0" * 12, "nonce": "A" * 43})
                # a session this process no longer holds (a failed commit forgets it): its
                # state is read again off the loop, by a request as by the window timers
                await on_the_server(rt, rt.chronicle.forget, "hall")
                await ask("GET", "/sessions")
                await on_the_server(rt, rt.chronicle.forget, "hall")
                await ask("GET", "/sessions/hall/windows")
                await on_the_server(rt, rt.chronicle.forget, "hall")
                await on_the_server(rt, rt.timers.check, "hall")
                assert (await phone.command(toggle(character, False)))["type"] == "ack"
                await phone.sync()
                await phone.close()
            store.watching = False
            assert store.on_loop == [], sorted(set(store.on_loop))
    finally:
        store._store.close()


async def test_no_store_call_waits_on_the_event_loop_while_two_processes_decide_one_session(pg_url, tmp_path):
    """Two server processes on one PostgreSQL store, a device on each, commands in one
    session: this process's appends come back stale (the other wrote first) and its
    state catches up from the store before deciding them again, off the loop too."""
    pytest.importorskip("psycopg")
    from conteur.server.store.postgres import PostgresStore
    from tests.support.pg_support import Serve

    venue = prepare_venue(pg_url, "hall", players=2)
    (here_character, here_token), (there_character, there_token) = venue.players
    store = Watched(PostgresStore(pg_url))
    try:
        with Serve(pg_url, tmp_path / "other.log") as other, \
                Served(create_app(store, settings=Settings(), web_dir=None)) as served:
            store.watching = True
            here = Device(served.ws_url, here_token, "hall", device="here", create=False)
            there = Device(other.ws_url, there_token, "hall", device="there", create=False)
            await here.connect()
            await there.connect()
            chronicle = served.runtime.chronicle
            sent = 0

            async def play(device: Device, character: str) -> None:
                nonlocal sent
                out = False
                # until an append here came back stale at least a few times (bounded)
                while chronicle.stale < 3 and sent < 4000:
                    sent += 1
                    command_id = f"{device.device}-{sent}"
                    answer = await device.command(toggle(character, out), id=command_id, timeout=30)
                    while answer["type"] == "reject" and answer["code"] == "unavailable":
                        answer = await device.command(toggle(character, out), id=command_id, timeout=30)
                    assert answer["type"] == "ack", answer
                    out = not out

            try:
                await asyncio.gather(play(here, here_character), play(there, there_character))
            finally:
                await here.close()
                await there.close()
            store.watching = False
            assert chronicle.stale >= 3, f"{sent} commands and no stale append here"
            assert store.on_loop == [], sorted(set(store.on_loop))
    finally:
        store._store.close()


async def test_a_safety_call_in_a_session_another_process_opened_is_read_off_the_event_loop(pg_url, tmp_path):
    """Another process opens a session (a roster imported there) after this one started,
    and a safety call is made in it: this process hears of it through the store's tail
    and loads that session's state to tell its storytellers (server/core/safety.py),
    reading the store off the loop. The window timers are off: they would load the
    session first, off the loop, on the tail's first row of it."""
    pytest.importorskip("psycopg")
    from conteur.server.store.postgres import PostgresStore
    from tests.support.pg_support import Serve

    venue = prepare_venue(pg_url, "hall", players=1)
    st = {"Authorization": f"Bearer {venue.storyteller}"}
    store = Watched(PostgresStore(pg_url))
    try:
        with Serve(pg_url, tmp_path / "other.log") as other, \
                Served(create_app(store, settings=Settings(window_timers=False), web_dir=None)) as served:
            store.watching = True
            tablet = Device(served.ws_url, venue.storyteller, "hall", device="tablet", create=False)
            await tablet.connect()
            try:
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{other.port}", timeout=30) as http:
                    answer = await http.post("/sessions/second/roster", headers=st, json=ROSTER)
                    assert answer.status_code == 200, answer.text
                    answer = await http.post("/sessions/second/tokens", headers=st,
                                             json={"role": "player", "character": "cleo"})
                    assert answer.status_code == 200, answer.text
                    cleo_token = answer.json()["token"]
                async with Device(other.ws_url, cleo_token, "second", device="cleo", create=False) as cleo:
                    assert (await cleo.command({"type": "call_storyteller", "character": "cleo",
                                                "kind": "safety"}, timeout=30))["type"] == "ack"
                told = await tablet.wait_for(lambda f: f["type"] == "venue_calls" and f["calls"], timeout=30)
                assert [c["session"] for c in told["calls"]] == ["second"]
            finally:
                await tablet.close()
            store.watching = False
            assert store.on_loop == [], sorted(set(store.on_loop))
    finally:
        store._store.close()


async def test_a_hole_in_the_seqs_of_one_process_is_read_off_the_event_loop(tmp_path):
    """One process, no tail: two commits' listeners may run in either order, and an event
    of a session nobody here decided (a roster imported by ``conteur`` beside it) reaches
    the hub only through the store. The hub reads the hole off the loop, then gives each
    device its session's events in seq order."""
    from conteur.events.session import SceneOpened
    from conteur.server.core.hub import Connection, Hub
    from conteur.server.core.service import Executed
    from conteur.server.store.interface import Outcome, Pending
    from conteur.events.model import Actor

    store = Watched(SQLiteStore(tmp_path / "c.db"))
    try:
        hub = Hub(store)
        hub.bind()
        got: list[str] = []

        async def send(frame: str) -> None:
            got.append(frame)

        phone = Connection(send, Actor(role="storyteller", name="st"), "night")
        hub.subscribe(phone)
        phone.start()
        phone.go_live(0)
        scenes = [SceneOpened(scene=f"s{n}", name=f"Scene {n}") for n in (1, 2, 3)]
        other = store.append_sync(Pending(session="other", events=scenes[:1])).seqs
        mine = store.append_sync(Pending(session="night", events=scenes[1:])).seqs
        store.watching = True
        hub.on_executed(Executed(session="night", outcome=Outcome(seqs=mine), events=tuple(zip(mine[1:], scenes[2:]))))
        hub.on_executed(Executed(session="night", outcome=Outcome(seqs=mine), events=tuple(zip(mine[:1], scenes[1:2]))))
        async with asyncio.timeout(10):
            while hub.delivered < mine[-1] or len(got) < 3:
                await asyncio.sleep(0.005)
        store.watching = False
        assert store.on_loop == [], sorted(set(store.on_loop))
        assert other == (1,) and [f'"seq":{s}' in frame for s, frame in zip(mine, got[1:])] == [True, True]
        hub.close()
        phone.stop()
    finally:
        store._store.close()


async def test_a_storyteller_greeted_while_a_session_trails_the_tail_reads_nothing_on_the_event_loop(
        pg_url, tmp_path):
    """Another process decides in a session this one holds: its tail notes that the
    session trails. A storyteller's socket going live in another session is told of the
    safety calls waiting across the venue (server/core/safety.py) from the states held,
    without catching the trailing one up on the loop (its next read does, off it)."""
    pytest.importorskip("psycopg")
    from conteur.server.store.postgres import PostgresStore
    from tests.support.pg_support import Serve

    venue = prepare_venue(pg_url, "hall", players=1)
    (character, token), = venue.players
    st = {"Authorization": f"Bearer {venue.storyteller}"}
    store = Watched(PostgresStore(pg_url))
    try:
        with Serve(pg_url, tmp_path / "other.log") as other, \
                Served(create_app(store, settings=Settings(window_timers=False), web_dir=None)) as served:
            chronicle = served.runtime.chronicle
            async with httpx.AsyncClient(base_url=served.url, timeout=30) as http:
                answer = await http.post("/sessions/", headers=st, json={"session": "annex", "name": "Annex"})
                assert answer.status_code == 200, answer.text
            assert chronicle.held("hall") is not None
            store.watching = True
            async with Device(other.ws_url, token, "hall", device="there", create=False) as there:
                assert (await there.command(toggle(character, False), timeout=30))["type"] == "ack"
            async with asyncio.timeout(30):
                while chronicle.held("hall") is not None:  # the tail brought the other's rows
                    await asyncio.sleep(0.01)
            tablet = Device(served.ws_url, venue.storyteller, "annex", device="tablet", create=False)
            await tablet.connect()
            assert tablet.welcome is not None, tablet.frames
            await tablet.close()
            store.watching = False
            assert store.on_loop == [], sorted(set(store.on_loop))
            # the trailing session is caught up at its next look, off the loop
            state = await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(chronicle.state_now("hall"), served.runtime.hub._loop))
            assert state.session.characters[character].out_of_game
    finally:
        store._store.close()


async def test_an_open_session_decided_again_after_another_process_wrote_reads_nothing_on_the_event_loop(
        pg_url, tmp_path):
    """MET-13's carry-over into a session being opened reads the other sessions' states.
    Another process wrote to that session first (a refused command, logged): this
    process's open comes back stale and is decided again, and what the carry-over reads
    for the second decision is read off the loop too, with the session's catch-up."""
    pytest.importorskip("psycopg")
    from conteur.events.model import STORYTELLER
    from conteur.events.session import OpenSession, OutOfGame
    from conteur.server.core.service import Chronicle
    from conteur.server.store.postgres import PostgresStore

    prepare_venue(pg_url, "hall", players=1)
    store = Watched(PostgresStore(pg_url))
    elsewhere = PostgresStore(pg_url)
    here, there = Chronicle(store), Chronicle(elsewhere)
    here.serve_on(asyncio.get_running_loop())  # as the server's lifespan does
    try:
        assert (await here.state_now("fresh")).session.status == "pending"
        refused = await asyncio.to_thread(there.execute_sync, "fresh", OutOfGame(character="nobody"), STORYTELLER)
        assert refused.outcome.rejected
        store.watching = True
        opened = await here.execute("fresh", OpenSession(name="Fresh"), STORYTELLER, device="tablet",
                                    command_id="open-fresh")
        store.watching = False
        assert not opened.outcome.rejected and here.stale == 1
        assert store.on_loop == [], sorted(set(store.on_loop))
        assert (await here.state_now("fresh")).session.status == "open"
    finally:
        here.work.close()
        there.work.close()
        store._store.close()
        elsewhere.close()
