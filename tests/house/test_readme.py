"""The README's commands, run as they stand: a new user's first steps must work."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTEUR = [sys.executable, "-c", "import sys; from conteur.server.cli.main import main; sys.exit(main())"]


def readme_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Everyday commands", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line.startswith("conteur "):
            commands.append(shlex.split(line)[1:])
    return commands


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_readme_names_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert "make serve" in text and "make test" in text
    make = (ROOT / "Makefile").read_text()
    assert "conteur serve --demo" in make and "pytest" in make
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


def test_every_readme_command_runs(tmp_path):
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "roster-example.toml", tmp_path / "docs")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    commands = readme_commands()
    assert len(commands) >= 8
    for args in commands:
        if args[0] == "serve":
            continue
        done = subprocess.run(CONTEUR + args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"conteur {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        if args[0] == "verify":
            assert done.stdout.startswith("OK"), done.stdout
        if args[0] == "init":
            assert "storyteller token" in done.stdout and "#join=" in done.stdout
    assert "Anna" in (tmp_path / "record.md").read_text() or (tmp_path / "record.md").stat().st_size > 200

    serve = next(a for a in commands if a[0] == "serve")
    port = free_port()
    serve = [("127.0.0.1" if a == "0.0.0.0" else a) for a in serve]
    serve[serve.index("--port") + 1] = str(port)
    proc = subprocess.Popen(CONTEUR + serve + ["--host", "127.0.0.1"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    assert r.status == 200
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"conteur serve did not come up:\n{proc.stdout.read()}")
                time.sleep(0.2)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
            assert b"<html" in r.read().lower()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
