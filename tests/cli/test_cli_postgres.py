"""Every command that takes a chronicle takes a PostgreSQL one:
`serve --store postgresql://...` (a real server process), `simulate`, `verify`, `replay`,
`export` and `backup`, with the password never printed; and the websocket and HTTP
fronts on a PostgreSQL chronicle, a real server on loopback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from conteur.server.testing import Device, Venue

pytest.importorskip("psycopg")

ROOT = Path(__file__).resolve().parents[2]


def conteur(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conteur.server.cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def password(url: str) -> str:
    return url.split("://", 1)[1].split("@")[0].split(":")[1]


def test_simulate_verify_replay_export_and_backup_take_a_postgresql_store(pg_url, tmp_path):
    done = conteur("simulate", "--store", pg_url, "--events", 120, "--ruleset", "met", "--seed", 2)
    assert done.returncode == 0, done.stderr
    said = [done.stdout]
    verified = conteur("verify", pg_url)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("OK postgresql://") and "draws recomputed in 1 closed" in verified.stdout
    events = int(re.search(r"(\d+) events", verified.stdout).group(1))
    replayed = conteur("replay", "--store", pg_url, "--session", "sim-2")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["head"] == events
    out = tmp_path / "sim-2.jsonl"
    exported = conteur("export", "--store", pg_url, "--session", "sim-2", "--format", "jsonl", "--out", out)
    assert exported.returncode == 0, exported.stderr
    assert conteur("verify", out).stdout.startswith(f"OK {out}: {events} events")
    backed = conteur("backup", "--store", pg_url, "--to", tmp_path)
    assert backed.returncode == 0, backed.stderr
    said += [verified.stdout, backed.stdout]
    copy = next(tmp_path.glob("t_*.db"))
    assert conteur("verify", copy).stdout.startswith(f"OK {copy}: {events} events")
    assert not any(p.name.endswith((".partial", "-wal")) for p in tmp_path.iterdir())
    assert all(password(pg_url) not in text for text in said)


def test_an_unreachable_postgresql_is_one_line_without_the_password(pg_cluster, tmp_path):
    url = pg_cluster.url("nothing_here")
    for args in (["verify", url], ["replay", "--store", url, "--session", "s"],
                 ["export", "--store", url, "--session", "s", "--format", "md"]):
        done = conteur(*args)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        assert 'database "nothing_here" does not exist' in done.stderr
        assert password(url) not in done.stderr


def test_serve_store_postgresql_runs_a_server_process(pg_url):
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "conteur.server.cli.main", "serve", "--store", pg_url, "--host", "127.0.0.1",
         "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                if health.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, server.stdout.read()
            assert time.monotonic() < deadline, "the server did not answer"
            time.sleep(0.2)
        assert health.json()["status"] == "ok"
    finally:
        server.terminate()
        output = server.communicate(timeout=60)[0]
    assert "#join=" in output  # the storyteller's link of a new chronicle
    assert password(pg_url) not in output


async def test_devices_play_on_a_postgresql_chronicle(pg_url):
    with Venue(pg_url) as venue:
        token = venue.token()
        async with Device(venue.ws_url, token, "night-1", create=True) as tablet, \
                Device(venue.ws_url, token, "night-1", create=True) as watcher:
            assert (await tablet.command({"type": "open_session", "name": "first night"}))["type"] == "ack"
            assert (await tablet.command({"type": "skip_time", "seconds": 60}))["type"] == "ack"
            await watcher.wait_for(lambda f: f.get("type") == "event" and f["seq"] == 2)
            await watcher.sync()
            assert [seq for seq, _ in watcher.events] == [1, 2]
        venue.restart()  # the state comes back from PostgreSQL
        with httpx.Client(base_url=venue.url, headers={"Authorization": f"Bearer {token}"}) as http:
            events = http.get("/sessions/night-1/events").json()
            assert [e["seq"] for e in events] == [1, 2]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
