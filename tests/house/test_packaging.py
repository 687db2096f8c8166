"""Installed names: everything conteur installs lives under `conteur`, so
no top-level `events`, `server` or `client` can shadow, or be shadowed by, another
distribution (PyPI has a package named `events`). Run away from the repository, where the
folders themselves are not on the path."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"}, timeout=60)


def test_every_package_is_declared_under_the_conteur_namespace():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["packages"] and all(p.startswith("conteur.") for p in config["packages"])
    assert set(config["package-dir"].values()) == {"events", "server", "client"}


@pytest.mark.parametrize("bare", ["events", "server", "client"])
def test_the_bare_folder_names_are_not_installed(tmp_path, bare):
    out = run(f"import {bare}", tmp_path)
    assert "ModuleNotFoundError" in out.stderr, out.stderr


def test_the_namespaced_packages_import_from_anywhere(tmp_path):
    out = run("import conteur.events.game, conteur.server.web.app, conteur.client.client; "
              "import conteur.server.web.app as a; print(a.WEB_DIR.joinpath('index.html').is_file())",
              tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
