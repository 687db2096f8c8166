"""The dependency rule of docs/architecture.md: conteur.events imports
nothing of conteur's but itself; conteur.server and conteur.client import conteur.events
and never each other, in either direction. They meet only through pyproject.toml's entry
points (``conteur.commands``, ``conteur.web``). Read from the source with ``ast``, so an
import inside a function counts too."""

from __future__ import annotations

import ast
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            # `from conteur import client` names the package in the alias
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def offenders(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    out = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for name in sorted(imported(path)):
            if name in forbidden or name.startswith(tuple(f + "." for f in forbidden)):
                out.append(f"{path.relative_to(ROOT)} imports {name}")
    return out


@pytest.mark.parametrize("folder, forbidden", [
    ("client", ("conteur.server", "server")),
    ("server", ("conteur.client", "client")),
    ("events", ("conteur.server", "conteur.client", "server", "client")),
])
def test_no_import_crosses_between_client_and_server(folder, forbidden):
    assert offenders(folder, forbidden) == []


def test_the_scan_sees_an_import_inside_a_function(tmp_path):
    source = tmp_path / "x.py"
    source.write_text("def f():\n    from conteur.server.store import dbfile\n    import conteur.client\n")
    assert {"conteur.server.store", "conteur.client"} <= imported(source)


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
