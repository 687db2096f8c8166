"""The layers of docs/architecture.md, read from the source with ``ast`` (an import inside a
function counts too): imports point inward only.

    events  <-  server/store  <-  server/core  <-  server/audit  <-  server/web  <-  server/cli
    (rules)     (the only SQL)    (command path)   (disputes)        (the fronts)    (start-up)

Each layer imports only the layers to its left. ``events`` (the rules) imports nothing of
``server`` or ``client``; ``server/store`` neither the audit nor the CLI (a check they need
is passed in: ``restore(..., verify=verify_path)``); the audit sits above the command path,
whose compressed pages its checks fold with, and below the web front, which answers the review page.
``server/testing.py`` (a scripted device for tests and benchmarks) sits on top, like the CLI.

``client/`` speaks only the wire: it imports ``conteur.events`` (the wire's frames and
codecs, ``events/wire.py``, the venue channel that seals them, ``events/channel.py``, and
the commands and types they carry: ``game``, ``model``,
``sheets``, the rulesets' command types, ``narrate`` for its sentences) and never
``conteur.server``; the two meet only through pyproject.toml's entry points
(``conteur.commands``, ``conteur.web``)."""

from __future__ import annotations

import ast
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# layer -> the layers it may import (itself included)
ORDER = ("events", "store", "core", "audit", "web", "cli")
MAY_IMPORT = {layer: set(ORDER[:i + 1]) for i, layer in enumerate(ORDER)}
MAY_IMPORT["server"] = set(ORDER) | {"server"}  # server/testing.py, server/__init__.py
MAY_IMPORT["client"] = {"events", "client"}

FOLDERS = {"events": "events", "server/store": "store", "server/core": "core",
           "server/audit": "audit", "server/web": "web", "server/cli": "cli", "client": "client"}


def layer_of_file(rel: str) -> str | None:
    """The layer of a source file, by its folder (``server/testing.py``: "server")."""
    for folder in sorted(FOLDERS, key=len, reverse=True):
        if rel.startswith(folder + "/"):
            return FOLDERS[folder]
    return "server" if rel.startswith("server/") else None


def module_of_file(rel: str) -> str:
    """``server/store/backup.py`` -> ``conteur.server.store.backup`` (its installed name)."""
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["conteur", *parts])


def layer_of_module(name: str) -> str | None:
    """The layer a module name belongs to; None for anything not conteur's. The repository's
    folder names (``server.store``, ``events``) count as conteur's too: nothing imports them
    so, and a slip that did would be caught."""
    parts = name.split(".")
    if parts[0] == "conteur":
        parts = parts[1:]
    if not parts or parts[0] not in ("events", "server", "client"):
        return None
    if parts[0] in ("events", "client"):
        return parts[0]
    if len(parts) > 1 and parts[1] in ORDER:
        return parts[1]
    return "server"


def imported(path: Path, module: str = "") -> set[str]:
    """Every module ``path`` imports, relative imports resolved against ``module``."""
    names = set()
    package = module.split(".")
    if not path.name == "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            names.add(source)
            # `from conteur import client` names the package in the alias
            names.update(f"{source}.{a.name}" for a in node.names)
    return names


def offenders(root: Path = ROOT) -> list[str]:
    out = []
    for folder in ("events", "server", "client"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            layer = layer_of_file(rel)
            for name in sorted(imported(path, module_of_file(rel))):
                target = layer_of_module(name)
                if target is not None and target not in MAY_IMPORT[layer]:
                    out.append(f"{rel} ({layer}) imports {name} ({target})")
    return out


def test_imports_point_inward_only():
    assert offenders() == []


# What the client takes of the rules: the wire's frames and codecs, and the types they
# carry (commands of each ruleset, the game's events, sheets), and the sentences it tells.
# A module not listed here (views, fair, simulate...) is the server's business.
# the wire and its types; ``channel``: the venue channel's frames and keys, the wire's envelope
CLIENT_TAKES = {"wire", "channel", "model", "game", "session", "met", "v5", "action", "sheets", "narrate"}


def client_takes(root: Path = ROOT) -> set[str]:
    """The modules of ``conteur.events`` the client imports."""
    taken = set()
    for path in sorted((root / "client").rglob("*.py")):
        for name in imported(path, module_of_file(path.relative_to(root).as_posix())):
            if name.startswith("conteur.events."):
                taken.add(name.split(".")[2])  # the module: ``conteur.events.wire.decode_event`` -> wire
    return taken


def test_the_client_takes_only_the_wire_and_its_types_from_the_rules():
    assert client_takes() <= CLIENT_TAKES, sorted(client_takes() - CLIENT_TAKES)


def test_the_scan_sees_the_client_take_more_of_the_rules(tmp_path):
    root = layout(tmp_path, {"client/client.py": "from conteur.events import views, wire\n"})
    assert client_takes(root) - CLIENT_TAKES == {"views"}


def layout(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.mark.parametrize("rel, source", [
    # a store module that reaches the audit or the CLI, as a function-level import
    ("server/store/backup.py", "def _check_chain(path):\n    from conteur.server.audit.verify import verify_path\n"),
    ("server/store/backup.py", "def main():\n    from conteur.server.cli.main import main as conteur\n"),
    ("server/store/migrate.py", "from ..audit import verify\n"),
    ("server/web/app.py", "def run():\n    from conteur.server.cli import demo as demo_mod\n"),
    ("server/core/service.py", "from conteur.server.web import ws\n"),
    ("server/audit/review.py", "from conteur.server.web.http_review import Follower\n"),
    ("events/met.py", "from conteur.server.store import codec\n"),
    ("events/game.py", "import conteur.client\n"),
    ("client/client.py", "from conteur.server.store import dbfile\n"),
    ("client/cli.py", "from conteur import server\n"),
])
def test_the_scan_refuses_an_import_that_points_outward(tmp_path, rel, source):
    root = layout(tmp_path, {rel: source})
    assert offenders(root), f"{rel}: {source!r}"


@pytest.mark.parametrize("rel, source", [
    ("server/store/backup.py", "from conteur.server.store.dbfile import Verify\nfrom conteur.events import game\n"),
    ("server/audit/review.py", "from conteur.server.core.pages import Page\nfrom . import paged\n"),
    ("server/web/http_review.py", "from conteur.server.audit import review as rv\n"),
    ("server/cli/backup.py", "def f():\n    from conteur.server.audit.verify import verify_path\n"),
    ("server/cli/serve.py", "from conteur.server.web.app import create_app\n"),
    ("server/testing.py", "from conteur.server.web.app import Served\n"),
    ("client/client.py", "from conteur.events.wire import decode_event\nimport websockets\n"),
])
def test_the_scan_lets_an_import_that_points_inward_pass(tmp_path, rel, source):
    root = layout(tmp_path, {rel: source})
    assert offenders(root) == []


def test_the_client_meets_the_server_only_through_entry_points():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared["conteur.commands"]["client"] == "conteur.client.cli:add_command"
    # installed as declared (pip install -e . after a change to pyproject.toml)
    assert {ep.name for ep in entry_points(group="conteur.commands")} >= {"client"}
    from conteur.server.web.app import WEB_DIR

    assert WEB_DIR is not None and (WEB_DIR / "index.html").is_file()


def test_the_client_exit_statuses_are_the_ones_conteur_help_lists():
    from conteur.client import cli, outbox
    from conteur.server.store import dbfile

    assert (cli.EXIT_CHECK_FAILED, cli.EXIT_BAD_INPUT, cli.EXIT_UNREACHABLE, cli.EXIT_IN_USE) == (
        dbfile.EXIT_CHECK_FAILED, dbfile.EXIT_BAD_INPUT, dbfile.EXIT_UNREACHABLE, dbfile.EXIT_IN_USE)
    assert outbox.NewerStateFile.exit_code == dbfile.EXIT_NEWER


def test_conteur_client_is_a_subcommand_of_conteur(capsys):
    from conteur.server.cli.main import main

    with pytest.raises(SystemExit) as done:
        main(["client", "--help"])
    assert done.value.code == 0
    assert "conteur client" in capsys.readouterr().out


def test_architecture_md_draws_the_layers_this_test_checks():
    """docs/architecture.md's drawing names the layers in this test's order."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    drawing = "events  <-  server/store  <-  server/core  <-  server/audit  <-  server/web  <-  server/cli"
    assert drawing in text
    assert drawing in __doc__
