"""The venue deployment kit: the systemd unit, the shell scripts."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
UNIT = DEPLOY / "conteur.service"
SCRIPTS = sorted(DEPLOY.glob("*.sh"))


def unit_settings(text: str) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def test_unit_runs_the_server_as_asked_by_issue_8():
    settings = unit_settings(UNIT.read_text())
    assert shlex.split(settings["ExecStart"][0])[1:] == [
        "serve", "--db", "/var/lib/conteur/conteur.db", "--host", "0.0.0.0", "--port", "8000"]
    assert settings["User"] == ["conteur"]  # unprivileged; install.sh creates it
    assert settings["StateDirectory"] == ["conteur"]  # /var/lib/conteur
    assert settings["Restart"] == ["on-failure"]
    assert "network-online.target" in settings["After"][0]
    assert "network-online.target" in settings["Wants"][0]


def test_unit_passes_systemd_analyze_verify(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    # verify insists that ExecStart's binary exists; /opt/conteur is only there once
    # deploy/install.sh has run, so point a copy of the unit at a binary that exists.
    text = UNIT.read_text().replace("/opt/conteur/venv/bin/conteur", "/bin/true")
    unit = tmp_path / "conteur.service"
    unit.write_text(text)

    result = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True)

    # verify exits 0 even for unknown keys or bad values, which it only prints: any line
    # about our file is a defect.
    complaints = [line for line in (result.stdout + result.stderr).splitlines()
                  if "conteur.service" in line]
    assert result.returncode == 0, result.stderr
    assert complaints == []


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_passes_shellcheck(script):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (CI installs it: apt-get install shellcheck)")
    result = subprocess.run([shellcheck, "--shell=bash", str(script)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_is_strict_and_executable(script):
    lines = script.read_text().splitlines()
    assert lines[0] == "#!/usr/bin/env bash"
    assert "set -euo pipefail" in lines
    assert os.access(script, os.X_OK)


def test_hotspot_refuses_a_password_wpa2_cannot_take():
    result = subprocess.run([DEPLOY / "hotspot.sh", "Conteur", "short"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "8 to 63 characters" in result.stderr


# backup-loop.sh calls `conteur backup`; without the installed script, the same command
# is `python -m conteur.server.cli.backup backup`.
@pytest.fixture
def conteur_command(tmp_path) -> str:
    venv_conteur = Path(sys.executable).parent / "conteur"
    if venv_conteur.exists() and subprocess.run(
            [venv_conteur, "backup", "--help"], capture_output=True).returncode == 0:
        return str(venv_conteur)
    wrapper = tmp_path / "conteur"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m conteur.server.cli.backup "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def live_db(path: Path, rows: int) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, session, type, data BLOB,"
                 " actor, device, command_id, at, prev_hash, hash)")
    conn.executemany("INSERT INTO events (session, type, data, at, hash) VALUES"
                     " ('s1', 'session.scene_opened', x'00', '2026-11-29T19:00:00Z', x'01')",
                     [()] * rows)
    conn.commit()
    conn.close()
    return path


def run_loop(conteur: str, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "CONTEUR": conteur, "PYTHONPATH": str(ROOT)}
    return subprocess.run([DEPLOY / "backup-loop.sh", *map(str, args)],
                          capture_output=True, text=True, env=env)


@pytest.fixture
def stick():
    """A folder on a mounted filesystem other than /, standing for the USB stick."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == Path("/").stat().st_dev:
        pytest.skip("no filesystem other than / to stand for a USB stick (/dev/shm)")
    path = Path(tempfile.mkdtemp(dir=shm, prefix="conteur-stick-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_backup_loop_copies_to_the_stick_and_keeps_the_newest(conteur_command, tmp_path, stick):
    db = live_db(tmp_path / "conteur.db", rows=42)
    old = stick / "conteur-backups"
    old.mkdir(parents=True)
    for stamp in ("20250101T000000Z", "20250102T000000Z", "20250103T000000Z"):
        (old / f"conteur-{stamp}.db").write_bytes(b"an older copy")

    result = run_loop(conteur_command, "--db", db, "--keep", 2, "--once", stick)

    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in old.iterdir())
    assert len(names) == 2 and names[0] == "conteur-20250103T000000Z.db"
    conn = sqlite3.connect(old / names[1])
    assert conn.execute("SELECT count(*) FROM events").fetchone() == (42,)
    conn.close()


def test_backup_loop_reports_a_missing_stick(conteur_command, tmp_path):
    db = live_db(tmp_path / "conteur.db", rows=1)
    pulled = tmp_path / "not-a-mount"
    pulled.write_text("a file where the stick's folder should be")

    result = run_loop(conteur_command, "--db", db, "--once", pulled)

    assert result.returncode != 0
    assert "is the stick plugged in" in result.stdout + result.stderr


def test_backup_loop_never_creates_the_stick_folder(conteur_command, tmp_path):
    # a mistyped or unmounted /media/USER/STICK must not become a folder on the laptop
    db = live_db(tmp_path / "conteur.db", rows=1)
    missing = tmp_path / "media" / "STICK"

    result = run_loop(conteur_command, "--db", db, "--once", missing)

    assert result.returncode == 1
    assert "is the stick plugged in and mounted" in result.stderr
    assert not (tmp_path / "media").exists()


def test_backup_loop_refuses_a_folder_on_the_machines_own_disk(conteur_command, tmp_path):
    if tmp_path.stat().st_dev != Path("/").stat().st_dev:
        pytest.skip("the test's folder is not on the root filesystem here")
    db = live_db(tmp_path / "conteur.db", rows=1)
    mount_point = tmp_path / "STICK"  # what an unmounted stick leaves: an empty folder
    mount_point.mkdir()

    result = run_loop(conteur_command, "--db", db, "--once", mount_point)

    assert result.returncode == 1
    assert "own disk" in result.stderr
    assert list(mount_point.iterdir()) == []
