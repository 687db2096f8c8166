"""Exports made by parts are the exports made whole, and a file is never half written.

``conteur export`` and ``GET /sessions/{s}/export`` make the record from a review kept
as a server keeps one (paged from the store, server/audit/paged.py) and the rows read again
by chunks (server/audit/streamed.py), writing each part as it comes. These tests play
random nights of each ruleset on a real SQLite file and compare every format, in both
languages, for a storyteller, an observer and each player, with the export made whole from
the review built at once (``export.render``); over HTTP on loopback with each viewer's
token; and through the CLI, whose file is written beside its place and renamed once whole.
"""

from __future__ import annotations

import os
import random

import httpx
import pytest

from conteur.events import met
from conteur.server.audit import export as ex
from conteur.server.audit import paged, streamed, verify
from conteur.server.audit import review as rv
from conteur.server.cli.main import main
from conteur.server.cli.simulate import RULESETS
from conteur.server.core.auth import Tokens
from conteur.server.store.sqlite import SQLiteStore
from tests.support.client_support import served
from tests.support.examples import examples
from tests.support.review_support import every_viewer, random_night


@pytest.fixture
def small_parts(monkeypatch):
    """Pages of 16 items, parts of 5 lines, rows read 40 at a time: a short night has many."""
    monkeypatch.setattr(paged, "PAGE", 16)
    monkeypatch.setattr(paged, "CACHED", 1)
    monkeypatch.setattr(met, "PAGE", 4)
    monkeypatch.setattr(verify, "COMPRESS_EVERY", 5)
    monkeypatch.setattr(ex, "PART", 5)
    monkeypatch.setattr(streamed, "ROWS", 40)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_export_by_parts_is_the_whole_one_for_every_viewer(tmp_path, small_parts, ruleset):
    for n in range(examples(2)):
        rng = random.Random(f"export {ruleset} {n}")
        db = tmp_path / f"{n}.db"
        random_night(db, "s", ruleset, rng.randint(20, 100), rng, close=rng.random() < 0.6)
        with SQLiteStore(db) as store:
            for viewer in every_viewer(store, "s"):
                for lang in ("en", "fr"):
                    whole = rv.build(store, "s", viewer, lang)
                    for fmt in ex.FORMATS:
                        parts = list(ex.export_parts(store, "s", fmt, lang=lang, viewer=viewer))
                        assert b"".join(parts) == ex.render(whole, fmt), (ruleset, n, viewer, lang, fmt)


def test_over_http_each_viewer_downloads_the_whole_export_of_its_own_view(tmp_path, small_parts):
    db = tmp_path / "served.db"
    rng = random.Random("http")
    random_night(db, "s", "met", 80, rng, close=True)
    with SQLiteStore(db) as store:
        tokens = Tokens(store)
        who = every_viewer(store, "s")
        issued = [tokens.issue("storyteller", name="st"), tokens.issue("observer", session="s", name="eye")] + [
            tokens.issue("player", character=v.character, session="s", name=v.character) for v in who[2:]]
    with served(db) as server:
        for viewer, token in zip(who, issued):
            for fmt in ex.FORMATS:
                lang = rng.choice(("en", "fr"))
                answer = httpx.get(f"{server.url}/sessions/s/export", params={"format": fmt, "lang": lang},
                                   headers={"Authorization": f"Bearer {token}"}, timeout=60)
                assert answer.status_code == 200, answer.text
                assert answer.headers["content-type"].split(";")[0] == ex.MEDIA_TYPES[fmt].split(";")[0]
                with SQLiteStore(db) as store:
                    assert answer.content == ex.render(rv.build(store, "s", viewer, lang), fmt), (viewer, fmt)


def test_the_cli_writes_its_file_whole_and_leaves_no_temporary_one(tmp_path, small_parts):
    db = tmp_path / "cli.db"
    random_night(db, "s", "v5", 60, random.Random("cli"), close=True)
    out = tmp_path / "out" / "night.md"
    out.parent.mkdir()
    assert main(["export", "--db", str(db), "--session", "s", "--format", "md", "--out", str(out)]) == 0
    with SQLiteStore(db) as store:
        assert out.read_bytes() == ex.render(rv.build(store, "s"), "md")
    assert os.listdir(out.parent) == ["night.md"]
    # an unknown session: an error, and the file as it was
    assert main(["export", "--db", str(db), "--session", "nope", "--format", "md", "--out", str(out)]) == 2
    with SQLiteStore(db) as store:
        assert out.read_bytes() == ex.render(rv.build(store, "s"), "md")
    assert os.listdir(out.parent) == ["night.md"]


def test_a_write_that_fails_midway_leaves_the_file_as_it_was(tmp_path):
    out = tmp_path / "night.jsonl"
    out.write_bytes(b"the export of last week\n")

    def parts():
        yield b'{"seq":1}\n'
        yield b'{"seq":2}\n'
        raise OSError("the disk is full")

    with pytest.raises(OSError, match="disk is full"):
        ex.write_atomically(out, parts())
    assert out.read_bytes() == b"the export of last week\n"
    assert os.listdir(tmp_path) == ["night.jsonl"]
    ex.write_atomically(out, iter([b'{"seq":1}\n', b'{"seq":2}\n']))
    assert out.read_bytes() == b'{"seq":1}\n{"seq":2}\n'
    assert os.listdir(tmp_path) == ["night.jsonl"]
