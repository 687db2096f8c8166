"""A server that plays the night keeps its true state's finished challenges compressed.

The command path (``Chronicle``) holds each session's true state as long as it runs, and
its finished MET challenges grow with the night, about 136 bytes an event. Their final pages
are held compressed in place (``pages.Page``): read back when a decider asks for one
(an overrule, MET-14), copied back into a plain page by the evolver that changes one, and
encoded as the page it stands for by the snapshot codec. These tests shrink the pages so a short night
has many, play the same seeded night through a compressing Chronicle and a plain one, and
compare every stored event and the state, also after a restart from a snapshot; then
measure with tracemalloc what playing adds to what is kept.
"""

from __future__ import annotations

import gc
import random
import tracemalloc

import msgspec

from conteur.events import game, met
from conteur.events.model import STORYTELLER
from conteur.server.cli.simulate import next_commands, setup_commands
from conteur.server.core import pages
from conteur.server.core.service import Chronicle
from conteur.server.store import snapshot as snapshots
from conteur.server.store.codec import decode_events
from conteur.server.store.sqlite import SQLiteStore
from tests.support.examples import examples

SESSION = "s"


def layout(state) -> list[type]:
    return [type(page) for page in state.met.done]


def compressed_as_a_full_pass(chronicle: Chronicle) -> None:
    """The pages a compressing Chronicle compressed, looking only at those that may have
    changed since its last pass, are those a pass over every page compresses."""
    state = chronicle.state(SESSION)
    assert layout(state) == layout(pages.compressed(state))


def play(chronicle: Chronicle, rng: random.Random, commands: int, overrules: float, *, full_pass: bool = False) -> int:
    """Random players' commands (``conteur simulate``'s), and now and then a storyteller
    overruling a resolved challenge (MET-14); returns how many overrules named a
    challenge whose page was compressed at the time. With ``full_pass``, each command's
    state is checked to be compressed as a pass over every page compresses it."""
    compressed_overrules = 0
    if not chronicle.store.session_head(SESSION):
        for actor, cmd in setup_commands(rng, "met"):
            chronicle.submit(SESSION, cmd, actor).result()
    for _ in range(commands):
        state = chronicle.state(SESSION)
        if rng.random() < overrules:
            resolved = [c for page in state.met.done for c in page.values() if c.status == "resolved"]
            if resolved:
                ch = rng.choice(resolved)
                compressed_overrules += type(state.met.done[met._page(ch.id)]) is pages.Page
                chronicle.submit(SESSION, met.Overrule(challenge=ch.id, winner=rng.choice(ch.sides),
                                                       reason="on reflection"), STORYTELLER).result()
                if full_pass:
                    compressed_as_a_full_pass(chronicle)  # the overruled page compressed again
                continue
        for actor, cmd in next_commands(rng, "met", state):
            chronicle.submit(SESSION, cmd, actor).result()
        if full_pass:
            compressed_as_a_full_pass(chronicle)
    return compressed_overrules


def night(db, *, compress: bool, commands: int, seed: str, snapshot_every: int = 10**9) -> tuple[list, object, int]:
    """The stored rows of a night played by one Chronicle, its state as it stands (made
    whole), and the overrules of compressed challenges."""
    with SQLiteStore(db, snapshot_every=10**9) as store:
        chronicle = Chronicle(store, compress=compress, snapshot_every=snapshot_every,
                              randbytes=random.Random(seed).randbytes)
        compressed_overrules = play(chronicle, random.Random(seed), commands, overrules=0.03, full_pass=compress)
        kept = chronicle.state(SESSION)
        assert any(type(page) is pages.Page for page in kept.met.done) == compress
        # a snapshot's bytes are those of the state made whole
        assert snapshots.encode(1, "", kept) == snapshots.encode(1, "", pages.whole(kept))
        chronicle._snapshots.shutdown(wait=True)  # its snapshots written before the store closes
        rows = [(r.seq, r.type, bytes(r.data)) for r in store.read_after(SESSION, 0)]
        return rows, pages.whole(kept), compressed_overrules


def test_a_compressing_chronicle_decides_byte_for_byte_as_a_plain_one(tmp_path, monkeypatch):
    monkeypatch.setattr(met, "PAGE", 4)
    commands = examples(800)
    rows, state, compressed_overrules = night(tmp_path / "compressed.db", compress=True, commands=commands, seed="same",
                                  snapshot_every=97)
    plain_rows, plain_state, _ = night(tmp_path / "plain.db", compress=False, commands=commands, seed="same")
    assert compressed_overrules >= 3  # overrules of challenges whose page was compressed
    assert len(rows) > commands and rows == plain_rows
    # the state the plain Chronicle holds, and the plain fold of the log from nothing
    assert state == plain_state
    assert state.met.done == plain_state.met.done and not any(type(p) is pages.Page for p in state.met.done)
    folded = game.fold(decode_events([data for _, _, data in rows]))
    assert snapshots.encode(1, "", state) == snapshots.encode(1, "", msgspec.structs.replace(folded, head=state.head))
    # a restart: the state loaded from the compressing Chronicle's last snapshot and the tail
    with SQLiteStore(tmp_path / "compressed.db") as store:
        snapshot = store.latest_snapshot(SESSION)
        assert snapshot is not None and snapshot[0] > len(rows) // 2
        restarted = Chronicle(store).state(SESSION)
        assert restarted.head == rows[-1][0]
        assert msgspec.structs.replace(pages.whole(restarted), head=0) == plain_state
        # and it decides on as the plain one does: a few more commands on both files
    more = examples(100)
    with SQLiteStore(tmp_path / "compressed.db") as a, SQLiteStore(tmp_path / "plain.db") as b:
        play(Chronicle(a, randbytes=random.Random("more").randbytes), random.Random("more"), more, 0.05)
        play(Chronicle(b, compress=False, randbytes=random.Random("more").randbytes), random.Random("more"), more, 0.05)
        assert [bytes(r.data) for r in a.read_after(SESSION, 0)] == [bytes(r.data) for r in b.read_after(SESSION, 0)]


def grown_per_event(db, compress: bool, commands: int) -> float:
    """Bytes a playing Chronicle (and its store) holds more after the second half of a
    night than after the first, per event of the second half (tracemalloc)."""
    with SQLiteStore(db, snapshot_every=10**9) as store:
        chronicle = Chronicle(store, compress=compress, snapshot_every=10**9)
        rng = random.Random("grow")
        gc.collect()
        tracemalloc.start()
        try:
            play(chronicle, rng, commands, overrules=0.0)
            gc.collect()
            half, head = tracemalloc.get_traced_memory()[0], store.session_head(SESSION)
            play(chronicle, rng, commands, overrules=0.0)
            gc.collect()
            whole, events = tracemalloc.get_traced_memory()[0], store.session_head(SESSION) - head
        finally:
            tracemalloc.stop()
    return (whole - half) / events


def test_what_a_playing_chronicle_keeps_does_not_grow_with_finished_challenges(tmp_path, monkeypatch):
    """The true state's finished challenges held whole grew by 80 bytes an event of this
    night (136 on bench/night.py's); compressed in place, by about 17, the compressed
    pages of 16 challenges and the command path's own growth (tracemalloc, no timing)."""
    monkeypatch.setattr(met, "PAGE", 16)
    commands = 1200
    compressed = grown_per_event(tmp_path / "compressed.db", True, commands)
    plain = grown_per_event(tmp_path / "plain.db", False, commands)
    assert plain > 60, (compressed, plain)
    assert compressed < plain / 3, (compressed, plain)


class Counted(tuple):
    """A state's pages that count how often one is looked at."""

    looked = 0

    def __getitem__(self, n):
        type(self).looked += 1
        return tuple.__getitem__(self, n)


def test_a_command_that_finishes_nothing_looks_at_no_finished_page(tmp_path, monkeypatch):
    """Each command looked at every page below the final one, to compress those that had
    become final: 13 us a command by the sixth hour of a night, and growing with it. Now
    only the pages that became final since the last command, or that its events named."""
    monkeypatch.setattr(met, "PAGE", 4)
    with SQLiteStore(tmp_path / "night.db", snapshot_every=10**9) as store:
        chronicle = Chronicle(store, snapshot_every=10**9)
        play(chronicle, random.Random("pages"), 400, overrules=0.0)
        state = chronicle.state(SESSION)
        final = sum(type(page) is pages.Page for page in state.met.done)
        assert final > 10
        counted = Counted(state.met.done)
        chronicle._states[SESSION] = msgspec.structs.replace(state, met=msgspec.structs.replace(state.met, done=counted))
        # a refused overrule (no such challenge): decided, folded, compressed; its state's pages the same
        refused = chronicle.submit(SESSION, met.Overrule(challenge=f"c{10**6}", winner="x", reason="?"),
                                   STORYTELLER).result()
        assert refused.outcome.rejected
        assert chronicle.state(SESSION).met.done is counted
        assert Counted.looked <= 2, f"{Counted.looked} pages looked at, of {final} final ones"
        chronicle._snapshots.shutdown(wait=True)
