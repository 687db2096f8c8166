"""Fixtures every test module may use, without importing another test module.

- ``browser``/``playwright``: the one Debian Chromium (tests/support/browser_support.py); without
  chromium every browser test skips with the reason printed.
- ``setup``/``server``: a chronicle with its storyteller and players (tests/support/client_support.py),
  served on 127.0.0.1 by a real server.
- ``lan_browser``: Chromium reaching that server by a LAN name, over plain HTTP.
- ``demo``: the demo chronicle (v5-demo and action-demo), served.
- ``worlds``: two venues for the noninterference tests, which play the same sessions in
  both, differing only in one secret (tests/support/noninterference.py).
- ``pg_cluster``/``pg_url``: a throwaway PostgreSQL cluster for the test session and a fresh
  database in it per test (tests/support/pg_support.py); without PostgreSQL they skip.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from conteur.server.cli.demo import create_demo  # noqa: E402
from conteur.server.store.sqlite import SQLiteStore  # noqa: E402
from conteur.server.testing import Venue  # noqa: E402
from tests.support.browser_support import ARGS, CHROMIUM, browser, playwright  # noqa: E402,F401
from tests.support.client_support import make_chronicle, served  # noqa: E402
from tests.support.examples import examples  # noqa: E402
from tests.support.pg_support import pg_cluster, pg_url  # noqa: E402,F401

# tests without their own max_examples scale with CONTEUR_EXAMPLES too
settings.register_profile("conteur", max_examples=examples(100))
settings.load_profile("conteur")


@pytest.fixture
def setup(tmp_path):
    return make_chronicle(tmp_path / "chronicle.db")


@pytest.fixture
def server(setup):
    with served(setup.db) as s:
        yield s


@pytest.fixture(scope="module")
def lan_browser(playwright):
    """Chromium reaching the server by a LAN name: plain HTTP, not a secure context."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                         args=ARGS + ["--host-resolver-rules=MAP venue.lan 127.0.0.1"])
    yield browser
    browser.close()


@pytest.fixture
def demo(tmp_path):
    """The demo chronicle (server/cli/demo.py): v5-demo (Iris, Viktor), action-demo (Nova, Rook)."""
    db = str(tmp_path / "demo.db")
    with SQLiteStore(db) as store:
        storyteller, imported = create_demo(store)
    links = {p.character: f"{p.token}&session={item.session}" for item in imported for p in item.players}
    with served(db) as server:
        yield server, db, storyteller, links


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    with Venue(tmp_path_factory.mktemp("world-a") / "a.db") as a, \
            Venue(tmp_path_factory.mktemp("world-b") / "b.db") as b:
        yield a, b


@pytest.fixture
def phones():
    """Where the fault tests' devices keep their outboxes: memory-backed files when the
    machine has /dev/shm. Each received event is an fsync of the device's outbox; many
    phones on one disk would measure this disk, not the server under test."""
    import tempfile

    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as folder:
        yield Path(folder)
