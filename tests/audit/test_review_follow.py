"""A kept review between requests: a server keeps each review a
storyteller asked for caught up with its session's log as the night goes
(server/web/http_review.py ``Follower``), so the hour's first screen tells what changed
instead of first taking the hour's events; and it writes a review's snapshot on the
snapshots' thread, not in the request (``Projections.later``).

What is shown, on a real SQLite file and a real server on loopback, the night played on
by another writer of the file as bench/night.py does:

- a kept review takes the rows committed after it was asked, with no request, and then
  answers its first screen and its pages byte for byte as a server with nothing kept (a
  fold of the whole log on a copy of the file) answers them;
- a review's snapshot is still written once it took ``SAVE_EVERY`` events, at the seq it
  had taken, and a server restarted on the file answers from it the same bytes.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from conteur.events.model import Actor
from conteur.server.audit import kept as review_snapshots
from conteur.server.audit import paged
from conteur.server.core import keep
from conteur.server.core.auth import Tokens
from conteur.server.store.sqlite import SQLiteStore
from conteur.server.web import http_review
from conteur.server.web.app import Served, create_app
from tests.support.examples import examples
from tests.support.review_support import met_night

SESSION = "s"


@pytest.fixture(autouse=True)
def small(monkeypatch):
    monkeypatch.setattr(http_review, "FOLLOW_EVERY", 0.05)  # many looks while the night is played on
    monkeypatch.setattr(paged, "PAGE", 128)  # a kept review's items over many pages


def storyteller(db: Path) -> str:
    with SQLiteStore(db) as store:
        return Tokens(store).issue("storyteller", session=SESSION, name="Morgane")


def screens(base: str, token: str) -> dict[str, bytes]:
    """What the review page loads first: its first screen and a page of each list."""
    out = {}
    for name, path, params in (("first", "/review/first", {}),
                               ("challenges", "/review/challenges", {"offset": 5, "limit": 40}),
                               ("items", "/review/items", {"after": 100, "limit": 700})):
        r = httpx.get(f"{base}/sessions/{SESSION}{path}", params=params,
                      headers={"Authorization": f"Bearer {token}"}, timeout=120)
        assert r.status_code == 200, (path, r.text)
        out[name] = r.content
    return out


def folded(db: Path, to: Path, token: str) -> dict[str, bytes]:
    """The same screens from a server on a copy of the file with nothing kept."""
    src, dst = sqlite3.connect(db), sqlite3.connect(to)
    try:
        src.backup(dst)
        dst.execute("DELETE FROM views")
        dst.commit()
    finally:
        src.close()
        dst.close()
    with Served(create_app(str(to))) as server:
        return screens(server.url, token)


def kept_heads(store) -> list[int]:
    with http_review._KEPT_LOCK:
        return [k.builder.head for k in http_review._KEPT.get(store, {}).values()]


def wait_for(check, what: str, seconds: float = 120.0) -> None:
    """Waits for a background thread's work (never a timing assertion: a generous bound)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("seed", [f"follow {n}" for n in range(examples(2))])
def test_a_kept_review_takes_the_log_between_requests_and_answers_as_a_fold(tmp_path, seed):
    db = tmp_path / "night.db"
    met_night(db, SESSION, 60, seed, overrules=0.03)
    token = storyteller(db)
    with Served(create_app(str(db))) as server:
        store = server.app.state.conteur.store
        screens(server.url, token)  # the review is kept from now on
        before = kept_heads(store)
        assert before == [store.session_head(SESSION)]
        # more of the night by another writer of the file, while the server only reads
        met_night(db, SESSION, 90, seed + " on", overrules=0.05)
        head = store.session_head(SESSION)
        assert head > before[0]
        wait_for(lambda: kept_heads(store) == [head], "the kept review to take the night's rows")
        live = screens(server.url, token)
    assert live == folded(db, tmp_path / "folded.db", token)


def test_a_reviews_snapshot_is_written_off_the_request_and_a_restart_answers_from_it(tmp_path, monkeypatch):
    monkeypatch.setattr(http_review, "SAVE_EVERY", 50)
    db = tmp_path / "night.db"
    met_night(db, SESSION, 80, "saved off the request")
    token = storyteller(db)
    with Served(create_app(str(db))) as server:
        runtime = server.app.state.conteur
        live = screens(server.url, token)
        runtime.projections.flush()  # the snapshots' thread has written what was queued
        head = runtime.store.session_head(SESSION)
        view = review_snapshots.name(Actor(role="storyteller"), "en")
        found = runtime.store.load_view(SESSION, view)
        assert found is not None and found[0] == head
        assert keep.load(runtime.store, SESSION, view, head, review_snapshots.ReviewBody) is not None
    loads: list[str] = []
    real = keep.load

    def load(store, session, name, upto, kind):
        got = real(store, session, name, upto, kind)
        if got is not None:
            loads.append(name)
        return got

    monkeypatch.setattr(keep, "load", load)
    with Served(create_app(str(db))) as server:
        again = screens(server.url, token)
    assert view in loads  # the restarted server's review came from the snapshot
    assert again == live


def test_a_failed_look_is_logged_once_and_the_follower_goes_on(tmp_path, caplog):
    """A look at the log that fails (here: the file's table of events renamed under the
    server by another program, so that every look fails) is logged once for its kind of
    failure, not at each look every two seconds all night, and the follower keeps looking
    until it is closed."""
    import asyncio
    import logging

    db = tmp_path / "night.db"
    met_night(db, SESSION, 20, "fail")
    store = SQLiteStore(db)

    async def watch() -> tuple[int, bool, int]:
        kept = http_review._kept(store, SESSION, Actor(role="storyteller"), "en")
        kept.restored = True  # asked for once: the follower looks at it
        follower = http_review.Follower(store, every=0.01)
        with sqlite3.connect(db) as other:
            other.execute("ALTER TABLE events RENAME TO events_gone")
        failed = lambda: [r for r in caplog.records if r.name == "conteur.review"]  # noqa: E731
        for _ in range(2000):
            if failed():
                break
            await asyncio.sleep(0.01)
        seen = len(failed())
        await asyncio.sleep(0.5)  # dozens of looks more, each failing the same way
        going = not follower._task.done()
        await follower.close()
        return len(failed()) - seen, going, seen

    with caplog.at_level(logging.WARNING, logger="conteur.review"):
        try:
            more, going, seen = asyncio.run(watch())
        finally:
            store.close()
    assert seen == 1 and more == 0, caplog.text
    assert going
    assert "still following" in caplog.text and "OperationalError" in caplog.text
