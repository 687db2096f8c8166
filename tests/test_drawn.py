"""The stored draw summaries (issue 18 item 2): a store's replay merges each event's summary
instead of decoding and counting its draw records (FAIR-2: every stream's next counter and
the session-wide one), and ends on the very state ``evolve`` gives, byte for byte; a file
whose summaries are missing, partly written or forged folds the same, from the records;
``conteur verify`` names a summary that is not its event's; an old file gets them."""

from __future__ import annotations

import functools
import random
import shutil
import sqlite3

import msgspec
from hypothesis import given, settings, strategies as st

from conteur.events import drawn as summaries, game, met, session, v5
from conteur.events.model import STORYTELLER, DrawRecord
from conteur.server.audit.verify import verify_path
from conteur.server.cli.simulate import next_commands, play
from conteur.server.core.service import Chronicle
from conteur.server.store import codec, drawn, sqlite as store_sqlite
from conteur.server.store.interface import append_events
from conteur.server.store.sqlite import SQLiteStore
from tests.examples import examples
from tests.review_support import random_night

STREAMS = ["", "ana/open", "*/blind", "bo/secret=ana,bo"]


def reference(events) -> game.GameState:
    return functools.reduce(game.evolve, events, game.initial())


def logs(store: SQLiteStore) -> dict[str, list]:
    return {sid: [e for _, chunk in store.iter_events(sid) for e in chunk] for sid in store.sessions()}


def state_bytes(state: game.GameState) -> bytes:
    return codec.encode_state(msgspec.structs.replace(state, head=0))


def summed_chunks(path, sid: str) -> list[bool]:
    """For each chunk of the store's replay of ``sid``: whether it was fed summaries."""
    conn = sqlite3.connect(path)
    try:
        return [s is not None for _, _, s in store_sqlite._fold_chunks(conn, sid, 0, None, chunk=300)]
    finally:
        conn.close()


def replayed(path) -> dict[str, bytes]:
    """Every session folded as a start-up folds it, from zero, encoded."""
    with SQLiteStore(path) as store:
        return {sid: state_bytes(store.load_state(sid, use_snapshots=False)) for sid in store.sessions()}


records = st.lists(st.builds(DrawRecord, counter=st.integers(-2, 12), sides=st.just(6), face=st.just(1),
                             stream=st.sampled_from(STREAMS)), max_size=6)


@given(start=st.dictionaries(st.sampled_from(STREAMS[1:]), st.integers(0, 10), max_size=3),
       counter=st.integers(0, 10), events=st.lists(records, max_size=8))
@settings(max_examples=examples(300), deadline=None)
def test_merging_summaries_counts_as_count_draws_does(start, counter, events):
    """FAIR-2. Given a state's streams and session-wide counter (>= 0, as every state's)
    and events' draw records of any shape (one record or several, with streams or from
    before them, mixed, negative counters), when each event's summary is merged instead of
    its records counted, then the streams (their order too) and the counter are the same."""
    counted, merged = dict(start), dict(start)
    counted_n = merged_n = counter
    for recs in events:
        if recs:
            counted_n = game.count_draws(counted, counted_n, recs)
        summary = summaries.decode(summaries.encode(summaries.summarize(recs)))
        merged_n = summaries.merge(merged, merged_n, summary)
    assert list(merged.items()) == list(counted.items())
    assert merged_n == counted_n


def test_random_nights_fold_through_their_summaries_to_evolves_bytes(tmp_path):
    """FAIR-1, FAIR-2. Given random nights of the three rulesets written by the command
    path (one long enough for many chunks), when a start-up folds them (the summaries read
    beside the events, the records never decoded), then each state's bytes are those of
    ``reduce(evolve)`` over the whole events, and every chunk was fed its summaries."""
    rng = random.Random(18)
    db = tmp_path / "c.db"
    with SQLiteStore(db) as store:
        play(Chronicle(store), "n", events=examples(2500), seed=rng.randrange(1000), close=False)
    for ruleset in ("met", "v5", "action"):
        random_night(db, f"r-{ruleset}", ruleset, examples(25), rng, close=ruleset == "v5")
    with SQLiteStore(db) as store:
        expected = {sid: state_bytes(reference(events)) for sid, events in logs(store).items()}
        assert drawn.check(store._reader, store.rows()) == (None, sum(
            r.type in game.DRAWN_TAGS for r in store.rows()), 0)
    assert replayed(db) == expected
    for sid in expected:
        assert all(summed_chunks(db, sid))


def rewritten(events, rng: random.Random) -> list:
    """The events with their draw records changed into every shape a log may hold: none,
    from before streams, streams mixed in one event, counters below the streams' own."""
    out = []
    for e in events:
        if type(e) in game.DRAWN and e.draws and rng.random() < 0.6:
            shape = rng.choice(["old", "mixed", "none", "low"])
            if shape == "none":
                draws = ()
            else:
                draws = tuple(msgspec.structs.replace(
                    r, stream="" if shape == "old" else rng.choice(STREAMS) if shape == "mixed" else r.stream,
                    counter=r.counter if shape != "low" else rng.randrange(-1, 3)) for r in e.draws)
            e = msgspec.structs.replace(e, draws=draws)
        out.append(e)
    return out


def test_logs_of_every_shape_of_draws_fold_through_summaries_as_evolve(tmp_path):
    """FAIR-2. Given a night whose events' draw records take every shape a log may hold
    (old logs' session-wide counter, streams mixed in one event, no record, low counters),
    appended to a store, when it is folded from the summaries, then the bytes are evolve's."""
    rng = random.Random(7)
    with SQLiteStore(tmp_path / "src.db") as store:
        play(Chronicle(store), "n", events=examples(1200), seed=3, close=False)
        nights = {sid: rewritten(events, rng) for sid, events in logs(store).items()}
    with SQLiteStore(tmp_path / "c.db") as store:
        for sid, events in nights.items():
            for i in range(0, len(events), 7):
                append_events(store, sid, events[i:i + 7], actor="st", device="d", command_id="")
    assert replayed(tmp_path / "c.db") == {sid: state_bytes(reference(e)) for sid, e in nights.items()}
    assert all(all(summed_chunks(tmp_path / "c.db", sid)) for sid in nights)


def night(tmp_path) -> tuple[str, dict[str, bytes]]:
    db = str(tmp_path / "c.db")
    with SQLiteStore(db) as store:
        play(Chronicle(store), "n", events=examples(1500), seed=11, close=True)
        truth = {sid: state_bytes(reference(events)) for sid, events in logs(store).items()}
    return db, truth


def folded_raw(path) -> dict[str, bytes]:
    """Every session folded from a plain connection (as replay workers fold), no store
    opened (which would mend the table first)."""
    conn = sqlite3.connect(path)
    try:
        sessions = [s for (s,) in conn.execute("SELECT session FROM heads")]
        return {s: state_bytes(store_sqlite.fold_session(conn, s, use_snapshots=False)[0]) for s in sessions}
    finally:
        conn.close()


def test_summaries_missing_partly_or_forged_fold_from_the_records(tmp_path):
    """Given a night's file, when its summaries table is gone, or some summaries deleted,
    or an extra one forged for a row without draws, then a replay folds the same bytes,
    decoding the records of the chunks that do not match (never trusting them)."""
    db, truth = night(tmp_path)
    cases = {
        "gone": "DROP TABLE drawn_pairs",
        "partly": "DELETE FROM drawn_pairs WHERE seq % 5 = 0",
        "forged": "INSERT INTO drawn_pairs SELECT session, seq, CAST('\"x/open\",999,\"\",50,' || char(10) AS BLOB) "
                  "FROM events WHERE type = 'met.challenge_issued'",
        "other session's": "INSERT INTO drawn_pairs SELECT 'n-met', seq, CAST('\"x/open\",999,' || char(10) AS BLOB) "
                           "FROM events WHERE session = 'n-v5' AND type = 'v5.pool_rolled'",
        # read as written by no conteur: out of step, not JSON
        "out of step": "UPDATE drawn_pairs SET pairs = CAST('\"x/open\",' || char(10) AS BLOB) WHERE seq = "
                       "(SELECT max(seq) FROM drawn_pairs WHERE session = 'n-met' AND length(pairs) > 1)",
        "not JSON": "UPDATE drawn_pairs SET pairs = CAST('{' || char(10) AS BLOB) WHERE seq = "
                    "(SELECT max(seq) FROM drawn_pairs WHERE session = 'n-met')",
    }
    for name, sql in cases.items():
        copy = tmp_path / f"{name}.db"
        shutil.copy(db, copy)
        conn = sqlite3.connect(copy)
        conn.execute(sql)
        conn.commit()
        conn.close()
        assert folded_raw(copy) == truth, name
        sid = "n-met" if name != "partly" else "n-v5"
        assert not all(summed_chunks(copy, sid)) or name == "gone", name
        if name in ("out of step", "not JSON"):  # one row: the other chunks still summed
            assert any(summed_chunks(copy, sid)), name


def test_verify_names_an_edited_or_misplaced_summary_and_passes_a_missing_one(tmp_path):
    """Given a night's file (its log intact), when one stored summary is edited, then
    ``conteur verify`` fails naming its seq and session; when one is added where no event
    carries draws, it fails naming that one; when one is deleted, it passes (the replay
    decodes that chunk's records) and counts it missing."""
    db, _ = night(tmp_path)
    ok = verify_path(db)
    assert ok.ok and ok.summaries_checked > 100 and ok.summaries_missing == 0, ok.text()
    conn = sqlite3.connect(db)
    seq, session = conn.execute("SELECT seq, session FROM drawn_pairs WHERE CAST(pairs AS TEXT) LIKE '%open%' "
                                "ORDER BY seq LIMIT 1 OFFSET 30").fetchone()
    other = conn.execute("SELECT seq, session FROM events WHERE type = 'met.challenge_issued' "
                         "ORDER BY seq LIMIT 1").fetchone()
    conn.close()

    def changed(name: str, sql: str, args: tuple):
        copy = tmp_path / f"{name}.db"
        shutil.copy(db, copy)
        c = sqlite3.connect(copy)
        c.execute(sql, args)
        c.commit()
        c.close()
        return verify_path(copy)

    edited = changed("edited", "UPDATE drawn_pairs SET pairs = CAST('\"*/open\",1,' || char(10) AS BLOB) "
                     "WHERE seq = ?", (seq,))
    assert not edited.ok and (edited.bad_summary.seq, edited.bad_summary.session) == (seq, session)
    assert f"seq {seq} of session {session}" in edited.text() and "is not its event's" in edited.text()
    # the same value written otherwise: the replay cuts runs at the newlines, so bytes count
    spaced = changed("spaced", "UPDATE drawn_pairs SET pairs = CAST(' ' || CAST(pairs AS TEXT) AS BLOB) "
                     "WHERE seq = ?", (seq,))
    assert not spaced.ok and spaced.bad_summary.seq == seq, spaced.text()
    extra = changed("extra", "INSERT INTO drawn_pairs VALUES (?, ?, CAST(char(10) AS BLOB))", (other[1], other[0]))
    assert not extra.ok and extra.bad_summary.seq == other[0] and "no event" in extra.text()
    missing = changed("missing", "DELETE FROM drawn_pairs WHERE seq = ?", (seq,))
    assert missing.ok and missing.summaries_missing == 1, missing.text()
    # the table walked beside the log (not held whole): an edited summary after a misplaced
    # one is still the one named, and one misplaced at the seq of another session's event too
    shutil.copy(tmp_path / "edited.db", tmp_path / "both.db")
    c = sqlite3.connect(tmp_path / "both.db")
    c.execute("INSERT INTO drawn_pairs VALUES (?, ?, CAST(char(10) AS BLOB))", (other[1], other[0]))
    c.execute("INSERT INTO drawn_pairs VALUES (?, ?, CAST(char(10) AS BLOB))", (session + "-elsewhere", seq))
    c.commit()
    c.close()
    both = verify_path(tmp_path / "both.db")
    assert not both.ok and both.bad_summary.seq == seq and "is not its event's" in both.text()
    astray = changed("astray", "INSERT INTO drawn_pairs VALUES (?, ?, CAST(char(10) AS BLOB))",
                     (session + "-elsewhere", seq))
    assert not astray.ok and (astray.bad_summary.seq, astray.bad_summary.session) == (seq, session + "-elsewhere")
    assert astray.summaries_missing == 0 and "no event" in astray.text()


def test_an_old_file_gets_its_summaries_when_a_store_opens_it(tmp_path):
    """Given a file from before the table (dropped) and one whose rows were appended by
    plain SQL (as bench/load.py's merge and conteur migrate write), when a store opens
    each, then the table holds exactly what the command path wrote, and the replay uses it."""
    db, truth = night(tmp_path)
    conn = sqlite3.connect(db)
    written = conn.execute("SELECT * FROM drawn_pairs ORDER BY session, seq").fetchall()
    conn.execute("DROP TABLE drawn_pairs")
    conn.commit()
    conn.close()
    SQLiteStore(db).close()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT * FROM drawn_pairs ORDER BY session, seq").fetchall() == written
    conn.close()
    # rows appended by plain SQL to a file that has the table: the sessions' tails
    copy = tmp_path / "appended.db"
    SQLiteStore(copy).close()
    conn = sqlite3.connect(copy)
    conn.execute("ATTACH ? AS src", (db,))
    conn.execute("INSERT INTO events SELECT * FROM src.events")
    conn.execute("INSERT INTO heads SELECT * FROM src.heads")
    conn.commit()
    assert conn.execute("SELECT count(*) FROM drawn_pairs").fetchone() == (0,)
    conn.close()
    assert replayed(copy) == truth
    conn = sqlite3.connect(copy)
    assert conn.execute("SELECT * FROM drawn_pairs ORDER BY session, seq").fetchall() == written
    conn.close()
    assert all(all(summed_chunks(copy, sid)) for sid in truth)
    # and a tool's own call fills what it appended, in one transaction
    conn = sqlite3.connect(copy, isolation_level=None)
    conn.execute("DELETE FROM drawn_pairs")
    assert drawn.fill(conn) == len(written)
    conn.close()


def session_11_file(db, path) -> list[tuple]:
    """A copy of ``db`` as session 11's conteur left it: its summaries in ``drawn``, one
    JSON ``Summary`` a row, and no ``drawn_pairs``; the rows written, in (session, seq) order."""
    shutil.copy(db, path)
    conn = sqlite3.connect(path)
    rows = [(s, seq, summaries.encode(summaries.summarize(codec.decode_event(data).draws)))
            for s, seq, data in conn.execute("SELECT session, seq, data FROM events WHERE type IN (%s) ORDER BY "
                                             "session, seq" % ",".join("?" * len(game.DRAWN_TAGS)),
                                             sorted(game.DRAWN_TAGS))]
    conn.execute("DROP TABLE drawn_pairs")
    conn.execute("CREATE TABLE drawn (session TEXT NOT NULL, seq INTEGER NOT NULL, summary BLOB NOT NULL, "
                 "PRIMARY KEY (session, seq)) WITHOUT ROWID")
    conn.executemany("INSERT INTO drawn VALUES (?,?,?)", rows)
    conn.commit()
    conn.close()
    return rows


def test_a_session_11_file_is_verified_then_replays_from_its_new_summaries(tmp_path):
    """Given a file whose summaries are in session 11's table and form, when ``conteur
    verify`` reads it (no store opened), then it checks those and names one edited; when
    it is folded before any store opened it, then from the records, the same bytes; when
    a store opens it, then the new table holds what the command path writes, the old one
    is gone, and every chunk is folded from the summaries to the same bytes."""
    db, truth = night(tmp_path)
    conn = sqlite3.connect(db)
    written = conn.execute("SELECT * FROM drawn_pairs ORDER BY session, seq").fetchall()
    conn.close()
    old = tmp_path / "s11.db"
    rows = session_11_file(db, old)
    report = verify_path(old)
    assert report.ok and report.summaries_checked == len(rows) and report.summaries_missing == 0, report.text()
    edited = tmp_path / "s11-edited.db"
    shutil.copy(old, edited)
    session, seq, _ = next(r for r in rows if b"open" in r[2])
    conn = sqlite3.connect(edited)
    conn.execute("UPDATE drawn SET summary = '[{\"*/open\":1},0]' WHERE session = ? AND seq = ?", (session, seq))
    conn.commit()
    conn.close()
    report = verify_path(edited)
    assert not report.ok and (report.bad_summary.session, report.bad_summary.seq) == (session, seq)
    assert folded_raw(old) == truth
    assert not any(any(summed_chunks(old, sid)) for sid in truth)
    assert replayed(old) == truth
    conn = sqlite3.connect(old)
    assert conn.execute("SELECT * FROM drawn_pairs ORDER BY session, seq").fetchall() == written
    assert not drawn.exists(conn, "drawn")
    conn.close()
    assert all(all(summed_chunks(old, sid)) for sid in truth)
    assert verify_path(old).summaries_checked == len(rows)


@given(start=st.dictionaries(st.sampled_from(STREAMS[1:]), st.integers(0, 10), max_size=3),
       counter=st.integers(0, 10), events=st.lists(records, max_size=12),
       cuts=st.lists(st.integers(0, 12), max_size=4))
@settings(max_examples=examples(400), deadline=None)
def test_a_run_of_summaries_merged_at_once_counts_as_each_event_counted(start, counter, events, cuts):
    """FAIR-2. Given a state's streams and counter and a chunk of events' draw records of
    any shape (counters below earlier ones of their stream too, which the command path
    never writes), stored as the SQLite store stores them and cut into runs anywhere, when
    each run is read as one summary (``segment``) and merged, then the streams (their order
    too) and the counter after each run are those of every record counted in turn."""
    counted, merged = dict(start), dict(start)
    counted_n = merged_n = counter
    bounds = sorted({0, len(events), *(c % (len(events) + 1) for c in cuts)})
    for a, b in zip(bounds, bounds[1:]):
        for recs in events[a:b]:
            if recs:
                counted_n = game.count_draws(counted, counted_n, recs)
        stored = b"".join(summaries.pairs(summaries.summarize(recs)) for recs in events[a:b])
        merged_n = summaries.merge(merged, merged_n, summaries.segment(stored))
        assert list(merged.items()) == list(counted.items())
        assert merged_n == counted_n


def drawn_event(stream: str, counters: list[int]):
    """A V5 Rouse check whose draw records have ``counters`` in ``stream``."""
    return v5.RouseChecked(roll="r", character="ana", face=1, hunger_before=1, hunger_after=2,
                           draws=tuple(DrawRecord(counter=c, sides=10, face=1, stream=stream) for c in counters))


def test_a_chunk_is_cut_into_runs_at_each_event_that_reads_the_state():
    """Given a chunk's events where two events read the whole state (a retest, a sheet
    amended) and the summaries stored for its events that carry draws, when they are read
    for the replay, then there is one summary per run up to each such event and one for the
    rest, each what the run's summaries merged one by one leave (a counter going back in a
    stream, an event drawing twice from one, one from before streams); and fed to a replay,
    the whole state each such event's evolvers are given has the streams and counter
    ``evolve`` has just before it."""
    retest, amended = met.RetestTaken, session.SheetAmended
    assert {retest, amended} <= game.READS
    carrying = [drawn_event("a/open", [0, 1]), drawn_event("b/open", [0]), drawn_event("a/open", [5]),
                drawn_event("a/open", [2]), drawn_event("", [3]), drawn_event("b/open", [1, 4])]
    kinds = [type(carrying[0])] * 3 + [retest] + [type(carrying[0])] * 2 + [amended, retest] + [type(carrying[0])]
    stored = b"".join(summaries.pairs(summaries.summarize(e.draws)) for e in carrying)
    runs = summaries.segments(stored, len(carrying), kinds)
    assert [(r.streams, r.counter) for r in runs] == [
        ({"a/open": 6, "b/open": 1}, 0), ({"a/open": 3}, 4), ({}, 0), ({"b/open": 5}, 0)]
    assert list(runs[0].streams) == ["a/open", "b/open"]
    # a count that does not match, or a summary that does not read, and none is trusted
    assert summaries.segments(stored, len(carrying) + 1, kinds) is None
    assert summaries.segments(stored.replace(b"\n", b"", 1), len(carrying), kinds) is None
    assert summaries.segments(stored.replace(b"\n", b"\n\n", 1), len(carrying), kinds) is None
    assert summaries.segments(stored.replace(b"5,", b"", 1), len(carrying), kinds) is None


def test_a_replay_fed_runs_gives_each_state_reading_evolver_the_counters_evolve_has(tmp_path):
    """Given random MET nights (retests among their throws) and a V5 night with sheets
    amended, when the store's replay feeds each chunk with its runs' summaries, then every
    whole state an evolver is given while an event is folded (a sheet amended's; a retest's
    where its replay step leaves the event to the evolver) carries the streams (in order)
    and counter ``evolve``'s state has just before that event, and the replay ends on
    ``evolve``'s state."""
    rng = random.Random(5)
    db = tmp_path / "c.db"
    with SQLiteStore(db) as store:
        play(Chronicle(store), "n", events=examples(3000), seed=rng.randrange(1000), close=False)
    random_night(db, "r-v5", "v5", examples(25), rng, close=False)
    with SQLiteStore(db) as store:  # sheets amended between rolls, through the command path
        chronicle = Chronicle(store)
        for _ in range(examples(12)):
            for actor, cmd in next_commands(rng, "v5", chronicle.state("r-v5")):
                chronicle.submit("r-v5", cmd, actor).result()
            who = rng.choice(sorted(chronicle.state("r-v5").session.characters.values(), key=lambda c: c.id))
            amend = session.AmendSheet(character=who.id, sheet=who.sheet, reason="a scratch")
            assert not chronicle.submit("r-v5", amend, STORYTELLER).result().outcome.rejected

    class Watched(game.Replay):
        __slots__ = ("seen", "at")

        def _whole(self):
            whole = super()._whole()
            if self.at is not None:
                self.seen.append((self.at, list(whole.streams.items()), whole.draw_counter))
            return whole

    def numbered(replay, events, start):
        for replay.at, event in enumerate(events, start):
            yield event
        replay.at = None

    conn = sqlite3.connect(db)
    checked = 0
    try:
        for (sid,) in conn.execute("SELECT session FROM heads").fetchall():
            events = [e for _, chunk in store_sqlite.session_events(conn, sid) for e in chunk]
            before, state = {}, game.initial()
            for i, e in enumerate(events):
                if type(e) in game.READS:
                    before[i] = (list(state.streams.items()), state.draw_counter)
                state = game.evolve(state, e)
            replay = Watched()
            replay.seen, replay.at, start = [], None, 0
            for _, folded, runs in store_sqlite._fold_chunks(conn, sid, 0, None, chunk=400):
                assert runs is not None
                replay.feed(numbered(replay, folded, start), runs)
                start += len(folded)
            assert start == len(events)
            assert [(i, s, c) for i, s, c in replay.seen] == [(i, *before[i]) for i, _, _ in replay.seen], sid
            assert state_bytes(replay.state()) == state_bytes(state)
            checked += len(replay.seen)
    finally:
        conn.close()
    assert checked > 10
