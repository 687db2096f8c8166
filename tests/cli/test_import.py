"""`conteur import`: an organisation's central chronicle takes each
venue's verified JSON Lines export of a night. A tampered export is refused naming the
seq, nothing written; a night is imported once; tie debts made at one venue carry into
the next session the organisation opens in the same chronicle (MET-13)."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from conteur.server.audit.verify import verify_path
from conteur.events.model import STORYTELLER
from conteur.events.session import OpenSession
from conteur.server.audit.export import export
from conteur.server.core.service import Chronicle
from conteur.server.store.chain import verify_rows
from conteur.server.store.factory import open_store
from conteur.server.store.migrate import MigrateError, import_night
from conteur.server.testing import Venue
from tests.support.carried_support import failed_overbid

pytest.importorskip("psycopg")

BRUNO_OWES_ANNA = [{"debtor": "bruno", "creditor": "anna", "challenge": "c1"}]


def venue_night(folder, session: str) -> tuple:
    """A night played at a venue on its own server, exported by its storyteller."""
    folder.mkdir()
    db = folder / "chronicle.db"
    with Venue(db) as venue:
        token = venue.token()
        with httpx.Client(base_url=venue.url, headers={"Authorization": f"Bearer {token}"},
                          timeout=10) as http:
            failed_overbid(http, session)
    with open_store(db) as store:
        data = export(store, session, "jsonl")
        rows = list(store.rows())
    path = folder / f"{session}.jsonl"
    path.write_bytes(data)
    return path, rows


@pytest.fixture(params=["postgresql", "sqlite"])
def central(request, tmp_path):
    """The organisation's chronicle, already holding a night of its own."""
    target = request.getfixturevalue("pg_url") if request.param == "postgresql" else str(tmp_path / "central.db")
    with open_store(target, create=True) as store:
        Chronicle(store).execute_sync("home", OpenSession(name="at home"), STORYTELLER)
    return target


def test_a_venues_night_joins_the_central_chronicle_and_its_debt_carries_on(tmp_path, central):
    path, venue_rows = venue_night(tmp_path / "lyon", "lyon-1")
    added = import_night(path, central, verify=verify_path)
    assert added.sessions == ["lyon-1"] and added.events == len(venue_rows)
    with open_store(central) as store:
        assert verify_rows(store.rows(), gapless=True)[1] is None
        imported = store.read_after("lyon-1")
        # the same events, actors, devices and times; new seqs after the central head
        assert [(r.type, r.data, r.actor, r.at) for r in imported] == \
            [(r.type, r.data, r.actor, r.at) for r in venue_rows]
        assert imported[0].seq == store.session_head("home") + 1
        chronicle = Chronicle(store)
        chronicle.execute_sync("paris-2", OpenSession(name="next night, another venue"), STORYTELLER)
        debts = chronicle.state("paris-2").met.debts
        assert [{"debtor": d.debtor, "creditor": d.creditor, "challenge": d.challenge} for d in debts] \
            == BRUNO_OWES_ANNA


def test_a_tampered_export_is_refused_naming_the_seq(tmp_path, central):
    path, _ = venue_night(tmp_path / "lyon", "lyon-1")
    lines = path.read_text().splitlines()
    line = json.loads(lines[3])
    line["actor"] = "mallory"
    lines[3] = json.dumps(line)
    path.write_text("\n".join(lines) + "\n")
    with open_store(central) as store:
        head = store.head()
    with pytest.raises(MigrateError, match=f"chain broken at seq {line['seq']}.*nothing was written"):
        import_night(path, central, verify=verify_path)
    done = subprocess.run([sys.executable, "-m", "conteur.server.cli.main", "import", str(path), "--store", central],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and f"seq {line['seq']}" in done.stderr
    with open_store(central) as store:
        assert store.head() == head and "lyon-1" not in store.sessions()


def test_a_night_is_imported_once(tmp_path, central):
    path, _ = venue_night(tmp_path / "lyon", "lyon-1")
    done = subprocess.run([sys.executable, "-m", "conteur.server.cli.main", "import", str(path), "--store", central],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "imported" in done.stdout and "lyon-1" in done.stdout
    with pytest.raises(MigrateError, match="already holds session.*lyon-1"):
        import_night(path, central, verify=verify_path)
