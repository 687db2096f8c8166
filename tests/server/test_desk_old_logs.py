"""A log from before the storyteller's desk (no announcement, no countdown, no call, no
venue-wide Time Out) still opens, folds and verifies; a snapshot written before the desk
part existed still decodes, its desk empty."""

from __future__ import annotations

import msgspec

from conteur.events import desk, game
from conteur.events.model import STORYTELLER, Event
from conteur.server.audit.verify import verify_store
from conteur.server.core.service import Chronicle
from conteur.server.store import snapshot
from conteur.server.store.interface import Pending
from conteur.server.store.sqlite import SQLiteStore
from tests.support.client_support import command, make_chronicle


def test_a_snapshot_from_before_the_desk_decodes_with_an_empty_desk(tmp_path):
    setup = make_chronicle(tmp_path / "c.db")
    with SQLiteStore(setup.db) as store:
        state = store.load_state(setup.session)
    whole = msgspec.to_builtins(state, enc_hook=game.enc_hook)
    del whole["desk"]  # what the server wrote before the desk part
    old = msgspec.msgpack.encode(whole)
    decoded = snapshot.open_state(snapshot.LEGACY_STATE, old, state.head, lambda seq: None)
    assert decoded is not None and decoded.desk == desk.State()
    assert decoded.session == state.session and decoded.met == state.met


def test_an_old_log_opens_folds_verifies_and_takes_desk_commands(tmp_path):
    setup = make_chronicle(tmp_path / "c.db")  # written with no desk event at all
    with SQLiteStore(setup.db) as store:
        assert not any(r.type.startswith("desk.") for r in store.read_after(setup.session))
        state = store.load_state(setup.session, use_snapshots=False)
        assert state.desk == desk.State() and not state.session.venue_frozen
        assert game.fold([]).desk == desk.State()
        report = verify_store(store, "old")
        assert report.ok, report.text()
        chronicle = Chronicle(store)
        for cmd in (command("announce", text="Doors close at midnight"),
                    command("start_countdown", clock="midnight", minutes=30),
                    command("freeze", scope="venue"), command("resume", scope="venue"),
                    command("close_session")):
            assert not chronicle.execute_sync(setup.session, cmd, STORYTELLER).outcome.rejected, cmd
        assert chronicle.state(setup.session).desk.announcements[0].text == "Doors close at midnight"
        # the night with its desk events, closed: its chain and draws verify as before
        report = verify_store(store, "new")
        assert report.ok and report.sessions_checked >= 1, report.text()
        again = store.load_state(setup.session, use_snapshots=False)
        assert again.desk == chronicle.state(setup.session).desk


class _OldCountdownStarted(Event, frozen=True, kw_only=True, tag="desk.countdown_started"):
    """``desk.countdown_started`` as it was written before countdowns had a scope."""

    clock: str
    label: str = ""
    unit: str = "minutes"
    length: int = 0
    ends_at: float | None = None
    ends_turn: int | None = None


def test_a_log_whose_countdowns_have_no_scope_folds_verifies_and_takes_scoped_ones(tmp_path):
    setup = make_chronicle(tmp_path / "c.db")
    with SQLiteStore(setup.db) as store:
        store.append_sync(Pending(session=setup.session, actor="storyteller", events=[
            _OldCountdownStarted(clock="prince", label="The Prince", length=10, ends_at=1_800_000_600.0)]))
        (row,) = [r for r in store.read_after(setup.session) if r.type == "desk.countdown_started"]
        assert b"scope" not in bytes(row.data)  # the bytes an older server wrote
        state = store.load_state(setup.session, use_snapshots=False)
        assert (state.desk.countdowns["prince"].scope, state.desk.countdowns["prince"].scene) == ("session", None)
        chronicle = Chronicle(store)
        scene = next(iter(chronicle.state(setup.session).session.scenes))
        for cmd in (command("pause_countdown", clock="prince"),
                    command("start_countdown", clock="rats", turns=3, scope="scene", scene=scene),
                    command("close_session")):
            assert not chronicle.execute_sync(setup.session, cmd, STORYTELLER).outcome.rejected, cmd
        report = verify_store(store, "old countdowns")
        assert report.ok and report.sessions_checked >= 1, report.text()
        again = store.load_state(setup.session, use_snapshots=False).desk.countdowns
        assert again == chronicle.state(setup.session).desk.countdowns and again["rats"].scene == scene
