"""The Python client against a real server on loopback: folding, a whole challenge,
a dropout through a proxy, and a process restart with commands still in the outbox."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from conteur.client.client import Backoff, Client, ClientError, decode_event
from conteur.client.outbox import Outbox
from conteur.events import game
from tests.support.client_support import Proxy, events_of_type, served, stored_rows

ROOT = Path(__file__).resolve().parents[2]



def fast() -> Backoff:
    return Backoff(base=0.05, cap=0.5)


def server_state(server, session):
    return server.runtime.chronicle.state(session)


def same_state(a, b) -> bool:
    strip = lambda s: msgspec.to_builtins(msgspec.structs.replace(s, head=0), enc_hook=game.enc_hook)  # noqa: E731
    return strip(a) == strip(b)


async def until(predicate, timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


def player(server, setup, who, tmp_path, **kw) -> Client:
    url = kw.pop("url", server.ws_url)
    return Client(url, setup.players[who], setup.session, outbox=kw.pop("outbox", tmp_path / f"{who}.sqlite"),
                  backoff=fast(), **kw)


# -- units -------------------------------------------------------------------------------


def test_backoff_grows_with_jitter_and_is_capped():
    backoff = Backoff(base=0.5, cap=4.0, rng=random.Random(7))
    delays = [backoff.next() for _ in range(8)]
    ceilings = [min(4.0, 0.5 * 2**i) for i in range(8)]
    assert all(c / 2 <= d <= c for d, c in zip(delays, ceilings))
    assert max(delays) <= 4.0
    backoff.reset()
    assert backoff.next() <= 0.5


def test_unknown_event_type_is_kept_raw():
    raw = {"type": "future.thing_happened", "x": 1}
    assert decode_event(raw) == raw


def test_outbox_keeps_ids_order_and_cursor_across_reopen(tmp_path):
    path = tmp_path / "o.sqlite"
    box = Outbox(path)
    device = box.device()
    first = box.put("s", {"type": "throw"})
    second = box.put("s", {"type": "bid"})
    box.record("s", [(3, {"type": "a"}), (5, {"type": "b"})])
    box.close()
    again = Outbox(path)
    assert again.device() == device
    assert [e.id for e in again.queued("s")] == [first, second]
    assert again.last_seq("s") == 5
    again.acked(first, [9])
    assert [e.id for e in again.queued("s")] == [second]


def test_outbox_prunes_answered_commands_older_than_a_day_only(tmp_path):
    import time

    path = tmp_path / "o.sqlite"
    box = Outbox(path)
    old_ack, old_reject, old_queued, fresh_ack = (box.put("s", {"type": "throw"}) for _ in range(4))
    box.acked(old_ack, [4])
    box.rejected(old_reject, "rule", "no (MET-3)")
    box._db.execute("UPDATE outbox SET made_at = made_at - 2 * 86400 WHERE id != ?", (fresh_ack,))
    box.acked(fresh_ack, [5])
    box.record("s", [(4, {"type": "a"}), (5, {"type": "b"})])
    assert box.prune(now=time.time()) == 2
    assert {e.id for e in box.all()} == {old_queued, fresh_ack}  # a queued one still goes out
    assert box.last_seq("s") == 5 and [seq for seq, _ in box.log("s")] == [4, 5]  # the fold's events
    assert box.prune(older_than=0, now=time.time() + 1) == 1  # only the answered one
    assert [e.id for e in box.queued("s")] == [old_queued]
    box.close()


# -- against a real server ---------------------------------------------------------------


async def test_storyteller_fold_equals_server_state(server, setup, tmp_path):
    async with Client(server.ws_url, setup.storyteller, setup.session, outbox=tmp_path / "st.sqlite",
                      backoff=fast()) as st:
        await st.wait_live()
        assert st.viewer.role == "storyteller"
        assert st.state is not None
        assert same_state(st.state, server_state(server, setup.session))
        assert st.state.session.characters["anna"].sheet is not None  # storytellers see sheets


async def test_bad_token_is_refused_for_good(server, setup, tmp_path):
    async with Client(server.ws_url, "not-a-token", setup.session, outbox=tmp_path / "x.sqlite",
                      backoff=fast()) as bad:
        with pytest.raises(ClientError) as refused:
            await bad.wait_live()
        assert refused.value.code == "unauthorized"


async def test_met_3_challenge_with_a_tie_and_bids_to_its_end(server, setup, tmp_path):
    # MET-2 throws, MET-3 tie -> bids (initiator first), the higher bid wins, MET-16 accept
    st = Client(server.ws_url, setup.storyteller, setup.session, outbox=tmp_path / "st.sqlite", backoff=fast())
    async with player(server, setup, "anna", tmp_path) as anna, player(server, setup, "bruno", tmp_path) as bruno, st:
        for c in (anna, bruno, st):
            await c.wait_live()
        issued = await anna.outcome(anna.challenge("bruno", "physical", abilities=("melee",)))
        assert issued.ok, issued
        await until(lambda: "c1" in bruno.state.met.challenges)
        assert (await anna.outcome(anna.throw("c1", "rock"))).ok
        assert (await bruno.outcome(bruno.throw("c1", "rock"))).ok
        await until(lambda: anna.state.met.challenges["c1"].status == "bidding")
        refused = await bruno.outcome(bruno.bid("c1", 9))
        assert refused.code == "rule" and "MET-3" in refused.message  # the initiator first
        assert (await anna.outcome(anna.bid("c1", 8))).ok
        assert (await bruno.outcome(bruno.bid("c1", 9, abilities=("brawl",)))).ok  # its own (MET-3)
        await until(lambda: anna.state.met.challenges["c1"].status == "window")
        assert anna.state.met.challenges["c1"].winner == "bruno"
        assert (await anna.outcome(anna.accept("c1"))).ok
        await until(lambda: st.state.met.challenges["c1"].status == "resolved")
        await until(lambda: st.last_seq == server.runtime.store.session_head(setup.session))
        assert same_state(st.state, server_state(server, setup.session))
        # a player never held the other's bid before the comparison (MET-3)
        seen = [d.raw for d in anna.received if d.type == "met.bid_declared" and d.raw["character"] == "bruno"]
        assert seen and all(raw.get("value") is None for raw in seen)


async def test_dropout_throw_is_queued_then_acknowledged_exactly_once(server, setup, tmp_path):
    with Proxy(server.port) as proxy:
        async with player(server, setup, "anna", tmp_path, url=proxy.ws_url) as anna, \
                player(server, setup, "bruno", tmp_path) as bruno:
            await anna.wait_live()
            await bruno.wait_live()
            assert (await anna.outcome(anna.challenge("bruno", "physical"))).ok
            await until(lambda: "c1" in anna.state.met.challenges)
            proxy.cut(hold=True)
            await until(lambda: not anna.live.is_set())
            throw_id = anna.throw("c1", "paper")
            assert [e.id for e in anna.queued()] == [throw_id]
            assert (await bruno.outcome(bruno.throw("c1", "rock"))).ok  # play goes on
            await asyncio.sleep(0.3)  # some reconnect attempts hit the held proxy
            proxy.release()
            result = await anna.outcome(throw_id, timeout=15)
            assert result.ok and len(result.seqs) >= 1
            assert anna.queued() == []
            await until(lambda: anna.state.met.challenges["c1"].status in ("window", "resolved"))
            assert anna.state.met.challenges["c1"].winner == "anna"  # paper covers rock
            assert anna.connections >= 2
    rows = stored_rows(setup.db, throw_id)
    assert [t for _, t in rows].count("met.throw_committed") == 1
    throws = [e for e in events_of_type(setup.db, "met.throw_committed") if e["character"] == "anna"]
    assert len(throws) == 1


# The child: joins through the proxy, waits for the challenge, signals, loses the link,
# throws while offline, prints the throw's id, and waits to be killed.
CHILD = """
import asyncio, sys
from conteur.client.client import Client, Backoff
url, token, session, outbox, flag = sys.argv[1:6]

async def main():
    c = Client(url, token, session, outbox=outbox, backoff=Backoff(0.05, 0.2))
    c.start()
    await c.wait_live()
    while "c1" not in c.state.met.challenges:
        await asyncio.sleep(0.02)
    open(flag, "w").close()
    while c.live.is_set():
        await asyncio.sleep(0.02)
    print("ID", c.throw("c1", "scissors"), flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


async def test_process_restart_sends_the_outbox_with_the_same_ids(server, setup, tmp_path):
    outbox_path = str(tmp_path / "anna.sqlite")
    async with player(server, setup, "bruno", tmp_path) as bruno:
        await bruno.wait_live()
        assert (await bruno.outcome(bruno.challenge("anna", "physical"))).ok
        with Proxy(server.port) as proxy:
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, proxy.ws_url, setup.players["anna"], setup.session,
                 outbox_path, str(tmp_path / "ready")],
                stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            try:
                await until(lambda: (tmp_path / "ready").exists(), timeout=20)
                proxy.cut(hold=True)  # the phone loses the Wi-Fi...
                line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 20)
                assert line.startswith("ID "), line
                throw_id = line.split()[1]
            finally:
                child.kill()  # ...and the app is killed with a throw in its outbox
                child.wait()
        assert stored_rows(setup.db, throw_id) == []
        box = Outbox(outbox_path)
        assert [e.id for e in box.queued()] == [throw_id]
        before = box.last_seq(setup.session)
        box.close()
        assert before > 0
        # a new process on the same outbox file, straight to the server this time
        async with player(server, setup, "anna", tmp_path, outbox=outbox_path) as anna:
            assert anna.state is not None and "c1" in anna.state.met.challenges  # from its own log
            result = await anna.outcome(throw_id, timeout=15)
            assert result.ok
            assert anna.last_seq >= before
            assert (await bruno.outcome(bruno.throw("c1", "paper"))).ok
            await until(lambda: anna.state.met.challenges["c1"].status in ("window", "resolved"))
            assert anna.state.met.challenges["c1"].winner == "anna"  # scissors cut paper
    rows = stored_rows(setup.db, throw_id)
    assert [t for _, t in rows].count("met.throw_committed") == 1


async def test_a_server_with_less_history_makes_the_client_start_over(setup, tmp_path):
    # docs/protocol.md: live.head < after means another database (a restored backup):
    # the client drops its copy and resyncs from 0 instead of keeping ghosts
    import shutil

    restored = tmp_path / "restored.db"
    shutil.copy(setup.db, restored)  # the backup, taken before the freeze below
    with served(setup.db) as first, Proxy(first.port) as proxy:
        async with Client(proxy.ws_url, setup.storyteller, setup.session, outbox=tmp_path / "st.sqlite",
                          backoff=fast()) as st:
            await st.wait_live()
            assert (await st.outcome(st.freeze())).ok
            assert (await st.outcome(st.resume())).ok
            ahead = st.last_seq
            with served(restored) as second:
                proxy.cut(hold=True)
                proxy.target_port = second.port
                proxy.release()
                await until(lambda: st.live.is_set() and st.connections >= 2 and st.last_seq < ahead)
                assert st.last_seq == second.runtime.store.session_head(setup.session)
                assert same_state(st.state, server_state(second, setup.session))
                assert [d.seq for d in st.received] == sorted({d.seq for d in st.received})


async def test_a_restored_backup_played_on_past_the_clients_seq_is_caught_by_hello_last(setup, tmp_path):
    # docs/protocol.md, Restored backup: the restored server reused the seqs the client
    # holds for other events, so live.head < after cannot show it; hello.last does
    import shutil

    restored = tmp_path / "restored.db"
    shutil.copy(setup.db, restored)
    with served(setup.db) as first, Proxy(first.port) as proxy:
        async with Client(proxy.ws_url, setup.storyteller, setup.session, outbox=tmp_path / "st.sqlite",
                          backoff=fast()) as st:
            await st.wait_live()
            assert (await st.outcome(st.freeze())).ok
            ahead = st.last_seq
            proxy.cut(hold=True)
            queued = st.resume()  # made offline, against the history the client holds
            with served(restored) as second:
                async with Client(second.ws_url, setup.storyteller, setup.session,
                                  outbox=tmp_path / "other.sqlite", backoff=fast()) as other:
                    await other.wait_live()
                    # another event at the client's last seq (a refusal is recorded too)
                    assert not (await other.outcome(other.resume())).ok
                    while other.last_seq <= ahead:  # the evening goes on over the same seqs
                        assert (await other.outcome(other.freeze())).ok
                        assert (await other.outcome(other.resume())).ok
                proxy.target_port = second.port
                proxy.release()
                await until(lambda: st.live.is_set() and st.diverged == 1
                            and st.last_seq == second.runtime.store.session_head(setup.session))
                assert same_state(st.state, server_state(second, setup.session))
                assert [d.seq for d in st.received] == sorted({d.seq for d in st.received})
                # the offline command was not lost with the log: decided on this history
                result = await st.outcome(queued, timeout=15)
                assert not result.ok and result.code  # nothing is frozen here: a reason comes back


@pytest.mark.parametrize(("seed", "batch"), [(3, True), (11, True), (3, False)])
async def test_storyteller_fold_equals_server_state_after_a_simulated_evening(tmp_path, seed, batch):
    # every MET/TIME event kind the simulator plays, folded by the client from the wire;
    # with ``batch`` in hello the resync comes as a few messages (docs/protocol.md)
    from conteur.server.core.auth import Tokens
    from conteur.server.core.service import Chronicle
    from conteur.server.cli.simulate import play
    from conteur.server.store.sqlite import SQLiteStore

    db = str(tmp_path / "sim.db")
    with SQLiteStore(db) as store:
        play(Chronicle(store), "sim", events=400, seed=seed, ruleset="met", close=False)
        token = Tokens(store).issue("storyteller", session="sim")
    with served(db) as server:
        async with Client(server.ws_url, token, outbox=tmp_path / "st.sqlite", backoff=fast(),
                          batch=batch) as st:
            await st.wait_live()
            assert st.session == "sim"
            assert st.state is not None, st.fold_error
            assert same_state(st.state, server_state(server, "sim"))
            assert len(st.state.met.challenges) > 3
            frames = len(st.received) + 2  # the events, welcome and live
            if batch:
                assert st.messages < frames / 4
            else:
                assert st.messages >= frames
        # the events held on disk are the ones received: a restart folds the same state,
        # even once the answered commands are pruned (the outbox file of a long chronicle)
        box = Outbox(tmp_path / "st.sqlite")
        box.acked(box.put("sim", {"type": "next_turn"}), [1])
        box._db.execute("UPDATE outbox SET made_at = made_at - 2 * 86400")
        box.close()
        again = Client(server.ws_url, token, outbox=tmp_path / "st.sqlite", backoff=fast())
        assert again.outbox.all() == []
        try:
            assert same_state(again.state, server_state(server, "sim"))
        finally:
            await again.close()


async def test_met_12_13_retest_then_a_failed_overbid_through_the_helpers(server, setup, tmp_path):
    st = Client(server.ws_url, setup.storyteller, setup.session, outbox=tmp_path / "st.sqlite", backoff=fast())
    async with player(server, setup, "anna", tmp_path) as anna, player(server, setup, "bruno", tmp_path) as bruno, st:
        for c in (anna, bruno, st):
            await c.wait_live()
        assert (await anna.outcome(anna.challenge("bruno", "physical"))).ok
        await until(lambda: "c1" in bruno.state.met.challenges)

        async def round_of(a: str, b: str) -> None:
            assert (await anna.outcome(anna.throw("c1", a))).ok
            assert (await bruno.outcome(bruno.throw("c1", b))).ok
            await until(lambda: anna.state.met.challenges["c1"].status == "window")

        await round_of("rock", "paper")  # Bruno wins on the throw
        # MET-12: the source must be on the sheet; one retest per character
        refused = await anna.outcome(anna.retest("c1", "sorcery"))
        assert refused.code == "rule" and "MET-12" in refused.message
        assert (await anna.outcome(anna.retest("c1", "melee"))).ok
        await until(lambda: anna.state.met.challenges["c1"].round == 2)
        await round_of("scissors", "rock")  # Bruno wins again
        assert "MET-12" in (await anna.outcome(anna.retest("c1", "brawl"))).message
        # MET-13: Anna overbids 6; Bruno answers 7: not 4 above, she loses and owes a tie
        assert (await anna.outcome(anna.overbid("c1", 6))).ok
        await until(lambda: bruno.state.met.challenges["c1"].status == "overbid")
        assert (await bruno.outcome(bruno.bid("c1", 7))).ok
        await until(lambda: st.state.met.challenges["c1"].status == "resolved")
        ch = st.state.met.challenges["c1"]
        assert (ch.winner, ch.loser, ch.reason) == ("bruno", "anna", "overbid_failed")
        assert [(d.debtor, d.creditor) for d in st.state.met.debts] == [("anna", "bruno")]
