"""A throwaway PostgreSQL cluster for the tests: started once per test session, removed after.

Debian's ``postgresql`` package only (``initdb``/``pg_ctl`` from /usr/lib/postgresql/N/bin,
or ``CONTEUR_PG_BIN=/path/to/bin``): nothing is downloaded. Without it, every PostgreSQL
test is skipped with the reason printed (``make test`` passes ``-rs``), unless
``CONTEUR_REQUIRE_PG=1`` (``.ci/run`` sets it), where a missing server is an error: CI must
never turn green by skipping them.

``initdb`` refuses to run as root, and CI runs as root: the cluster then belongs to the
``postgres`` user the Debian package creates (or ``nobody``), in a folder of its own under
the system's temporary folder. It listens on 127.0.0.1 only, on a free port, with its
unix socket in that folder, and every role needs its password (scram-sha-256), so the
privilege tests mean something. A watchdog process stops the cluster if the test process
dies without its teardown (kill -9, a crash): no cluster outlives its tests.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import pytest

ADMIN = "conteur_admin"
ROOT = Path(__file__).resolve().parents[2]


def find_bindir() -> str | None:
    override = os.environ.get("CONTEUR_PG_BIN")
    if override is not None:
        return override if os.access(os.path.join(override, "initdb"), os.X_OK) else None
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(found)
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                      key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0)
    return os.path.dirname(versions[-1]) if versions else None


BINDIR = find_bindir()
NO_POSTGRES = ("PostgreSQL is not installed (apt install postgresql, or CONTEUR_PG_BIN=/usr/lib/"
               "postgresql/15/bin): PostgreSQL tests skipped")


def needs_postgres() -> None:
    if BINDIR is None:
        if os.environ.get("CONTEUR_REQUIRE_PG") == "1":
            pytest.fail("CONTEUR_REQUIRE_PG=1 but " + NO_POSTGRES.split(":")[0])
        pytest.skip(NO_POSTGRES)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _owner() -> pwd.struct_passwd | None:
    """Who runs the cluster: ourselves, or an unprivileged user when we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root with neither a postgres nor a nobody user: initdb refuses root")


class Cluster:
    """One PostgreSQL server in a temporary folder; ``admin_url`` is its superuser."""

    def __init__(self, bindir: str, *, fsync: bool = False):
        self.bindir = bindir
        self.fsync = fsync
        self.owner = _owner()
        self.root = Path(tempfile.mkdtemp(prefix="conteur-pg-"))
        self.data = self.root / "data"
        self.password = secrets.token_hex(12)
        self.port = 0
        self._watchdog: subprocess.Popen | None = None

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        kwargs: dict = {}
        if self.owner is not None:
            kwargs = dict(user=self.owner.pw_uid, group=self.owner.pw_gid, extra_groups=[])
        return subprocess.run([os.path.join(self.bindir, args[0]), *args[1:]], capture_output=True,
                              text=True, check=check, cwd=self.root, **kwargs)

    def start(self) -> "Cluster":
        if self.owner is not None:
            os.chown(self.root, self.owner.pw_uid, self.owner.pw_gid)
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self.owner is not None:
            os.chown(pwfile, self.owner.pw_uid, self.owner.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", ADMIN, f"--pwfile={pwfile}", "-E", "UTF8",
                  "--no-locale", "--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--no-sync")
        pwfile.unlink()
        self._start_watchdog()
        last = ""
        for _ in range(5):  # another test run may take the free port between probe and bind
            self.port = _free_port()
            done = self._start(check=False)
            if done.returncode == 0:
                return self
            last = done.stderr + (self.root / "log").read_text(errors="replace")[-2000:]
        self.stop()
        raise RuntimeError(f"PostgreSQL did not start: {last}")

    def _start(self, check: bool = True) -> subprocess.CompletedProcess:
        options = (f"-c port={self.port} -c listen_addresses=127.0.0.1 "
                   f"-c unix_socket_directories={self.root} -c max_connections=200 "
                   f"-c fsync={'on' if self.fsync else 'off'}")
        return self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w",
                         "-t", "120", "-o", options, "start", check=check)

    @contextlib.contextmanager
    def down(self):
        """The server stopped inside the block (connections refused), then started again
        on the same port."""
        self._run("pg_ctl", "-D", str(self.data), "stop", "-m", "fast", "-w")
        try:
            yield
        finally:
            self._start()

    def _start_watchdog(self) -> None:
        # /proc, not kill -0: an unprivileged watchdog may not signal a root test process
        script = (f"while [ -d /proc/{os.getpid()} ]; do sleep 1; done; "
                  f"'{self.bindir}/pg_ctl' -D '{self.data}' stop -m immediate >/dev/null 2>&1; "
                  f"rm -rf '{self.root}'")
        kwargs: dict = {}
        if self.owner is not None:
            kwargs = dict(user=self.owner.pw_uid, group=self.owner.pw_gid, extra_groups=[])
        self._watchdog = subprocess.Popen(["sh", "-c", script], start_new_session=True, cwd="/",
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, **kwargs)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "stop", "-m", "fast", "-w", check=False)
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
            self._watchdog = None
        shutil.rmtree(self.root, ignore_errors=True)

    def restart(self) -> None:
        """Stops and starts the server on the same port (fault tests)."""
        # with -l, as at start: the server must not hold our captured stdout open
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "restart", "-m", "fast",
                  "-w", "-t", "120")

    def processes(self) -> list[int]:
        """The pids of the server: the postmaster and every backend and helper it forked."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        pids = [postmaster]
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            except OSError:  # gone meanwhile
                continue
            if int(fields[1]) == postmaster:
                pids.append(int(stat.split("/")[2]))
        return pids

    @contextlib.contextmanager
    def stalled(self):
        """Every process of the server stopped (SIGSTOP) inside the block, then continued:
        the stand-in for a hung host or a partition, where the kernel still holds the
        connections open and nothing answers on them."""
        pids = self.processes()
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            yield pids
        finally:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass

    def url(self, database: str = "postgres", *, user: str = ADMIN, password: str | None = None) -> str:
        password = self.password if password is None else password
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{database}"

    def version(self) -> str:
        import psycopg

        with psycopg.connect(self.admin_url) as conn:
            return conn.execute("SHOW server_version").fetchone()[0].split()[0]

    @property
    def admin_url(self) -> str:
        return self.url()

    def create_database(self) -> str:
        """A fresh, empty database (one per test); returns its name."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Serve:
    """``conteur serve --store URL`` on a free loopback port, its output in a file."""

    def __init__(self, url: str, log: Path, *, deadline: float = 2):
        self.url, self.log_path = url, log
        self.deadline = deadline  # the statement timeout: an outage answered quickly
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Serve:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "CONTEUR_PG_STATEMENT_TIMEOUT": str(self.deadline)}
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conteur.server.cli.main", "serve", "--store", self.url,
             "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while self.health()[0] != 200:
            assert self.proc.poll() is None and time.monotonic() < deadline, self.output()
            time.sleep(0.1)
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        finally:
            self._log.close()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def health(self) -> tuple[int, dict]:
        try:
            answer = httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=5)
            return answer.status_code, answer.json()
        except httpx.HTTPError:
            return 0, {}


@pytest.fixture(scope="session")
def pg_cluster():
    needs_postgres()
    cluster = Cluster(BINDIR).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster):
    """The superuser's URL to a fresh database of its own, dropped after the test."""
    name = pg_cluster.create_database()
    yield pg_cluster.url(name)
    pg_cluster.drop_database(name)
