"""Several server processes on one PostgreSQL store.

Each ``Venue`` here is a whole server (its own store, connections, writer thread,
Chronicle with its in-memory states, hub and timers) on its own port, as a process is:
they share nothing but the database. Real ``serve`` processes (``--workers``, kill -9)
are in tests/faults/test_procs_faults.py.
"""

from __future__ import annotations

import asyncio

import pytest

from conteur.server.audit.verify import verify_store
from conteur.server.store.chain import verify_rows
from conteur.server.store.factory import open_store
from conteur.server.testing import Device, Venue
from tests.support.every_command import SETUP as EVERY_SETUP

pytest.importorskip("psycopg")

SETUP = EVERY_SETUP[:5]  # a session, a scene, two MET characters and a V5 one


def challenge(n: int) -> list[dict]:
    """One MET challenge (MET-3 throws, a tie then a win), with a V5 roll between (fair
    draws: a stale draw counter would repeat a draw, which verify names)."""
    c = f"c{n}"
    return [
        {"type": "challenge", "character": "anna", "defender": "bruno", "attribute": "physical"},
        {"type": "roll_pool", "character": "vic", "attribute": "Dexterity", "skill": "Stealth"},
        {"type": "throw", "character": "anna", "challenge": c, "round": 1, "choice": "rock"},
        {"type": "throw", "character": "bruno", "challenge": c, "round": 1, "choice": "scissors"},
        {"type": "roll_pool", "character": "vic", "attribute": "Dexterity", "skill": "Stealth"},
        {"type": "accept", "character": "bruno", "challenge": c},
    ]


def stream(device: Device) -> list[tuple[int, str]]:
    return [(seq, event["type"]) for seq, event in device.events]


async def until(predicate, what: str, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, what
        await asyncio.sleep(0.02)


async def test_two_processes_decide_alternately_on_one_challenge_and_every_device_sees_one_stream(pg_url):
    """Each command goes to the other process than the one before, so each decides on a
    state the other has moved: its append comes back stale, it catches up from the store
    and decides again. Every command is acknowledged, nothing is refused, the draws
    verify (no draw counter reused), and devices on both processes see the same events
    in the same order, with no gap and no repeat."""
    with Venue(pg_url) as a, Venue(pg_url) as b:
        token = a.token()
        st = [Device(v.ws_url, token, "night", device=f"tablet-{k}") for k, v in enumerate((a, b))]
        watchers = [Device(v.ws_url, token, "night", device=f"wall-{k}") for k, v in enumerate((a, b))]
        for d in st + watchers:
            await d.connect()
        try:
            steps = SETUP + [s for n in range(1, 4) for s in challenge(n)]
            steps.append({"type": "close_session"})
            for i, step in enumerate(steps):
                answer = await st[i % 2].command(step, timeout=30)
                assert answer["type"] == "ack", (step, answer)
            with open_store(pg_url) as store:
                head = store.head()
                rows = list(store.rows())
            assert not [r for r in rows if r.type == "command_rejected"]
            for d in st + watchers:
                await until(lambda d=d: d.events and d.events[-1][0] >= head, f"{d.device} saw every event")
            seen = [stream(d) for d in st + watchers]
            assert seen[0] == [(r.seq, r.type) for r in rows]
            assert all(s == seen[0] for s in seen)
            # both processes really decided: half the commands each, after the other
            assert {r.device.rsplit(":", 1)[-1] for r in rows} == {"tablet-0", "tablet-1"}
        finally:
            for d in st + watchers:
                await d.close()
    with open_store(pg_url) as store:
        report = verify_store(store, "pg")
        assert report.ok, report.text()
        assert report.draws_checked >= 6 and report.sessions_checked == 1


async def test_one_command_id_sent_to_both_processes_at_once_is_decided_once(pg_url):
    """A phone's outbox may send the same command to two processes (it reconnected
    through the proxy to the other while the first still had it): one decision, the
    same acknowledgement from both, one set of events on every device."""
    with Venue(pg_url) as a, Venue(pg_url) as b:
        token = a.token()
        first, second = (Device(v.ws_url, token, "night", device="tablet") for v in (a, b))
        watch = Device(b.ws_url, token, "night", device="wall")
        for d in (first, second, watch):
            await d.connect()
        try:
            for step in SETUP:
                assert (await first.command(step))["type"] == "ack"
            for n in range(20):
                command = {"type": "roll_pool", "character": "vic", "attribute": "Dexterity", "skill": "Stealth"}
                answers = await asyncio.gather(first.command(command, id=f"same-{n}", timeout=30),
                                               second.command(command, id=f"same-{n}", timeout=30))
                assert [x["type"] for x in answers] == ["ack", "ack"], answers
                assert answers[0]["seqs"] == answers[1]["seqs"], answers
            with open_store(pg_url) as store:
                rows = list(store.rows())
            rolled = [r for r in rows if r.command_id.startswith("same-")]
            assert sorted(r.command_id for r in rolled) == sorted(f"same-{n}" for n in range(20))
            assert verify_rows(rows, gapless=True) == (len(rows), None)
            await until(lambda: watch.events and watch.events[-1][0] >= rows[-1].seq, "the wall saw all")
            assert [s for s, _ in watch.events] == [r.seq for r in rows]
        finally:
            for d in (first, second, watch):
                await d.close()


async def test_a_device_resyncs_on_the_other_process_from_its_last_seq(pg_url):
    """A device that saw part of the stream on one process and reconnects to the other
    with its last seq gets exactly the rest (resync works on any process)."""
    with Venue(pg_url) as a, Venue(pg_url) as b:
        token = a.token()
        async with Device(a.ws_url, token, "night", device="tablet") as st:
            for step in SETUP:
                assert (await st.command(step))["type"] == "ack"
            phone = Device(a.ws_url, token, "night", device="phone")
            await phone.connect()
            await until(lambda: len(phone.events) == len(SETUP), "the phone saw the set-up")
            last = phone.events[-1][0]
            await phone.close()
            for _ in range(5):
                assert (await st.command({"type": "skip_time", "seconds": 60}))["type"] == "ack"
            async with Device(b.ws_url, token, "night", device="phone", after=last) as again:
                await until(lambda: len(again.events) == 5, "the rest on the other process")
                assert [e["type"] for _, e in again.events] == ["session.time_skipped"] * 5
                assert again.events[0][0] > last
                # and live: the next command on the first process reaches it
                assert (await st.command({"type": "skip_time", "seconds": 60}))["type"] == "ack"
                await until(lambda: len(again.events) == 6, "a live event from the other process")


def test_an_append_on_a_session_another_process_moved_is_stale_and_writes_nothing(pg_url):
    """The store's half (what each Chronicle relies on): two stores as two processes."""
    from conteur.events.game import CommandRejected
    from conteur.server.store.interface import Basis, Pending
    from conteur.server.store.postgres import PostgresStore

    ev = CommandRejected(command_type="bid", code="rule", message="too high", character="anna")
    with PostgresStore(pg_url) as a, PostgresStore(pg_url) as b:
        t1 = Basis()
        assert a.append_sync(Pending(session="s", events=[ev], basis=Basis(0), then=t1)).seqs == (1,)
        assert t1.seq == 1
        # b decided on the empty session too: stale, nothing written, its chain broken
        tb = Basis()
        assert b.append_sync(Pending(session="s", events=[ev], basis=Basis(0), then=tb)).stale
        assert tb.seq == Basis.BROKEN and b.head() == 1
        # pipelined: the second decided on the first, before either committed
        t2, t3 = Basis(), Basis()
        f1 = a.submit(Pending(session="s", events=[ev], basis=t1, then=t2))
        f2 = a.submit(Pending(session="s", events=[ev, ev], basis=t2, then=t3))
        assert f1.result().seqs == (2,) and f2.result().seqs == (3, 4) and t3.seq == 4
        # another process writes: the next link is stale, and every link chained on it
        b.append_sync(Pending(session="s", events=[ev]))
        t4, t5 = Basis(), Basis()
        g1 = a.submit(Pending(session="s", events=[ev], basis=t3, then=t4))
        g2 = a.submit(Pending(session="s", events=[ev], basis=t4, then=t5))
        assert g1.result().stale and g2.result().stale and a.head() == 5
        # another session's appends do not move this one's basis
        b.append_sync(Pending(session="other", events=[ev]))
        assert a.append_sync(Pending(session="s", events=[ev], basis=Basis(5))).seqs == (7,)
        # a command id decided by another process answers with its outcome, basis or not
        first = a.append_sync(Pending(session="s", events=[ev], device="d", command_id="c", basis=Basis(7)))
        again = b.append_sync(Pending(session="s", events=[ev], device="d", command_id="c", basis=Basis(0)))
        assert again.replayed and again.seqs == first.seqs == (8,)
        assert verify_rows(list(a.rows()), gapless=True) == (8, None)


async def test_a_window_timer_armed_in_both_processes_closes_the_window_once(pg_url):
    """MET-16 on two processes: the window opened by commands to one process is armed by
    the other too (it learns of it from the store's tail); both fire, the closing is
    decided once (one command id per window), nothing refused is logged."""
    from conteur.server.core.timers import ManualClock
    from conteur.server.web.app import Settings

    clock = ManualClock()
    with Venue(pg_url, Settings(timer_clock=clock)) as a, Venue(pg_url, Settings(timer_clock=clock)) as b:
        token = a.token()
        async with Device(a.ws_url, token, "night", device="tablet") as st, \
                Device(b.ws_url, token, "night", device="wall") as wall:
            steps = [dict(SETUP[0], accept_timeout=1), *SETUP[1:], {"type": "join_scene", "character": "anna",
                                                                    "scene": "hall"},
                     {"type": "join_scene", "character": "bruno", "scene": "hall"},
                     {"type": "challenge", "character": "anna", "defender": "bruno", "attribute": "physical"},
                     {"type": "throw", "character": "anna", "challenge": "c1", "round": 1, "choice": "paper"},
                     {"type": "throw", "character": "bruno", "challenge": "c1", "round": 1, "choice": "rock"}]
            for step in steps:
                assert (await st.command(step))["type"] == "ack", step
            await until(lambda: clock.sleeping == 2, "the window armed in both processes")
            clock.advance(1)
            await wall.wait_event("met.challenge_resolved", timeout=15)
            await st.wait_event("met.challenge_resolved", timeout=15)
            await until(lambda: clock.sleeping == 0, "both timers done")
    with open_store(pg_url) as store:
        types = [r.type for r in store.rows()]
    assert types.count("met.challenge_resolved") == 1
    assert "command_rejected" not in types


async def test_a_safety_call_decided_by_one_process_reaches_a_storyteller_on_the_other(pg_url):
    """The store's tail brings the call to the other process (server/core/safety.py):
    its storyteller socket of another session gets ``venue_calls``, also for a session
    opened after that process started, and then the call's taking."""
    with Venue(pg_url) as a, Venue(pg_url) as b:
        st = Device(a.ws_url, a.token("storyteller"), "cellar", device="tablet-a")
        garden = Device(b.ws_url, b.token("storyteller", session="garden"), "garden", device="tablet-b")
        await st.connect()
        await garden.connect()
        try:
            for step in SETUP[:3]:
                assert (await st.command(step, timeout=30))["type"] == "ack", step
            assert (await garden.command({"type": "open_session", "name": "Garden"}))["type"] == "ack"
            anna = Device(a.ws_url, a.token("player", "anna", "cellar"), "cellar", create=False)
            await anna.connect()
            assert (await anna.command({"type": "call_storyteller", "character": "anna", "kind": "safety"}))["type"] == "ack"
            told = await garden.wait_for(lambda f: f["type"] == "venue_calls", timeout=20)
            assert [c["session"] for c in told["calls"]] == ["cellar"] and "character" not in told["calls"][0]
            assert (await st.command({"type": "take_call", "call": "anna.1"}))["type"] == "ack"
            await garden.wait_for(lambda f: f["type"] == "venue_calls" and not f["calls"], timeout=20)
            await anna.close()
        finally:
            await st.close()
            await garden.close()
