"""How many examples a property test tries: bounded for CI, scaled up for a thorough run
before a release (``CONTEUR_EXAMPLES=20 make test``), since a randomised test that only ever
tries a few cases can find its bug on the CI run instead of on the bench."""

from __future__ import annotations

import os

SCALE = max(1, int(os.environ.get("CONTEUR_EXAMPLES", "1")))


def examples(n: int) -> int:
    return n * SCALE
