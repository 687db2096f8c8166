"""The first request after a restart: a server keeps each view's
projection and the review's index as snapshots in its store (server/core/keep.py,
server/audit/kept.py), so a restarted server answers a player's ``GET /state`` and the
review's first screen from them and the rows after, not from a fold of the whole night.

What is shown, on a real SQLite file and a real server on loopback:

- after a restart, every view's state query and the review's first screen answer byte
  for byte what a server with no snapshot at all (a fold from the log) answers, and they
  did come from the snapshots;
- a snapshot that is corrupt, truncated, of another log under the same session name, or
  ahead of the log (a file put back from an older copy) is skipped, with the same answers;
- a player's snapshot holds nothing of another player's secrets: two nights differing only
  in Anna's sheet and her sealed throw leave Bruno (and the observers) the same snapshot
  bytes, while the storytellers' differ;
- every view of simulated nights of each ruleset, left open mid-round, round-trips through
  the snapshot codec exactly (a view's sealed throws and bids are None).
"""

from __future__ import annotations

import gzip
import random
import shutil
import sqlite3
from pathlib import Path

import httpx
import msgspec
import pytest

from conteur.events import game, met, views
from conteur.events.model import STORYTELLER, Actor
from conteur.server.audit import kept as review_snapshots
from conteur.server.audit import paged
from conteur.server.cli.simulate import next_commands, play
from conteur.server.core import keep, projections
from conteur.server.core.auth import Tokens
from conteur.server.core.service import Chronicle
from conteur.server.core import pages
from conteur.server.store import snapshot
from conteur.server.store.codec import decode_events
from conteur.server.store.sqlite import SQLiteStore
from conteur.server.web import http_review
from tests.support.client_support import command, served
from tests.support.examples import examples
from tests.support.review_support import met_night

SESSION = "s"
EVERY = 150  # events a view or a kept review takes before it saves a snapshot, in these tests


@pytest.fixture(autouse=True)
def often(monkeypatch):
    monkeypatch.setattr(projections, "SAVE_EVERY", EVERY)
    monkeypatch.setattr(http_review, "SAVE_EVERY", EVERY)
    monkeypatch.setattr(paged, "PAGE", 256)  # a kept review's items over many pages, one being filled
    monkeypatch.setattr(met, "PAGE", 8)  # finished challenges compressed by the page (server/core/pages.py)


@pytest.fixture
def loads(monkeypatch):
    """Every snapshot a server looked for: (stored name, found or not), in order."""
    seen: list[tuple[str, bool]] = []
    real = keep.load

    def load(store, session, view, upto, kind):
        found = real(store, session, view, upto, kind)
        seen.append((view, found is not None))
        return found

    monkeypatch.setattr(keep, "load", load)
    return seen


def more(db: Path, commands: int, seed: str) -> None:
    """More of the night's play, while no server runs (a tail after the snapshots)."""
    rng = random.Random(seed)
    with SQLiteStore(db) as store:
        chronicle = Chronicle(store)
        for _ in range(commands):
            for actor, cmd in next_commands(rng, "met", chronicle.state(SESSION)):
                chronicle.submit(SESSION, cmd, actor).result()


def tokens(db: Path) -> dict[str, str]:
    with SQLiteStore(db) as store:
        characters = sorted(Chronicle(store).state(SESSION).session.characters)[:2]
        t = Tokens(store)
        out = {c: t.issue("player", character=c, session=SESSION, name=c) for c in characters}
        out["observer"] = t.issue("observer", session=SESSION, name="wall")
        out["storyteller"] = t.issue("storyteller", session=SESSION, name="Morgane")
        return out


def answers(db: Path, who: dict[str, str]) -> dict[str, bytes]:
    """The bodies a restarted venue's devices ask for first, from a server on ``db``."""
    out = {}
    with served(db) as server:
        base = f"{server.url}/sessions/{SESSION}"

        def get(path, token, **params):
            r = httpx.get(base + path, params=params, headers={"Authorization": f"Bearer {token}"}, timeout=120)
            assert r.status_code == 200, (path, r.text)
            return r.content

        for name, token in who.items():
            out[f"{name} state"] = get("/state", token)
            out[f"{name} done"] = get("/state/done", token, after=0, limit=50)
        for lang in ("en", "fr"):
            out[f"first {lang}"] = get("/review/first", who["storyteller"], lang=lang)
        out["challenges page"] = get("/review/challenges", who["storyteller"], offset=50, limit=100)
        out["items page"] = get("/review/items", who["storyteller"], after=0, limit=3000)
    return out


def without_caches(db: Path, to: Path) -> Path:
    """A copy of the chronicle with no snapshot of any kind: what a fold from the log answers."""
    src, dst = sqlite3.connect(db), sqlite3.connect(to)
    try:
        src.backup(dst)
        dst.execute("DELETE FROM views")
        dst.execute("DELETE FROM snapshots")
        dst.commit()
    finally:
        src.close()
        dst.close()
    return to


def stored(db: Path, pages: bool = False) -> dict[str, tuple[int, bytes]]:
    """The views' snapshots in the file (with ``pages``, their compressed pages' entries too)."""
    conn = sqlite3.connect(db)
    try:
        return {view: (seq, data) for view, seq, data in
                conn.execute("SELECT view, seq, data FROM views WHERE session=?", (SESSION,))
                if pages or "#" not in view}
    finally:
        conn.close()


@pytest.fixture
def night(tmp_path):
    """A MET night with overrules of finished challenges (compressed pages made dicts again), asked
    once by every view and the review, then played on while the server was down."""
    db = tmp_path / "night.db"
    met_night(db, SESSION, 700, "restart", overrules=0.03)
    who = tokens(db)
    answers(db, who)  # a server up: every view and both reviews kept, and saved
    assert {"player:" + c for c in who if c not in ("observer", "storyteller")} | {
        "observers", "storytellers", "review:storyteller::en", "review:storyteller::fr"} <= set(stored(db))
    more(db, 60, "tail")
    return db, who


def test_after_a_restart_state_and_first_screen_are_a_fold_from_the_log_byte_for_byte(night, tmp_path, loads):
    db, who = night
    with SQLiteStore(db) as store:
        head = store.session_head(SESSION)
    assert all(seq < head for seq, _ in stored(db).values())  # a tail to take after each snapshot
    restarted = answers(db, who)
    used = dict(loads)
    assert used == {name: True for name in used} and len(used) == len(who) + 2, used  # every view, both reviews
    loads.clear()
    folded = answers(without_caches(db, tmp_path / "folded.db"), who)
    assert not any(found for _, found in loads)
    assert restarted.keys() == folded.keys()
    for key in folded:
        assert restarted[key] == folded[key], key
    first = msgspec.json.decode(restarted["first en"])
    assert first["counts"]["items"] > 4 * paged.PAGE and first["disputes"]  # pages behind the first, overrules


# a MET night (pages of 8) whose views' and reviews' snapshots the previous version wrote,
# when a view kept its final pages on a shelf beside its state, each stored once by digest
OLDER = Path(__file__).resolve().parents[1] / "support" / "older_view_snapshots.db.gz"


def test_snapshots_an_older_version_wrote_open_and_answer_as_a_fold_from_the_log(tmp_path, loads):
    db = tmp_path / "older.db"
    with gzip.open(OLDER) as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert any("#" in name for name in stored(db, pages=True))  # compressed pages stored apart
    who = tokens(db)
    restarted = answers(db, who)
    used = dict(loads)
    assert used == {name: True for name in used} and len(used) == len(who) + 2, used  # every view, both reviews
    loads.clear()
    folded = answers(without_caches(db, tmp_path / "folded.db"), who)
    assert restarted.keys() == folded.keys()
    for key in folded:
        assert restarted[key] == folded[key], key


def _envelope_of_another_log(db: Path, tmp_path: Path) -> dict[str, bytes]:
    other = tmp_path / "other.db"
    met_night(other, SESSION, 700, "another night", overrules=0.03)
    answers(other, tokens(other))
    return {view: data for view, (_, data) in stored(other).items()}


def _ahead(db: Path, tmp_path: Path) -> dict[str, bytes]:
    """Snapshots taken after more play than the file now holds: the file was put back
    from a copy taken before, and the views of the later night copied over it."""
    later = tmp_path / "later.db"
    src, dst = sqlite3.connect(db), sqlite3.connect(later)
    src.backup(dst)
    src.close()
    dst.close()
    more(later, 60, "later")
    answers(later, tokens(later))
    return {view: data for view, (_, data) in stored(later).items()}


@pytest.mark.parametrize("spoil", ["garbage", "truncated", "other version", "another log", "ahead", "a page"])
def test_a_corrupt_or_stale_snapshot_is_skipped_and_the_view_folded_from_the_log(night, tmp_path, loads, spoil,
                                                                                 monkeypatch):
    db, who = night
    opened: list[bool] = []
    if spoil == "a page":  # one compressed page of each snapshot another: the snapshot is skipped whole
        real = keep.pages_in

        def pages_in(*args):
            found = real(*args)
            opened.append(found is not None)
            return found

        monkeypatch.setattr(keep, "pages_in", pages_in)
        pages = stored(db, pages=True)
        replaced = {}
        for view in stored(db):
            mine = sorted(name for name in pages if name.startswith(view + "#") or name.startswith(view + "/"))
            assert mine, view
            replaced[mine[0]] = pages[mine[0]][1][:-1] + b"\x00"
    elif spoil == "another log":
        replaced = _envelope_of_another_log(db, tmp_path)
    elif spoil == "ahead":
        replaced = _ahead(db, tmp_path)
    else:
        replaced = {}
        for view, (seq, data) in stored(db).items():
            if spoil == "garbage":
                replaced[view] = b"\x93not a snapshot"
            elif spoil == "truncated":
                replaced[view] = data[:len(data) // 2]
            else:
                envelope = msgspec.msgpack.decode(data, type=snapshot.Envelope)
                envelope.version = snapshot.VERSION + 1
                replaced[view] = msgspec.msgpack.encode(envelope)
    conn = sqlite3.connect(db)
    with conn:
        for view, data in replaced.items():
            conn.execute("UPDATE views SET data=? WHERE session=? AND view=?", (data, SESSION, view))
            if spoil in ("another log", "ahead"):  # the row's seq as its envelope says
                seq = msgspec.msgpack.decode(data, type=snapshot.Envelope).seq
                conn.execute("UPDATE views SET seq=? WHERE session=? AND view=?", (seq, SESSION, view))
    conn.close()
    loads.clear()
    restarted = answers(db, who)
    if spoil == "a page":
        assert opened.count(False) == len(who) + 2, opened  # each view's and each review's
    else:
        assert loads and not any(found for _, found in loads[:len(who) + 2]), loads
    folded = answers(without_caches(db, tmp_path / "folded.db"), who)
    for key in folded:
        assert restarted[key] == folded[key], key


def _secret_night(db: Path, physical: int, choice: str) -> None:
    """Anna and Bruno's night; Anna's sheet and her sealed throw in the open challenge are
    the only difference between two such nights."""
    with SQLiteStore(db) as store:
        store.create_secret(SESSION, b"\x07" * 32)  # one FAIR-2 seed for both nights (public at close)
        chronicle = Chronicle(store)
        sheet = {"kind": "met", "physical": physical, "social": 3, "mental": 4, "abilities": {"brawl": 1}}
        steps = [
            (STORYTELLER, "open_session", {"name": "Night"}),
            (STORYTELLER, "add_character", {"character": "anna", "name": "Anna", "sheet": sheet}),
            (STORYTELLER, "add_character", {"character": "bruno", "name": "Bruno",
                                            "sheet": {"kind": "met", "physical": 7, "social": 2, "mental": 3}}),
            (STORYTELLER, "open_scene", {"scene": "hall"}),
            (STORYTELLER, "join_scene", {"character": "anna", "scene": "hall"}),
            (STORYTELLER, "join_scene", {"character": "bruno", "scene": "hall"}),
        ]
        anna, bruno = Actor(role="player", character="anna"), Actor(role="player", character="bruno")
        for n in range(1, 4):  # three challenges thrown out in the open, Anna's rock over scissors
            steps += [(anna, "challenge", {"character": "anna", "defender": "bruno", "attribute": "physical"}),
                      (anna, "throw", {"character": "anna", "challenge": f"c{n}", "round": 1, "choice": "rock"}),
                      (bruno, "throw", {"character": "bruno", "challenge": f"c{n}", "round": 1,
                                        "choice": "scissors"}),
                      (bruno, "accept", {"character": "bruno", "challenge": f"c{n}"})]
        steps += [(anna, "challenge", {"character": "anna", "defender": "bruno", "attribute": "physical"}),
                  (anna, "throw", {"character": "anna", "challenge": "c4", "round": 1, "choice": choice})]
        for n, (actor, tag, fields) in enumerate(steps):
            executed = chronicle.execute_sync(SESSION, command(tag, **fields), actor, device="d",
                                              command_id=f"step-{n}")
            assert not executed.outcome.rejected, (tag, executed.outcome)


def test_a_players_snapshot_holds_nothing_of_another_players_secret(tmp_path, monkeypatch):
    monkeypatch.setattr(projections, "SAVE_EVERY", 1)
    bodies = []
    for world, (physical, choice) in enumerate(((6, "rock"), (9, "paper"))):
        db = tmp_path / f"world{world}.db"
        _secret_night(db, physical, choice)
        with SQLiteStore(db) as store:
            t = Tokens(store)
            # the storytellers' view kept first: a snapshot mixing views would show
            who = {"storyteller": t.issue("storyteller", session=SESSION, name="st"),
                   "observer": t.issue("observer", session=SESSION, name="wall"),
                   "anna": t.issue("player", character="anna", session=SESSION, name="anna"),
                   "bruno": t.issue("player", character="bruno", session=SESSION, name="bruno")}
        with served(db) as server:
            for token in who.values():
                r = httpx.get(f"{server.url}/sessions/{SESSION}/state",
                              headers={"Authorization": f"Bearer {token}"}, timeout=60)
                assert r.status_code == 200, r.text
        bodies.append({view: snapshot.body(data) for view, (_, data) in stored(db).items()})
    a, b = bodies
    assert set(a) == set(b) == {"player:anna", "player:bruno", "observers", "storytellers"}
    assert a["player:bruno"] == b["player:bruno"]
    assert a["observers"] == b["observers"]
    # the secret is in the snapshots that may hold it: the test could see a leak
    assert a["player:anna"] != b["player:anna"] and a["storytellers"] != b["storytellers"]


def _views(state: game.GameState) -> list[Actor]:
    return [STORYTELLER, Actor(role="observer")] + [Actor(role="player", character=c)
                                                    for c in state.session.characters]


@pytest.mark.parametrize("ruleset", ["met", "v5", "action"])
def test_every_view_of_an_open_night_round_trips_through_the_snapshot_codec(tmp_path, ruleset):
    for seed in range(examples(2)):
        db = tmp_path / f"{ruleset}-{seed}.db"
        with SQLiteStore(db) as store:
            play(Chronicle(store), SESSION, events=1500, seed=seed, close=False, ruleset=ruleset)
            rows = store.read_after(SESSION, 0)
        events = decode_events([r.data for r in rows])
        truth = game.fold(events)
        sealed = 0
        for viewer in _views(truth):
            state = views.fold_view(events, viewer)
            compressed = pages.compressed(state)
            sealed += sum(v is None for c in state.met.challenges.values() for v in (*c.throws.values(),
                                                                                    *c.bids.values()))
            out, named, new = keep.pages_out("view", compressed, keep.Stored())
            data = snapshot.pack(keep.ViewBody(rows[-1].seq, out, named))
            back = snapshot.unpack(data, keep.ViewBody)
            assert back.state == out and back.seen == rows[-1].seq and back.pages == named
            entries = {name: (rows[-1].seq, bytes(blob)) for name, blob in new.entries.items()}
            restored, _ = keep.pages_in(_Entries(entries), SESSION, "view", back.state, back.pages)
            assert pages.whole(restored) == state, viewer
        if ruleset == "met":
            assert sealed, "no view held a sealed throw or bid: the codec was not put to the test"


class _Entries:
    """The one read ``keep.pages_in`` makes of a store: the entries a save would write."""

    def __init__(self, entries: dict[str, tuple[int, bytes]]) -> None:
        self.entries = entries

    def load_view(self, session: str, name: str):
        return self.entries.get(name)


def test_a_review_snapshot_of_another_view_class_is_not_used(night, tmp_path):
    """The stored name says the view class; a body of a storyteller's review given to a
    player's name would carry the truth: it is refused by its shape, not trusted."""
    db, _ = night
    data = stored(db)["review:storyteller::en"][1]
    body = snapshot.unpack(snapshot.body(data), review_snapshots.ReviewBody)
    assert body.seen is None
    with SQLiteStore(db) as store:
        store.save_views(SESSION, msgspec.msgpack.decode(data, type=snapshot.Envelope).seq,
                         {review_snapshots.name(Actor(role="player", character="x"), "en"): data})
        assert review_snapshots.load(store, SESSION, Actor(role="player", character="x"), "en",
                                     store.session_head(SESSION)) is None


def test_postgresql_keeps_view_snapshots_and_an_older_chronicle_gets_their_table(pg_url):
    """A PostgreSQL chronicle created before view snapshots gets their table at its next
    opening by a role that may create it; the snapshots then live there like SQLite's."""
    import psycopg

    from conteur.server.store.postgres import PostgresStore

    with PostgresStore(pg_url) as store:
        store.save_views(SESSION, 4, {"observers": b"\x00one"})
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE views")  # as a chronicle of the previous release has it
    with PostgresStore(pg_url) as store:
        assert store.load_view(SESSION, "observers") is None
        store.save_views(SESSION, 5, {"observers": b"\x00two", "observers#0": b"\x01"})
    with PostgresStore(pg_url) as store:
        assert store.load_view(SESSION, "observers") == (5, b"\x00two")
        assert store.load_view(SESSION, "observers#0") == (5, b"\x01")


def test_on_postgresql_a_restarted_server_answers_from_its_snapshots_as_a_fold_does(night, tmp_path, loads, pg_url):
    from conteur.server.store.migrate import migrate

    db, who = night
    folded = answers(without_caches(db, tmp_path / "folded.db"), who)
    migrate(str(tmp_path / "folded.db"), pg_url)  # the log and the tokens, no snapshot of any kind
    answers(pg_url, who)  # a server up: every view and both reviews kept, and saved
    loads.clear()
    restarted = answers(pg_url, who)
    assert loads and all(found for _, found in loads), loads
    for key in folded:
        assert restarted[key] == folded[key], key


def test_a_finished_page_is_stored_once_not_with_every_snapshot(tmp_path):
    """A night's compressed pages are most of a view's bytes: each is written when it is new
    or changed, and each snapshot names them (server/core/keep.py)."""
    db = tmp_path / "pages.db"
    met_night(db, SESSION, 400, "pages")
    with SQLiteStore(db) as store:
        viewer = Actor(role="player", character=sorted(Chronicle(store).state(SESSION).session.characters)[0])
        views_ = projections.Projections(store, save_every=1)
        views_.state_json(SESSION, viewer)
        views_.flush()  # the snapshot is written by the projections' own thread
        first = stored(db, pages=True)
    more(db, 300, "pages, later")
    with SQLiteStore(db) as store:
        views_.store = store
        views_.state_json(SESSION, viewer)
        views_.flush()
        later = stored(db, pages=True)
        name = projections.stored_name(viewer.character)
        assert later[name][0] > first[name][0]  # a new snapshot
        pages = [n for n in first if n.startswith(name + "#")]
        assert len(pages) > 3
        assert {n: first[n] for n in pages} == {n: later[n] for n in pages}  # its pages as they were
        assert len([n for n in later if n.startswith(name + "#")]) > len(pages)  # and the new ones
        restarted = projections.Projections(store).state_json(SESSION, viewer)
        assert restarted == projections.Projections(store, save_every=10**9).state_json(SESSION, viewer)
