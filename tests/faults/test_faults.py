"""Faults on a real server: kill -9 under load, a device killed mid-command, a
network partition, a full disk. Nothing acknowledged is ever lost or doubled, and every
device converges to what a replay of the log shows its viewer.

Each test is bounded (well under a minute). The partition lasts 6 s here; set
``CONTEUR_PARTITION_SECONDS=60`` for a full minute.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
from pathlib import Path

import msgspec
import pytest

from bench.harness import ServerProcess, Venue, prepare_venue
from conteur.client.client import Backoff, Client
from conteur.client.outbox import Outbox
from conteur.events import views
from conteur.events.model import Actor
from conteur.server.store.chain import verify_rows
from conteur.server.store.sqlite import SQLiteStore, decode_events
from conteur.server.testing import Device
from tests.support.client_support import Proxy
from tests.support.faults_support import TogglingPhone, eventually, player, seen_seqs, toggle

PARTITION_SECONDS = float(os.environ.get("CONTEUR_PARTITION_SECONDS", "6"))


# -- what the log says ---------------------------------------------------------------


def log_of(db: Path, session: str) -> list[tuple[int, object]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT seq, data FROM events WHERE session=? ORDER BY seq",
                            (session,)).fetchall()
    finally:
        conn.close()
    return list(zip([r[0] for r in rows], decode_events([r[1] for r in rows])))


def replayed_view(log: list[tuple[int, object]], viewer: Actor):
    """The state a viewer folds from a replay of the log filtered for it."""
    return views.fold_view([e for _, e in log], viewer)


def same_state(a, b) -> bool:
    return msgspec.structs.replace(a, head=0) == msgspec.structs.replace(b, head=0)


def check_exactly_once(db: Path, acked: dict[str, tuple[int, ...]]) -> None:
    """Every acknowledged command's events are in the log once, at the acked seqs."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for command_id, seqs in acked.items():
            stored = [r[0] for r in conn.execute(
                "SELECT seq FROM events WHERE command_id=? ORDER BY seq", (command_id,))]
            assert tuple(stored) == tuple(seqs), f"{command_id}: acked {seqs}, log has {stored}"
            recorded = conn.execute("SELECT count(*) FROM commands WHERE command_id=?",
                                    (command_id,)).fetchone()[0]
            assert recorded == 1, f"{command_id} recorded {recorded} times"
        seqs = [r[0] for r in conn.execute("SELECT seq FROM events ORDER BY seq")]
        assert seqs == list(range(1, len(seqs) + 1)), "seqs are not gapless"
    finally:
        conn.close()
    with SQLiteStore(db) as store:
        assert verify_rows(store.rows(), gapless=True)[1] is None, "the hash chain is broken"


class Player(TogglingPhone):
    """The venue's player ``index``, toggling its character."""

    def __init__(self, url: str, venue: Venue, index: int, folder: Path):
        character, token = venue.players[index]
        super().__init__(url, token, venue.session, character, outbox=folder / f"{character}.db",
                         device=f"phone-{index}", backoff=Backoff(base=0.1, cap=0.5))


async def converge(players: list[Player], db: Path, session: str, timeout: float = 30.0) -> list:
    """Waits until every player holds its whole view of the log, then checks it."""
    def done() -> bool:
        log = log_of(db, session)
        return all(p.settled(seen_seqs(log, player(p.character))) for p in players)

    await eventually(done, timeout, "every device caught up and flushed its outbox")
    log = log_of(db, session)
    for p in players:
        viewer = player(p.character)
        assert [d.seq for d in p.client.received] == seen_seqs(log, viewer), p.character
        assert p.client.state is not None, p.client.fold_error
        assert same_state(p.client.state, replayed_view(log, viewer)), p.character
        assert all(e.status in ("acked", "rejected") for e in p.client.outbox.all())
    return log


# -- kill -9 under load ----------------------------------------------------------------


async def test_kill_9_under_load_from_20_devices_loses_and_doubles_nothing(tmp_path, phones):
    venue = prepare_venue(tmp_path / "c.db", "night", players=20)
    server = ServerProcess(tmp_path / "c.db")
    server.start()
    players = [Player(server.ws_url, venue, i, phones) for i in range(20)]
    try:
        for p in players:
            p.client.start()
        await asyncio.gather(*(p.client.wait_live() for p in players))

        async def load(rounds: int) -> None:
            for _ in range(rounds):
                for p in players:
                    p.send()
                await asyncio.sleep(0.05)

        await load(10)
        await eventually(lambda: sum(len(p.acked()) for p in players) >= 100, 20, "acks before the kill")
        sending = asyncio.create_task(load(20))  # the kill lands mid-load
        await asyncio.sleep(0.3)
        before = {k: v for p in players for k, v in p.acked().items()}
        server.kill9()
        await sending
        server.start()
        await load(5)
        await converge(players, tmp_path / "c.db", venue.session)
        after = {k: v for p in players for k, v in p.acked().items()}
        assert before.items() <= after.items(), "an acknowledged command changed its outcome"
        assert len(after) > len(before)
    finally:
        await asyncio.gather(*(p.client.close() for p in players))
        server.stop()
    check_exactly_once(tmp_path / "c.db", after)


async def test_a_device_killed_mid_command_gets_its_original_ack_after_restart(tmp_path):
    venue = prepare_venue(tmp_path / "c.db", "night", players=2)
    character, token = venue.players[0]
    outbox_path = tmp_path / "phone.db"
    command = toggle(character, False)
    with ServerProcess(tmp_path / "c.db") as server:
        # the phone writes the command to its outbox, sends it, and dies before the ack
        outbox = Outbox(outbox_path)
        device_name = outbox.device("phone-1")
        command_id = outbox.put(venue.session, command)
        outbox.close()
        watcher = Device(server.ws_url, venue.storyteller, venue.session)
        await watcher.connect()
        phone = Device(server.ws_url, token, venue.session, device=device_name)
        await phone.connect()
        await phone.send({"type": "command", "id": command_id, "command": command})
        await watcher.wait_event("session.went_out_of_game", character=character)
        phone.ws.transport.abort()  # killed: no close frame, the ack never read
        await watcher.close()
        server.kill9()
        with sqlite3.connect(tmp_path / "c.db") as conn:
            original = [r[0] for r in conn.execute(
                "SELECT seq FROM events WHERE command_id=?", (command_id,))]
        assert len(original) == 1

        server.start()
        # the phone comes back: the same outbox, the same device, the same command id
        async with Client(server.ws_url, token, venue.session, outbox=outbox_path) as client:
            result = await client.outcome(command_id, timeout=20)
        assert result.ok and result.seqs == tuple(original)
    check_exactly_once(tmp_path / "c.db", {command_id: tuple(original)})


# -- a network partition through a proxy (tests.support.client_support.Proxy.partition) ----------


async def test_partition_with_commands_queued_on_both_sides(tmp_path, phones):
    venue = prepare_venue(tmp_path / "c.db", "night", players=4)
    with ServerProcess(tmp_path / "c.db") as server:
        with Proxy(server.port) as proxy:
            far = [Player(proxy.ws_url, venue, i, phones) for i in (0, 1)]  # across the link
            near = [Player(server.ws_url, venue, i, phones) for i in (2, 3)]  # by the server
            players = far + near
            try:
                for p in players:
                    p.client.start()
                await asyncio.gather(*(p.client.wait_live() for p in players))
                for p in players:
                    p.send()
                await converge(players, tmp_path / "c.db", venue.session)

                proxy.partition()
                queued_far: list[str] = []
                loop = asyncio.get_running_loop()
                end = loop.time() + PARTITION_SECONDS
                while loop.time() < end:  # both sides keep playing through the partition
                    for p in players:
                        p.send()
                    queued_far += [p.ids[-1] for p in far]
                    await asyncio.sleep(0.5)
                # the far side could not have been answered: its commands wait in its outbox
                assert all(p.client.outbox.get(i).status == "queued" for p in far for i in p.ids[-2:])
                assert all(not p.client.queued() for p in near)
                proxy.heal()
                log = await converge(players, tmp_path / "c.db", venue.session)
                acked = {}
                for p in players:
                    acked.update(p.acked())
            finally:
                await asyncio.gather(*(p.client.close() for p in players))
    # nothing vanished: every far command has an outcome, and each alternation was accepted
    assert all(i in acked for i in queued_far)
    check_exactly_once(tmp_path / "c.db", acked)
    assert len(log) > 2 * len(queued_far)


# -- a full disk ---------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs, mounted for the test (root only: skipped otherwise)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(folder: Path) -> Path:
    """Takes every free byte of the file system with a ballast file."""
    ballast = folder / "ballast"
    f = open(ballast, "wb", buffering=0)
    try:
        while True:
            f.write(b"\0" * 4096)
    except OSError:  # ENOSPC: full
        pass
    finally:
        f.close()
    return ballast


async def test_a_full_disk_gives_clear_errors_no_corruption_and_recovers(small_disk, tmp_path):
    db = small_disk / "c.db"
    venue = prepare_venue(db, "night", players=2)
    character, token = venue.players[0]
    with ServerProcess(db, settings={"rate": 1000, "burst": 1000},
                       log_path=tmp_path / "server.log") as server:
        watcher = Device(server.ws_url, venue.storyteller, venue.session)
        phone = Device(server.ws_url, token, venue.session, device="phone")
        await watcher.connect()
        await phone.connect()
        ballast = fill(small_disk)
        acked: dict[str, tuple[int, ...]] = {}
        out = False
        refused = None
        for i in range(3000):  # until the WAL needs a page the disk does not have
            command_id = f"full-{i}"
            reply = await phone.command(toggle(character, out), id=command_id)
            if reply["type"] == "ack":
                acked[command_id] = tuple(reply["seqs"])
                out = not out
            else:
                refused = (command_id, reply)
                break
        assert refused is not None, "the disk never filled"
        command_id, reply = refused
        assert reply["type"] == "reject" and reply["code"] == "unavailable", reply
        assert "full" in reply["message"], reply["message"]
        again = await phone.command(toggle(character, out), id=command_id)  # still full
        assert again["type"] == "reject" and again["code"] == "unavailable"
        assert server.healthy()

        ballast.unlink()  # space returns
        retried = await phone.command(toggle(character, out), id=command_id)
        assert retried["type"] == "ack", retried
        acked[command_id] = tuple(retried["seqs"])
        more = await phone.command(toggle(character, not out), id="after-full")
        assert more["type"] == "ack", more
        acked["after-full"] = tuple(more["seqs"])
        await watcher.sync()
        log = log_of(db, venue.session)
        # the storyteller saw exactly the log: nothing fanned out that was not written
        assert [s for s, _ in watcher.events] == [s for s, _ in log]
        await watcher.close()
        await phone.close()
    check_exactly_once(db, acked)
    with SQLiteStore(db) as store:
        state = store.load_state(venue.session, use_snapshots=False)
    assert state.session.characters[character].out_of_game is out

