"""deploy/postgresql.md followed from a fresh machine, as tests/deploy/test_tls_door.py follows
deploy/README.md for TLS: every shell block marked ``<!-- step -->`` run in order with
``sh -e``, on a cluster of its own in a temporary folder. What differs from a real machine
is substituted and nothing else: the folders (a temporary home), the ports (free ones),
the passwords (random), the other hosts' network (loopback), and, run as root, the cluster's
commands run as the unprivileged user that owns it (``initdb`` refuses root)."""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from tests.support.pg_support import BINDIR, needs_postgres

pytest.importorskip("psycopg")

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "deploy" / "postgresql.md"


def steps() -> list[str]:
    return re.findall(r"<!-- step -->\n```sh\n(.*?)```", GUIDE.read_text(), re.S)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_guide_has_the_steps_of_a_fresh_machine():
    text = "\n".join(steps())
    for needed in ("initdb", "pg_ctl", ".pgpass", "listen_addresses", "pg_hba.conf", "pg-setup",
                   "conteur migrate", "conteur serve"):
        assert needed in text, needed
    assert not re.search(r"://[^/@\s]+:[^/@\s]+@", GUIDE.read_text()), "a password in a URL"


class Machine:
    """The fresh machine: a home folder, the cluster's user, and the substitutions."""

    def __init__(self, root: Path):
        self.home = root / "home"
        self.home.mkdir()
        self.owner = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                try:
                    self.owner = pwd.getpwnam(name)
                    break
                except KeyError:
                    continue
            os.chown(root, self.owner.pw_uid, self.owner.pw_gid)
            os.chown(self.home, self.owner.pw_uid, self.owner.pw_gid)
        self.port = free_port()
        self.http_ports: list[int] = []
        self.passwords = {name: secrets.token_hex(10) for name in ("ADMIN", "OWNER", "SERVER")}
        self.cluster = self.home / "conteur-pg"

    def substitute(self, text: str) -> str:
        text = text.replace("/usr/lib/postgresql/15/bin", BINDIR)
        text = text.replace("~/", f"{self.home}/")
        text = text.replace("unix_socket_directories = '/tmp'", f"unix_socket_directories = '{self.home}'")
        text = text.replace("5433", str(self.port))
        text = text.replace("--roster roster.toml", f"--roster {ROOT / 'docs' / 'roster-example.toml'}")
        text = text.replace("10.0.0.5", "127.0.0.1").replace("10.0.0.0/24", "127.0.0.1/32")
        for name, password in self.passwords.items():
            text = text.replace(f"{name}-PASSWORD", password)
        return text

    def env(self) -> dict:
        return {**os.environ, "HOME": str(self.home), "PYTHONPATH": str(ROOT),
                "PATH": f"{Path(sys.executable).parent}:{BINDIR}:{os.environ.get('PATH', '')}"}

    def run(self, script: str) -> subprocess.CompletedProcess:
        conteur = bool(re.search(r"^conteur ", script, re.M))
        kwargs: dict = {}
        if self.owner is not None and not conteur:  # the cluster's user; conteur runs as itself
            kwargs = dict(user=self.owner.pw_uid, group=self.owner.pw_gid, extra_groups=[])
        return subprocess.run(["sh", "-e", "-c", script], capture_output=True, text=True, timeout=300,
                              cwd=self.home, env=self.env(), **kwargs)

    def serve(self, script: str) -> None:
        """A ``conteur serve`` step: started, answering /health, stopped."""
        port = free_port()
        script = script.replace("--host 0.0.0.0 --port 8000", f"--host 127.0.0.1 --port {port}")
        log = open(self.home / f"serve-{port}.log", "w+")
        proc = subprocess.Popen(["sh", "-e", "-c", "exec " + script.strip()], cwd=self.home, env=self.env(),
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                assert proc.poll() is None and time.monotonic() < deadline, \
                    (self.home / f"serve-{port}.log").read_text()
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        finally:
            proc.terminate()
            proc.wait(60)
            log.close()
        text = (self.home / f"serve-{port}.log").read_text()
        assert "Traceback" not in text, text
        for password in self.passwords.values():
            assert password not in text


def test_deploy_postgresql_md_from_a_fresh_machine():
    needs_postgres()
    root = Path(tempfile.mkdtemp(prefix="conteur-guide-"))
    machine = Machine(root)
    try:
        # the chronicle file section 4 moves: one a venue played, made beforehand
        made = subprocess.run([sys.executable, "-m", "conteur.server.cli.main", "init", "--db",
                               str(machine.home / "chronicle.db"), "--roster",
                               str(ROOT / "docs" / "roster-example.toml")],
                              capture_output=True, text=True, env=machine.env(), cwd=machine.home)
        assert made.returncode == 0, made.stderr
        done_steps = 0
        for step in steps():
            script = machine.substitute(step)
            if script.lstrip().startswith("conteur serve"):
                machine.serve(script)
            else:
                done = machine.run(script)
                assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
                for password in machine.passwords.values():
                    assert password not in done.stdout + done.stderr
            done_steps += 1
        assert done_steps >= 8
        # what moved serves as the server's role: the tokens of the file work there
        import psycopg

        url = f"postgresql://conteur_server@localhost:{machine.port}/moved"
        with psycopg.connect(url, passfile=str(machine.home / ".pgpass")) as conn:
            assert conn.execute("SELECT count(*) FROM tokens").fetchone()[0] > 0
    finally:
        if machine.cluster.exists():
            machine.run(f"{BINDIR}/pg_ctl -D {machine.cluster} -w stop -m immediate || true")
        shutil.rmtree(root, ignore_errors=True)
