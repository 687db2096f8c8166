"""A real conteur server in a child process, and a venue to point devices at.

Shared by ``bench/load.py`` and the fault tests: the server under test runs exactly as
``conteur serve`` runs it (uvicorn, websockets-sansio, permessage-deflate off), in its own
process, so it can be killed with SIGKILL and restarted on the same file.

    venue = prepare_venue(db, "night", players=300)      # roster + tokens, in this process
    with ServerProcess(db) as server:                     # uvicorn child on 127.0.0.1
        server.ws_url ...
        server.kill9(); server.start()                    # same port, same file
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


class Venue(msgspec.Struct, kw_only=True):
    session: str
    storyteller: str
    players: list[tuple[str, str]]  # (character, token)


def prepare_venue(db: str | Path, session: str = "night", players: int = 20,
                  scene: str = "hall") -> Venue:
    """A MET session with ``players`` characters in one scene, their tokens and a
    storyteller's, written through the real command path (one group commit)."""
    from conteur.events.sheets import MetSheet
    from conteur.server.core.auth import Tokens
    from conteur.server.core.roster import Roster, RosterCharacter, RosterScene, import_roster
    from conteur.server.core.service import Chronicle
    from conteur.server.store.factory import open_store

    roster = Roster(
        session=session, name="load", ruleset="met", scenes=[RosterScene(id=scene, name=scene)],
        characters=[RosterCharacter(id=f"p{i}", name=f"P{i}", scene=scene,
                                    sheet=MetSheet(physical=6, social=5, mental=4))
                    for i in range(players)],
    )
    with open_store(db, create=True) as store:  # a file, or a postgresql:// URL
        tokens = Tokens(store)
        # its own loop on its own thread: callable from async tests too
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            imported = pool.submit(asyncio.run, import_roster(Chronicle(store), tokens, roster)).result()
        storyteller = tokens.issue("storyteller", name="storyteller")
    return Venue(session=session, storyteller=storyteller,
                 players=[(p.character, p.token) for p in imported.players])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVE = """
import sys, msgspec, uvicorn
from conteur.server.web.app import Settings, create_app, uvicorn_config
settings = msgspec.convert(msgspec.json.decode(sys.argv[3]), Settings)
app = create_app(sys.argv[1], settings=settings, web_dir=None)
uvicorn.Server(uvicorn_config(app, "127.0.0.1", int(sys.argv[2]))).run()
"""


class ServerProcess:
    """``python -c SERVE db port settings`` with health polling; SIGKILL and restart."""

    def __init__(self, db: str | Path, *, port: int | None = None, settings: dict | None = None,
                 env: dict | None = None, program: str = SERVE, args: tuple[str, ...] | None = None,
                 log_path: str | Path | None = None, cpus: set[int] | None = None):
        self.db = str(db)
        # pinned before exec, so every thread and worker the server starts inherits it
        self.cpus = cpus
        self.port = port or free_port()
        self.settings = settings or {}
        self.env = env
        self.program = program
        self.args = args
        self.proc: subprocess.Popen | None = None
        self.log_path = str(log_path or f"{self.db}.server.log")
        self._log = None
        self.started_in: float = 0.0

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 60.0) -> float:
        """Starts the child and returns the seconds until it answered ``/health``."""
        args = self.args if self.args is not None else (
            self.db, str(self.port), json.dumps(self.settings))
        env = {**os.environ, "PYTHONPATH": str(ROOT), **(self.env or {})}
        t0 = time.perf_counter()
        # stderr to a file, never a pipe: a chatty server must not block on a full pipe
        self._log = open(self.log_path, "ab")
        cpus = self.cpus
        self.proc = subprocess.Popen([sys.executable, "-c", self.program, *args], cwd=ROOT, env=env,
                                     stdout=subprocess.DEVNULL, stderr=self._log,
                                     preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        deadline = t0 + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                err = Path(self.log_path).read_text(errors="replace")
                raise RuntimeError(f"server exited with {self.proc.returncode}: {err[-2000:]}")
            if self.healthy():
                self.started_in = time.perf_counter() - t0
                return self.started_in
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("server did not answer /health in time")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=1) as r:
                return r.status == 200
        except OSError:
            return False

    def health(self) -> dict:
        with urllib.request.urlopen(f"{self.url}/health", timeout=5) as r:
            return json.loads(r.read())

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._drain()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill9()
        self._drain()

    def _drain(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
        self.proc = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"
