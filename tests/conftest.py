import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hypothesis import settings  # noqa: E402

from tests.examples import examples  # noqa: E402

# tests without their own max_examples scale with CONTEUR_EXAMPLES too
settings.register_profile("conteur", max_examples=examples(100))
settings.load_profile("conteur")

# the Chromium fixtures, shared: without chromium they skip, never fall back (browser_support)
from tests.browser_support import browser, playwright  # noqa: E402,F401

# the throwaway PostgreSQL cluster, shared: without PostgreSQL its tests skip (pg_support)
from tests.pg_support import pg_cluster, pg_url  # noqa: E402,F401
