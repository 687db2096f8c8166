"""No SQL outside the store's package, and no user of a store reaching past its interface
(a second store plugs in behind ``EventStore`` only if nothing else knows the
first one's tables). A source scan, so that it stays so. ``client/`` is not scanned: its
outbox is the phone-side client's own SQLite file, not the chronicle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "server" / "store"
# the SQLite store is opened by path at the composition points (the CLI, the app for a
# path, simulate) and a chronicle file is verified read-only: these two names only
OPENERS = {"SQLiteStore", "file_rows"}
DRIVERS = {"sqlite3", "sqlite_utils", "psycopg", "psycopg2", "asyncpg"}
SQL = re.compile(r"\b(SELECT\s+[\w*(]|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
                 r"CREATE\s+(TABLE|INDEX|TRIGGER|VIEW)|DROP\s+TABLE|ALTER\s+TABLE|PRAGMA\s+\w+|"
                 r"BEGIN\s+(IMMEDIATE|EXCLUSIVE)|ROLLBACK\b)")


def modules() -> list[Path]:
    found = [p for folder in ("server", "events") for p in (ROOT / folder).rglob("*.py")
             if STORE not in p.parents]
    assert len(found) > 40
    return sorted(found)


def _store_like(node: ast.expr) -> bool:
    """``store``, ``self.store``, ``self._store``, ``chronicle.store``..."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name.lstrip("_").endswith("store")


def offences(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    name = path.relative_to(ROOT) if ROOT in path.parents else path.name
    found = []
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [f"{where} imports {a.name}" for a in node.names if a.name.split(".")[0] in DRIVERS]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] in DRIVERS:
                found.append(f"{where} imports from {module}")
            if module == "conteur.server.store.sqlite":
                found += [f"{where} imports {a.name} from the SQLite store" for a in node.names
                          if a.name not in OPENERS]
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("_") and not node.attr.startswith("__") and _store_like(node.value):
                found.append(f"{where} touches the store's private {node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
            found.append(f"{where} has SQL: {node.value[:60]!r}")
        if isinstance(node, (ast.arg, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef)):
            annotation = node.returns if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else node.annotation
            if annotation is not None and "SQLiteStore" in ast.unparse(annotation):
                found.append(f"{where} is typed to SQLiteStore, not EventStore")
    return found


def test_no_sql_and_no_store_privates_outside_the_store():
    assert [o for path in modules() for o in offences(path)] == []


def test_the_scan_finds_what_it_forbids(tmp_path):
    """The scan itself, on a module doing each forbidden thing once."""
    bad = tmp_path / "probe.py"
    bad.write_text(
        "import sqlite3\n"
        "from conteur.server.store.sqlite import SQLiteStore, latest_snapshot\n"
        "def f(store: SQLiteStore) -> None:\n"
        "    store._reader.execute('SELECT seed FROM secrets WHERE session=?')\n"
        "    self._store._connect()\n"
        "    x = 'INSERT OR IGNORE INTO secrets VALUES (?, ?)'\n")
    found = offences(bad)
    kinds = ["imports sqlite3", "imports latest_snapshot", "typed to SQLiteStore",
             "private _reader", "private _connect", "has SQL: 'SELECT", "has SQL: 'INSERT"]
    assert [k for k in kinds if not any(k in o for o in found)] == []
    assert not any("SQLiteStore from" in o for o in found)  # the opener itself is fine
