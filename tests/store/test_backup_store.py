"""Backups of a chronicle written by the real event store: every acknowledged
event is in the copy, its hash chain verifies, and a restored chronicle carries on."""

from __future__ import annotations

import gc
import threading

import pytest

from conteur.events.game import CommandRejected
from conteur.server.store.backup import DatabaseInUse, backup, restore
from conteur.server.store.chain import verify_rows
from conteur.server.store.sqlite import Pending, SQLiteStore
from conteur.server.audit.verify import verify_path


def ev(n: int) -> CommandRejected:
    return CommandRejected(command_type="bid", code="rule", message=f"event {n}", character="anna")


def command(n: int) -> Pending:
    return Pending(session="s1", events=[ev(n)], actor="anna", device="phone-1",
                   command_id=f"c-{n}")


@pytest.fixture
def busy_store(tmp_path):
    """A store with a thread appending acknowledged commands until the test ends."""
    store = SQLiteStore(tmp_path / "chronicle.db")
    stop = threading.Event()
    acked: list[int] = []

    def play():
        n = 0
        while not stop.is_set():
            n += 1
            acked.extend(store.append_sync(command(n)).seqs)

    for n in range(1, 301):
        acked.extend(store.append_sync(Pending(session="s0", events=[ev(-n)])).seqs)
    thread = threading.Thread(target=play)
    thread.start()
    try:
        yield store, acked
    finally:
        stop.set()
        thread.join()
        store.close()


def test_backup_of_a_live_store_holds_every_acknowledged_event(busy_store, tmp_path):
    store, acked = busy_store
    for _ in range(12_000):  # a bound, so a stuck writer fails instead of hanging
        if len(acked) >= 400:
            break
        threading.Event().wait(0.005)
    else:
        pytest.fail("the store stopped acknowledging appends")
    acknowledged_before = max(acked)

    (tmp_path / "stick").mkdir()
    count = backup(store.path, tmp_path / "stick" / "copy.db")

    assert count >= acknowledged_before
    report = verify_path(tmp_path / "stick" / "copy.db")
    assert report.ok, report.text()
    assert report.events == count
    copy = SQLiteStore(tmp_path / "stick" / "copy.db")
    try:
        assert verify_rows(copy.rows(), gapless=True) == (count, None)
    finally:
        copy.close()


def test_restored_store_keeps_command_outcomes_and_carries_on(tmp_path):
    db = tmp_path / "chronicle.db"
    store = SQLiteStore(db)
    first = [store.append_sync(command(n)) for n in range(1, 11)]
    backup(db, tmp_path / "copy.db")
    store.append_sync(command(11))  # lost with the laptop: after the last backup

    with pytest.raises(DatabaseInUse):
        restore(tmp_path / "copy.db", db, verify=verify_path)
    store.close()
    # SQLiteStore.__init__ leaves its set-up connection to the garbage collector (a cycle
    # through sqlite_utils); a stopped server process has none left at all.
    gc.collect()
    # it holds one event more than the backup: only --force restores it
    assert restore(tmp_path / "copy.db", db, verify=verify_path, force=True) == 10

    store = SQLiteStore(db)
    try:
        assert store.head() == 10
        # A phone resending a command from its outbox gets the first outcome, no duplicate.
        again = store.append_sync(command(3))
        assert again.replayed and again.seqs == first[2].seqs
        # The command the backup missed is appended again when the phone resends it.
        assert store.append_sync(command(11)).seqs == (11,)
        assert verify_rows(store.rows(), gapless=True) == (11, None)
    finally:
        store.close()
