"""A stalled or restarted PostgreSQL under real ``conteur serve`` processes: the database
stopped (SIGSTOP of every process of its cluster: a hung host, a partition) or restarted
(``pg_ctl restart``), devices on the real websocket. These tests have a cluster of their
own: stopping it must not stop other tests' databases.

- Stalled: pings, ``/health`` (``degraded``, 503, with the reason) and hellos are still
  answered; commands are answered ``unavailable`` with a retry delay; once it is back,
  each command retried with its id is decided once.
- Restarted: the first command after it succeeds (the dead connections are replaced
  before use); the shared hold is taken again, so ``simulate`` is refused beside the
  server; ``welcome`` and ``/health`` name the process.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.harness import prepare_venue
from conteur.server.store.chain import verify_rows
from conteur.server.store.factory import open_store
from conteur.server.store.postgres import WRITER_LOCK
from conteur.server.testing import Device
from tests.support.faults_support import eventually, toggle
from tests.support.pg_support import BINDIR, Cluster, Serve, needs_postgres

pytest.importorskip("psycopg")

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 2  # CONTEUR_PG_STATEMENT_TIMEOUT of the servers here (Serve): an outage answered quickly


@pytest.fixture(scope="module")
def cluster():
    needs_postgres()
    own = Cluster(BINDIR).start()
    try:
        yield own
    finally:
        own.stop()


@pytest.fixture
def url(cluster):
    name = cluster.create_database()
    yield cluster.url(name)
    cluster.drop_database(name)


async def health(server: Serve) -> tuple[int, dict]:
    return await asyncio.to_thread(server.health)


def commands_in_log(url: str) -> dict[str, list[int]]:
    with open_store(url) as store:
        rows = list(store.rows())
    assert verify_rows(rows, gapless=True) == (len(rows), None)
    by_id: dict[str, list[int]] = {}
    for row in rows:
        if row.command_id:
            by_id.setdefault(row.command_id, []).append(row.seq)
    return by_id


async def until_acked(device: Device, command: dict, command_id: str) -> dict:
    """Sends ``command`` with its id until it is acknowledged, as a phone's outbox does."""
    while True:
        answer = await device.command(command, id=command_id, timeout=30)
        if answer["type"] == "ack":
            return answer
        assert answer["type"] == "reject" and answer["code"] == "unavailable", answer
        await asyncio.sleep(answer.get("retry_after") or 0.5)


async def test_a_stalled_postgresql_leaves_pings_health_and_hellos_answered_and_loses_nothing(
        cluster, url, tmp_path):
    venue = prepare_venue(url, "hall", players=4)
    with Serve(url, tmp_path / "serve.log") as server:
        devices = [Device(server.ws_url, token, "hall", device=f"phone-{k}", create=False)
                   for k, (_character, token) in enumerate(venue.players)]
        for device in devices:
            await device.connect()
        try:
            for device, (character, _) in zip(devices, venue.players):
                assert (await device.command(toggle(character, False)))["type"] == "ack"
            with cluster.stalled():
                # each answer below comes while the database answers nothing at all
                stalled = [await device.command(toggle(character, True), id=f"stalled-{k}", timeout=30)
                           for k, (device, (character, _)) in enumerate(zip(devices, venue.players))]
                for answer in stalled:
                    assert answer["type"] == "reject" and answer["code"] == "unavailable", answer
                    assert 0 < answer["retry_after"] <= DEADLINE
                for device in devices:
                    await device.sync(timeout=10)  # ping, pong
                status, body = await health(server)
                deadline = time.monotonic() + 30
                while status != 503:
                    assert status == 200 and time.monotonic() < deadline, (status, body)
                    await asyncio.sleep(0.2)
                    status, body = await health(server)
                assert body["status"] == "degraded"
                # its reason: a statement the database did not answer, or a connection it did not make
                assert "PostgreSQL" in body["reason"] and ("answered" in body["reason"] or "unavailable" in body["reason"])
                assert body["devices"] == len(devices)
                # a new device is told, and closed with the code for "try again later"
                newcomer = Device(server.ws_url, venue.players[0][1], "hall", device="late", create=False)
                await newcomer.connect()
                error = await newcomer.wait_for(lambda f: f["type"] == "error", timeout=30)
                assert error["code"] == "unavailable"
                await eventually(lambda: newcomer.closed, 30, "the newcomer closed")
                assert newcomer.close_code == 1013
                await newcomer.close()
                assert all(not device.closed for device in devices)
            acked = [await until_acked(device, toggle(character, True), f"stalled-{k}")
                     for k, (device, (character, _)) in enumerate(zip(devices, venue.players))]
            status, body = await health(server)
            deadline = time.monotonic() + 30
            while status != 200:
                assert time.monotonic() < deadline, (status, body)
                await asyncio.sleep(0.2)
                status, body = await health(server)
            assert body["status"] == "ok" and body["reason"] is None
        finally:
            for device in devices:
                await device.close()
        logged = commands_in_log(url)
        for k, ack in enumerate(acked):
            assert logged[f"stalled-{k}"] == ack["seqs"]  # once, where acknowledged
        output = server.output()
        assert "Traceback" not in output, output
        assert "commands answered unavailable" in output and "succeed again" in output, output


# what a storyteller's tablet asks over HTTP, each needing the database (its token at
# least): while it is stalled, each is answered 503 with a Retry-After
NEEDS_THE_DATABASE = [("GET", "/me"), ("GET", "/sessions"), ("GET", "/sessions/hall/state"),
                      ("GET", "/sessions/hall/events"), ("GET", "/sessions/hall/windows"),
                      ("GET", "/sessions/hall/devices"), ("GET", "/sessions/hall/review/first"),
                      ("POST", "/sessions/hall/tokens"), ("POST", "/channel")]
# and what needs no database at all: answered as usual meanwhile
NEEDS_NONE = ["/health", "/", "/messages/en.json", "/schema/openapi.json"]


async def test_a_stalled_postgresql_leaves_http_answered_and_refuses_what_needs_it_with_503(
        cluster, url, tmp_path):
    """Every store call of an HTTP request (its bearer token first) runs off the event
    loop, awaited at most the statement timeout: the requests that need the database are
    answered 503 with a Retry-After, while those that need none, and the sockets' pings,
    are answered as usual, even with the database's requests still waiting."""
    import httpx

    venue = prepare_venue(url, "hall", players=1)
    headers = {"Authorization": f"Bearer {venue.storyteller}"}
    bodies = {"/sessions/hall/tokens": {"role": "observer"}, "/channel": {"id": "0" * 12, "nonce": "A" * 43}}
    with Serve(url, tmp_path / "serve.log") as server:
        device = Device(server.ws_url, venue.players[0][1], "hall", device="phone", create=False)
        await device.connect()
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as http:
                def ask(method: str, path: str):
                    return http.request(method, path, headers=headers, json=bodies.get(path))

                for method, path in NEEDS_THE_DATABASE:  # each answers while the database does
                    assert (await ask(method, path)).status_code == 200, path
                with cluster.stalled():
                    waiting = [asyncio.ensure_future(ask(method, path)) for method, path in NEEDS_THE_DATABASE]
                    for path in NEEDS_NONE:
                        answer = await http.get(path)
                        # /health says degraded once the store saw the database stalled
                        assert answer.status_code in ((200, 503) if path == "/health" else (200,)), path
                    await device.sync(timeout=10)  # ping, pong
                    for (method, path), answer in zip(NEEDS_THE_DATABASE, await asyncio.gather(*waiting)):
                        assert answer.status_code == 503, (path, answer.text)
                        assert 0 < int(answer.headers["retry-after"]) <= DEADLINE, path
                        assert "database" in answer.json()["detail"], path
                    # asked again, once the first ones gave up: answered the same way
                    assert (await ask("GET", "/me")).status_code == 503
                    await device.sync(timeout=10)
                await eventually(lambda: server.health()[0] == 200, 30, "the store back")
                answers = [await ask(method, path) for method, path in NEEDS_THE_DATABASE]
                assert [a.status_code for a in answers] == [200] * len(answers), [a.text for a in answers]
            assert not device.closed
        finally:
            await device.close()
    assert "Traceback" not in server.output(), server.output()


def conteur(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conteur.server.cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


async def test_after_a_postgresql_restart_the_first_command_succeeds_and_the_hold_is_taken_again(
        cluster, url, tmp_path):
    venue = prepare_venue(url, "hall", players=2)
    (character, token), (other, other_token) = venue.players
    with Serve(url, tmp_path / "serve.log") as server:
        device = Device(server.ws_url, token, "hall", device="phone", create=False)
        await device.connect()
        try:
            name = f"{os.uname().nodename}:{server.proc.pid}"
            assert device.welcome["server"] == name  # which process the socket reached
            assert (await health(server))[1]["server"] == name
            out = False
            assert (await device.command(toggle(character, out)))["type"] == "ack"
            for _ in range(2):
                await asyncio.to_thread(cluster.restart)
                out = not out
                # the very first command after it: the server's connections, all dropped
                # by the restart, are found dead and replaced before it is decided
                answer = await device.command(toggle(character, out), timeout=30)
                assert answer["type"] == "ack", answer
                # a new device's hello reads the token: answered too
                late = Device(server.ws_url, other_token, "hall", device=f"late-{out}", create=False)
                await late.connect()
                assert late.welcome is not None, late.frames
                await late.close()
                # the shared hold was taken again with the first write: an exclusive job
                # is refused beside the live server
                done = await asyncio.to_thread(conteur, "simulate", "--store", url, "--events", 20,
                                               "--ruleset", "met", "--seed", 1)
                assert done.returncode != 0 and "in use by another conteur" in done.stderr, done
            assert device.closed is False
        finally:
            await device.close()
        output = server.output()
        assert "Traceback" not in output, output
        assert "commands answered unavailable" not in output, output
    logged = commands_in_log(url)
    assert not any(command_id.startswith("sim") for command_id in logged)  # simulate wrote nothing


async def test_after_a_postgresql_restart_simulate_is_refused_beside_a_live_server(cluster, url, tmp_path):
    """The shared hold lives on a connection the restart drops: the server takes it again
    (whether or not a command came meanwhile), so the exclusive job stays refused."""
    venue = prepare_venue(url, "hall", players=1)
    with Serve(url, tmp_path / "serve.log") as server:
        await asyncio.to_thread(cluster.restart)
        device = Device(server.ws_url, venue.players[0][1], "hall", device="phone", create=False)
        await device.connect()  # the server answers again
        await device.close()
        # no command: the hold is taken again all the same (an exclusive try of the lock
        # succeeds until then, and is let go at once)
        deadline = time.monotonic() + 30
        while await asyncio.to_thread(exclusive_lock_free, url):
            assert time.monotonic() < deadline, "the server never took its hold again"
            await asyncio.sleep(0.2)
        done = await asyncio.to_thread(conteur, "simulate", "--store", url, "--events", 20,
                                       "--ruleset", "met", "--seed", 1)
        assert done.returncode != 0 and "in use by another conteur" in done.stderr, done
    with open_store(url) as store:
        assert store.sessions() == ["hall"]  # nothing of a simulation


def exclusive_lock_free(url: str) -> bool:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT pg_try_advisory_lock(%s)", (WRITER_LOCK,)).fetchone()[0]


@pytest.fixture
def timers_log():
    """What ``conteur.timers`` logs: the app's logging config replaces the root logger's
    handlers (caplog's among them) when it starts."""
    told: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: told.append(record.getMessage())
    logger = logging.getLogger("conteur.timers")
    logger.addHandler(handler)
    yield told
    logger.removeHandler(handler)


@pytest.mark.parametrize("outage", ["stalled", "down"])
async def test_met_16_a_window_whose_time_ran_out_in_an_outage_closes_once_the_database_is_back(
        cluster, url, monkeypatch, timers_log, outage):
    """MET-16: the timer's closing meets the database stalled or stopped, and fails; it is
    tried again until the store takes it, with what was left of its time (nothing): not
    with the whole ``accept_timeout`` again (an hour here: on the timers' clock, which
    the test alone moves, or on the loop's), and with no event needed to re-arm it; it is
    decided once."""
    from conteur.server.core.timers import ManualClock
    from conteur.server.web.app import Settings
    from conteur.server.testing import Venue
    from tests.support.every_command import SETUP

    monkeypatch.setenv("CONTEUR_PG_STATEMENT_TIMEOUT", str(DEADLINE))
    clock = ManualClock()
    with Venue(url, Settings(timer_clock=clock)) as venue:
        async with Device(venue.ws_url, venue.token(), "night", device="tablet") as st:
            steps = [dict(SETUP[0], accept_timeout=ACCEPT_TIMEOUT), *SETUP[1:5],
                     {"type": "join_scene", "character": "anna", "scene": "hall"},
                     {"type": "join_scene", "character": "bruno", "scene": "hall"},
                     {"type": "challenge", "character": "anna", "defender": "bruno", "attribute": "physical"},
                     {"type": "throw", "character": "anna", "challenge": "c1", "round": 1, "choice": "paper"},
                     {"type": "throw", "character": "bruno", "challenge": "c1", "round": 1, "choice": "rock"}]
            for step in steps:
                assert (await st.command(step))["type"] == "ack", step
            await eventually(lambda: clock.sleeping == 1, 30, "the window's timer armed")
            with getattr(cluster, outage)():
                clock.advance(ACCEPT_TIMEOUT)  # its time is up while nothing answers
                await eventually(lambda: any("waits for the store" in m for m in timers_log), 30, "the closing failed")
                assert not [e for _, e in st.events if e["type"] == "met.challenge_resolved"]
                # not armed again on its clock: nothing is left of its time
                assert clock.sleeping == 0
            # the clock stays where it is: closed with no more of its time, and no event
            await st.wait_event("met.challenge_resolved", timeout=60)
    with open_store(url) as store:
        types = [r.type for r in store.rows()]
    assert types.count("met.challenge_resolved") == 1


ACCEPT_TIMEOUT = 3600  # far longer than any test waits: a whole timeout again never ends in one
