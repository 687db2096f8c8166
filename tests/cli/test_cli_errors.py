"""Every CLI command on every bad database a tired storyteller meets: a missing
folder, a file locked by another process, a file that is not SQLite, an empty file and a
newer conteur's database. Each answer is one readable line on stderr, never a traceback,
with the exit status `conteur --help` documents; and the guards that keep the chronicle:
one server per database, read-only commands that never create or write a file, a
restore that refuses what would lose events."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conteur.server.store.dbfile import EXIT_BAD_INPUT, EXIT_CODES, EXIT_IN_USE, EXIT_NEWER, SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
CONDITIONS = ("missing folder", "locked", "not sqlite", "empty", "newer")
EXPECTED = {"missing folder": EXIT_BAD_INPUT, "locked": EXIT_IN_USE, "not sqlite": EXIT_BAD_INPUT,
            "empty": EXIT_BAD_INPUT, "newer": EXIT_NEWER}
SKIP = {"type": "skip_time", "seconds": 60}


def conteur(*args, cwd=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conteur.server.cli.main", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def chronicle(path: Path) -> Path:
    result = conteur("simulate", "--db", path, "--events", 60, "--ruleset", "met", "--seed", 1)
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    return chronicle(tmp_path_factory.mktemp("good") / "good.db")


def bad_file(folder: Path, condition: str, good: Path) -> Path:
    path = folder / "chronicle.db"
    if condition == "missing folder":
        return folder / "no-such-folder" / "chronicle.db"
    if condition == "not sqlite":
        path.write_text("these are the storyteller's notes, not a database\n" * 20)
    elif condition == "empty":
        path.write_bytes(b"")
    else:  # locked or newer: a real chronicle
        path.write_bytes(good.read_bytes())
        conn = sqlite3.connect(path)
        if condition == "newer":
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
        else:  # the lock below needs the rollback journal: WAL lets readers through
            conn.execute("PRAGMA journal_mode=delete")
        conn.commit()
        conn.close()
    return path


LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
"""


def commands(db: Path, folder: Path, good: Path) -> dict[str, list]:
    """Each command, given the bad file where it takes a database (the client's --state)."""
    link = "http://127.0.0.1:9/#join=abc&session=s"  # port 9: nothing listens (discard)
    return {
        "serve": ["serve", "--db", db, "--host", "127.0.0.1", "--port", 0],
        "init": ["init", "--db", db, "--roster", ROOT / "docs" / "roster-example.toml"],
        "verify": ["verify", db],
        "replay": ["replay", "--db", db, "--session", "sim-1"],
        "export": ["export", "--db", db, "--session", "sim-1", "--format", "md"],
        "backup": ["backup", "--db", db, "--to", folder / "copy.db"],
        "restore": ["restore", "--from", db, "--db", folder / "target.db"],
        "simulate": ["simulate", "--db", db, "--events", 20],
        "migrate": ["migrate", "--from", db, "--to", folder / "moved.db"],
        "client join": ["client", "join", link, "--state", db, "--timeout", 1],
        "client send": ["client", "send", '{"type": "skip_time", "seconds": 60}', "--state", db,
                        "--timeout", 1],
        "client watch": ["client", "watch", "--state", db, "--timeout", 1],
        "client state": ["client", "state", "--state", db, "--timeout", 1],
    }


def expected_status(name: str, condition: str) -> int:
    if name == "backup" and condition == "newer":
        return 0  # pages copied, not read: the spare machine may be the older one
    if name.startswith("client") and condition in ("missing folder", "empty"):
        # the client's own state file: its folder is made, an empty file is a new state;
        # then no server is known (2), or the one in the link does not answer (3)
        return 3 if name == "client join" else 2
    return EXPECTED[condition]


class PerThread(io.TextIOBase):
    """sys.stdout/sys.stderr for commands run side by side in threads: each thread's
    writes go to its own buffer (print looks sys.stderr up at every call)."""

    def __init__(self) -> None:
        self.buffers: dict[int, io.StringIO] = {}

    def write(self, text: str) -> int:
        return self.buffers.setdefault(threading.get_ident(), io.StringIO()).write(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def take(self) -> str:
        return self.buffers.pop(threading.get_ident(), io.StringIO()).getvalue()


def run_in_process(argv: list, err: PerThread, out: PerThread) -> tuple[int | str, str]:
    """The command as `conteur` runs it, in this process (the imports are done once);
    an exception escaping it is what a user would see as a traceback."""
    from conteur.server.cli.main import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = stop.code
    except BaseException as exc:  # noqa: BLE001 - the failure this test looks for
        code = f"Traceback: {type(exc).__name__}: {exc}"
    out.take()
    return code, err.take()


@pytest.mark.parametrize("condition", CONDITIONS)
def test_every_command_answers_a_bad_database_in_one_line(condition, good, tmp_path, monkeypatch):
    runs = {}
    for name in commands(tmp_path, tmp_path, good):
        folder = tmp_path / name.replace(" ", "-")
        folder.mkdir()
        runs[name] = (folder, bad_file(folder, condition, good))
    lockers = []
    err, out = PerThread(), PerThread()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", out)
    try:
        if condition == "locked":
            for _, db in runs.values():
                locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(db)], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True)
                assert locker.stdout.readline().strip() == "locked"
                lockers.append(locker)
        # side by side: a locked database makes each command wait SQLite's busy timeout
        with ThreadPoolExecutor(max_workers=len(runs)) as pool:
            results = dict(zip(runs, pool.map(
                lambda name: run_in_process(commands(runs[name][1], runs[name][0], good)[name], err, out),
                runs)))
    finally:
        for locker in lockers:
            locker.stdin.close()
            locker.wait(timeout=30)

    problems = []
    for name, (code, stderr) in results.items():
        lines = stderr.splitlines()
        prefix = f"conteur {name}:"
        expected = expected_status(name, condition)
        if ("Traceback" in f"{code}{stderr}" or len(lines) != (expected != 0)
                or (lines and not lines[0].startswith(prefix)) or code != expected):
            problems.append(f"{name}: exit {code}, stderr {stderr!r}")
    assert problems == [], "\n".join(problems)
    if condition == "missing folder":  # nothing was created for the server's commands
        for name, (folder, db) in runs.items():
            if not name.startswith("client"):
                assert not db.parent.exists(), name


def test_the_matrix_sees_a_traceback(tmp_path, monkeypatch):
    # the check above can fail: an exception escaping a command is reported as one
    err, out = PerThread(), PerThread()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr("conteur.server.cli.main.build_parser", _parser_with_broken_verify)
    code, _ = run_in_process(["verify", tmp_path / "x.db"], err, out)
    assert str(code).startswith("Traceback: ZeroDivisionError")


def _parser_with_broken_verify():
    import argparse

    parser = argparse.ArgumentParser(prog="conteur")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("verify").add_argument("path")
    parser.set_defaults(func=lambda args: 1 / 0)
    return parser


def test_help_documents_every_exit_status():
    out = conteur("--help").stdout
    assert "exit status:" in out
    for code, text in EXIT_CODES.items():
        assert f"  {code}  {text}" in out


def test_the_unit_does_not_restart_forever_on_a_newer_database():
    unit = (ROOT / "deploy" / "conteur.service").read_text()
    [line] = [x for x in unit.splitlines() if x.startswith("RestartPreventExitStatus=")]
    assert str(EXIT_NEWER) in line.split("=", 1)[1].split()


def test_a_newer_database_is_named_with_both_versions_and_verify_says_newer(good, tmp_path):
    db = bad_file(tmp_path, "newer", good)
    before = db.read_bytes()
    serve = conteur("serve", "--db", db, "--port", 0)
    assert serve.returncode == EXIT_NEWER
    assert f"schema version {SCHEMA_VERSION + 1}" in serve.stderr
    assert f"reads version {SCHEMA_VERSION}" in serve.stderr
    verify = conteur("verify", db)
    assert verify.returncode == EXIT_NEWER
    assert "newer conteur" in verify.stderr and "FAILED" not in verify.stdout + verify.stderr
    assert db.read_bytes() == before


def test_read_only_commands_never_create_a_file(good, tmp_path):
    typo = tmp_path / "chronicel.db"
    for args in (["replay", "--db", typo, "--session", "s"],
                 ["export", "--db", typo, "--session", "s", "--format", "md"],
                 ["verify", typo], ["backup", "--db", typo, "--to", tmp_path / "copy.db"]):
        result = conteur(*args)
        assert result.returncode == EXIT_BAD_INPUT, result
        assert len(result.stderr.splitlines()) == 1
        assert list(tmp_path.iterdir()) == [], f"{args[0]} created {list(tmp_path.iterdir())}"
    # a 0-byte file stays 0 bytes: verify never writes a schema into it and says OK
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    result = conteur("verify", empty)
    assert result.returncode == EXIT_BAD_INPUT and "empty" in result.stderr
    assert empty.read_bytes() == b"" and sorted(tmp_path.iterdir()) == [empty]


def test_verify_never_writes(good, tmp_path):
    db = tmp_path / "good.db"
    db.write_bytes(good.read_bytes())  # a WAL database, server stopped: no -wal beside it
    before = (db.read_bytes(), db.stat().st_mtime_ns)

    result = conteur("verify", db)

    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.db"]
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before


def served(db: Path, tmp_path: Path) -> subprocess.Popen:
    out = tmp_path / "serve.out"
    proc = subprocess.Popen([sys.executable, "-m", "conteur.server.cli.main", "serve", "--db", str(db), "--host",
                             "127.0.0.1", "--port", "0"], stdout=open(out, "w"), stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while "Application startup complete" not in out.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
        time.sleep(0.1)
    return proc


def test_one_server_per_database(good, tmp_path):
    db = tmp_path / "conteur.db"
    db.write_bytes(good.read_bytes())
    first = served(db, tmp_path)
    try:
        for args in (["serve", "--db", db, "--host", "127.0.0.1", "--port", 0],
                     ["init", "--db", db, "--roster", ROOT / "docs" / "roster-example.toml"],
                     ["simulate", "--db", db, "--events", 10]):
            second = conteur(*args)
            assert second.returncode == EXIT_IN_USE, second
            assert second.stderr.startswith(f"conteur {args[0]}: ")
            assert "in use by another conteur" in second.stderr and "Traceback" not in second.stderr
        # readers go on beside the server
        assert conteur("verify", db).returncode == 0
        assert conteur("backup", "--db", db, "--to", tmp_path / "copy.db").returncode == 0
        assert first.poll() is None
    finally:
        first.send_signal(signal.SIGINT)
        first.wait(timeout=30)
    # the lock goes with the process: the next server starts
    again = served(db, tmp_path)
    again.send_signal(signal.SIGINT)
    again.wait(timeout=30)


def events(db: Path) -> int:
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        conn.close()


def test_restore_refuses_what_would_lose_the_chronicle(good, tmp_path):
    db = tmp_path / "conteur.db"
    db.write_bytes(good.read_bytes())
    held = events(db)
    # an empty file (a backup-loop that wrote nothing, a mistyped --from)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    result = conteur("restore", "--from", empty, "--db", db)
    assert result.returncode == EXIT_BAD_INPUT and "empty" in result.stderr
    # a backup whose chain does not verify
    tampered = tmp_path / "tampered.db"
    tampered.write_bytes(good.read_bytes())
    conn = sqlite3.connect(tampered)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET actor = 'someone else' WHERE seq = 3")
    conn.commit()
    conn.close()
    result = conteur("restore", "--from", tampered, "--db", db)
    assert result.returncode == 1 and "does not verify" in result.stderr, result.stderr
    # a verifying backup with fewer events than the database: --force is asked for
    older = tmp_path / "older.db"
    assert conteur("simulate", "--db", older, "--events", 10, "--ruleset", "met").returncode == 0
    assert events(older) < held
    result = conteur("restore", "--from", older, "--db", db)
    assert result.returncode == 1 and "--force" in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert events(db) == held and not list(tmp_path.glob("conteur.db.before-restore-*"))
    result = conteur("restore", "--from", older, "--db", db, "--force")
    assert result.returncode == 0, result.stderr
    assert events(db) == events(older)
    [aside] = [p for p in tmp_path.glob("conteur.db.before-restore-*") if p.suffix == "" or
               not p.name.endswith(("-wal", "-shm"))]
    assert events(aside) == held
