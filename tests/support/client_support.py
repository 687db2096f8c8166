"""Shared by the Python-client and browser tests: a real chronicle on disk, a real server
on loopback, and a TCP proxy the test controls to cut a device's connection.

Playwright's offline mode does not cut an open websocket, and killing the server would
cut everyone: the proxy sits between one device and the server, so one phone drops out
while the others play on.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import msgspec

from conteur.events import game
from conteur.events.model import STORYTELLER
from conteur.events.sheets import ActionSheet, MetSheet, V5Sheet
from conteur.server.web.app import Served, create_app
from conteur.server.core.auth import Tokens
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore

SESSION = "demo"

ANNA = MetSheet(physical=6, social=3, mental=4, abilities={"melee": 2, "brawl": 1}, merits=("lucky",))
BRUNO = MetSheet(physical=7, social=2, mental=3, abilities={"brawl": 2, "dodge": 1})
CLARA = V5Sheet(attributes={"dexterity": 3, "wits": 2}, skills={"stealth": 2}, willpower=5, hunger=2)
JAKE = ActionSheet(characteristics={"science": 6, "combat": 5}, expertises=("chemistry",))


class Setup(msgspec.Struct, kw_only=True):
    db: str
    session: str
    storyteller: str
    players: dict[str, str]  # character id -> token
    dice: dict[str, tuple[str, str]] = {}  # character id -> (session, token), dice rulesets
    chronicle_storyteller: str = ""  # a storyteller token for every session (names one at hello)
    observer: str = ""  # a wall display


def command(tag: str, **fields):
    return msgspec.convert({"type": tag, **fields}, game.COMMAND_BY_TAG[tag])


def make_chronicle(db: str | Path, *, session: str = SESSION, accept_timeout: int = 60) -> Setup:
    """A Mind's Eye Theatre session with Anna and Bruno in one scene, and a V5 character;
    ``accept_timeout``: seconds before a retest or overbid window closes by itself (MET-16)."""
    store = SQLiteStore(str(db))
    try:
        chronicle = Chronicle(store)
        for cmd in (
            command("open_session", name="Demo", accept_timeout=accept_timeout),
            command("add_character", character="anna", name="Anna", sheet=msgspec.to_builtins(ANNA)),
            command("add_character", character="bruno", name="Bruno", sheet=msgspec.to_builtins(BRUNO)),
            command("open_scene", scene="hall", name="Great hall"),
            command("join_scene", character="anna", scene="hall"),
            command("join_scene", character="bruno", scene="hall"),
        ):
            executed = chronicle.execute_sync(session, cmd, STORYTELLER)
            assert not executed.outcome.rejected, executed.outcome
        tokens = Tokens(store)
        dice = {}
        for dice_session, who, name, sheet in (("nuit", "clara", "Clara", CLARA), ("action", "jake", "Jake", JAKE)):
            for cmd in (
                command("open_session", name=dice_session),
                command("add_character", character=who, name=name, sheet=msgspec.to_builtins(sheet)),
            ):
                assert not chronicle.execute_sync(dice_session, cmd, STORYTELLER).outcome.rejected
            dice[who] = (dice_session, tokens.issue("player", character=who, session=dice_session))
        return Setup(
            db=str(db), session=session,
            storyteller=tokens.issue("storyteller", session=session, name="Morgane"),
            players={c: tokens.issue("player", character=c, session=session) for c in ("anna", "bruno")},
            dice=dice,
            chronicle_storyteller=tokens.issue("storyteller", name="Head storyteller"),
            observer=tokens.issue("observer", session=session, name="Wall"),
        )
    finally:
        store.close()


@contextmanager
def served(db: str | Path) -> Iterator[Served]:
    with Served(create_app(str(db))) as server:
        yield server


def stored_rows(db: str | Path, command_id: str) -> list[tuple[int, str]]:
    """The server's log of one command: (seq, event type) of every event it appended."""
    conn = sqlite3.connect(str(db))
    try:
        return conn.execute(
            "SELECT seq, type FROM events WHERE command_id=? ORDER BY seq", (command_id,)
        ).fetchall()
    finally:
        conn.close()


def events_of_type(db: str | Path, tag: str) -> list[dict]:
    conn = sqlite3.connect(str(db))
    try:
        rows = conn.execute("SELECT data FROM events WHERE type=? ORDER BY seq", (tag,)).fetchall()
    finally:
        conn.close()
    return [msgspec.json.decode(r[0]) for r in rows]


class Proxy:
    """A TCP proxy between some devices and the server, on its own thread and loop, so
    sync (Playwright) and async tests drive it alike. ``target_port`` may be changed
    between connections (the server came back elsewhere).

    - ``cut()``: every open connection dropped now (an RST both ways); new ones refused
      until ``release()`` if ``hold``.
    - ``partition()``: a dead Wi-Fi link: bytes stop flowing both ways but the sockets
      stay open, as when a link dies silently; new connections are refused. ``heal()``
      drops the dead flows and lets new ones through.
    - ``flows``: every byte of every connection, as an eavesdropper on the venue's air
      records it: one ``{"up": ..., "down": ...}`` per connection, in order.
    """

    def __init__(self, target_port: int, host: str = "127.0.0.1"):
        self.host = host
        self.target_port = target_port
        self.port = 0
        self.held = False
        self.partitioned = False
        self.accepted = 0
        self.flows: list[dict[str, bytearray]] = []
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="proxy", daemon=True)

    def __enter__(self) -> Proxy:
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc) -> None:
        async def shutdown() -> None:
            self._drop()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop)
        self._thread.join(5)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            server = await asyncio.start_server(self._handle, self.host, 0)
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()

        self._loop.run_until_complete(start())
        self._loop.run_forever()
        self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.held or self.partitioned:
            writer.transport.abort()
            return
        self.accepted += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}
        flow = {"up": bytearray(), "down": bytearray()}
        self.flows.append(flow)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, heard: bytearray) -> None:
            try:
                while data := await src.read(65536):
                    heard += data
                    while self.partitioned and not dst.transport.is_closing():
                        await asyncio.sleep(0.05)  # a dead link: the bytes go nowhere
                    if dst.transport.is_closing():
                        return
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer, flow["up"]), pipe(up_reader, writer, flow["down"]))
        self._writers -= {writer, up_writer}

    def _drop(self) -> None:
        for w in list(self._writers):
            w.transport.abort()
        self._writers.clear()

    def _on_loop(self, change) -> None:
        """Runs ``change`` on the proxy's loop and waits for it."""
        done = threading.Event()

        def go() -> None:
            change()
            done.set()

        self._loop.call_soon_threadsafe(go)
        done.wait(5)

    def cut(self, hold: bool = True) -> None:
        """Drop every connection now (an RST both ways), and refuse new ones if ``hold``."""
        def go() -> None:
            self.held = hold
            self._drop()
        self._on_loop(go)

    def release(self) -> None:
        self.held = False

    def partition(self) -> None:
        """Bytes stop flowing both ways; the open sockets stay open."""
        def go() -> None:
            self.partitioned = True
        self._on_loop(go)

    def heal(self) -> None:
        """Ends a partition: the dead flows are dropped, new connections go through."""
        def go() -> None:
            self._drop()
            self.partitioned = False
        self._on_loop(go)
