"""`conteur client` as a storyteller's terminal: a running `watch` prints every
event, whatever other process shares its state file; a restore is announced; `send
--no-wait` sends at once; a silent server or a bad link gives one line and its status."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import websockets

from conteur.server.audit.verify import verify_path
from conteur.client.cli import main
from conteur.client.client import Client
from conteur.server.store.backup import backup, restore
from tests.support.client_support import Proxy, served, stored_rows

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 60.0  # a bound so a broken watch fails the test instead of hanging it


class Watch:
    """`conteur client watch --json` as its own process; its lines as they come."""

    def __init__(self, state: str):
        self.lines: list[dict] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conteur.client.cli", "watch", "--state", state, "--json",
             "--backoff-cap", "0.3"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            self.lines.append(json.loads(raw))

    def seqs(self) -> list[int]:
        return [line["seq"] for line in self.lines if "seq" in line]

    def wait_for(self, predicate, what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while not predicate():
            if self.proc.poll() is not None:
                pytest.fail(f"watch ended: {self.proc.stderr.read()}")
            if time.monotonic() > deadline:
                pytest.fail(f"watch never printed {what}; it printed {self.lines}")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def head(db: str, session: str) -> int:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT max(seq) FROM events WHERE session=?", (session,)).fetchone()[0]
    finally:
        conn.close()


async def send_directly(url: str, token: str, session: str, state: str, command: dict) -> tuple[int, ...]:
    """Another client process on the same state file (a `client send`), straight to the
    server: it records what it receives in the file's shared log and cursor."""
    async with Client(url, token, session, outbox=state) as other:
        result = await other.request(command, timeout=DEADLINE)
        assert result.ok, result
        while other.last_seq < result.seqs[-1]:
            await asyncio.sleep(0.02)
    return result.seqs


def test_watch_prints_events_another_process_received_while_it_was_reconnecting(setup, tmp_path):
    state = str(tmp_path / "st.sqlite")
    with served(setup.db) as server, Proxy(server.port) as proxy:
        assert main(["join", f"{proxy.url}/#join={setup.storyteller}", "--state", state]) == 0
        watch = Watch(state)
        try:
            before = head(setup.db, setup.session)
            watch.wait_for(lambda: before in watch.seqs(), f"seq {before}")
            proxy.cut()  # the watch's Wi-Fi drops; it keeps trying to reconnect

            seqs = asyncio.run(send_directly(server.ws_url, setup.storyteller, setup.session, state,
                                             {"type": "skip_time", "seconds": 600}))

            proxy.release()
            watch.wait_for(lambda: seqs[-1] in watch.seqs(), f"the skip_time at seq {seqs[-1]}")
            assert watch.seqs() == sorted(set(watch.seqs())), "each event once, in order"
        finally:
            watch.stop()


def test_watch_announces_a_restored_backup_before_printing_the_log_again(setup, tmp_path):
    state = str(tmp_path / "st.sqlite")
    copy = tmp_path / "copy.db"
    backup(setup.db, copy)
    first = served(setup.db)
    server = first.__enter__()
    with Proxy(server.port) as proxy:
        assert main(["join", f"{proxy.url}/#join={setup.storyteller}", "--state", state]) == 0
        watch = Watch(state)
        try:
            seqs = asyncio.run(send_directly(server.ws_url, setup.storyteller, setup.session,
                                             str(tmp_path / "other.sqlite"),
                                             {"type": "skip_time", "seconds": 600}))
            watch.wait_for(lambda: seqs[-1] in watch.seqs(), "the event the backup misses")
            first.__exit__(None, None, None)  # the laptop dies; the spare restores the backup
            restore(copy, setup.db, verify=verify_path, force=True)
            with served(setup.db) as spare:
                proxy.target_port = spare.port
                watch.wait_for(lambda: any("notice" in line for line in watch.lines), "a notice")
                notice = next(i for i, line in enumerate(watch.lines) if "notice" in line)
                assert "backup was restored" in watch.lines[notice]["reason"]
                watch.wait_for(lambda: watch.seqs().count(1) == 2, "the log again from seq 1")
                assert watch.lines[notice + 1]["seq"] == 1
        finally:
            watch.stop()


def test_send_no_wait_sends_at_once_when_the_server_is_up(setup, tmp_path, capsys):
    state = str(tmp_path / "st.sqlite")
    with served(setup.db) as server:
        assert main(["join", f"{server.url}/#join={setup.storyteller}", "--state", state]) == 0
        capsys.readouterr()
        assert main(["send", '{"type": "skip_time", "seconds": 60}', "--no-wait", "--state", state]) == 0
        command_id = capsys.readouterr().out.strip()
        deadline = time.monotonic() + DEADLINE
        while not stored_rows(setup.db, command_id):  # nothing else runs: no next command
            assert time.monotonic() < deadline, "the command never reached the server"
            time.sleep(0.05)


class Silent:
    """A server that accepts connections and never answers (a hung process, a port
    forwarded nowhere): TCP only, or a websocket that says welcome then nothing."""

    def __init__(self, websocket: bool):
        self.websocket = websocket
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Future | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Silent:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self._loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(10)

    def _run(self) -> None:
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stop = self._loop.create_future()
        if self.websocket:
            async def handler(ws):
                # the handshake taken, then nothing: the channel's ``open`` (the client's first
                # frame) and every frame after it are read and never answered
                with contextlib.suppress(websockets.exceptions.ConnectionClosed):
                    async for _ in ws:
                        pass

            quiet = logging.getLogger("tests.silent")  # its own log, not the test's stderr
            quiet.propagate = False
            quiet.addHandler(logging.NullHandler())
            server = await websockets.serve(handler, "127.0.0.1", 0, logger=quiet)
        else:
            held = []
            server = await asyncio.start_server(lambda r, w: held.append(w), "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stop
        server.close()


@pytest.mark.parametrize("websocket", [False, True], ids=["tcp", "websocket"])
def test_a_silent_server_gives_the_documented_status_in_one_line(tmp_path, capsys, websocket):
    state = str(tmp_path / "st.sqlite")
    with Silent(websocket) as silent:
        link = f"http://127.0.0.1:{silent.port}/#join=abc&session=s"
        code = main(["join", link, "--state", state, "--timeout", "2"])
        if not websocket:
            assert code == 3
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.splitlines()) <= 1
        code = main(["send", '{"type": "skip_time", "seconds": 60}', "--state", state, "--timeout", "2"])
        err = capsys.readouterr().err
        assert code == 3, err
        assert len(err.splitlines()) == 1 and "stay" in err  # the command stays queued


def test_a_link_without_join_is_one_line_and_status_2(tmp_path, capsys):
    assert main(["join", "http://10.42.0.1:8000/", "--state", str(tmp_path / "st.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conteur client join: the link has no #join=TOKEN part")
    assert len(err.splitlines()) == 1


def test_hotspot_help_exits_0_with_its_usage():
    result = subprocess.run([ROOT / "deploy" / "hotspot.sh", "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "sudo deploy/hotspot.sh SSID PASSWORD" in result.stdout
