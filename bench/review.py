"""How long a storyteller waits for the review page of a big night: the review built
from the store (fold, stories, draw check) and its bundle encoded, per session; beside
it, the same bundle as the server sends it now, from a kept review (paged) by parts
(server/audit/streamed.py), its bytes checked equal.

    .venv/bin/python bench/review.py --db CHRONICLE.db [--session ID ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec  # noqa: E402

from conteur.events.model import STORYTELLER  # noqa: E402
from conteur.server.audit import review as rv  # noqa: E402
from conteur.server.audit import page as review_page  # noqa: E402
from conteur.server.audit import streamed  # noqa: E402
from conteur.server.store.sqlite import SQLiteStore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--session", action="append", help="default: every session")
    args = parser.parse_args()
    with SQLiteStore(args.db) as store:
        for session in args.session or store.sessions():
            t0 = time.perf_counter()
            review = rv.build(store, session)
            t1 = time.perf_counter()
            data = msgspec.json.encode(review_page.bundle(review))
            t2 = time.perf_counter()
            del review
            t3 = time.perf_counter()
            builder = streamed.built(store, session, STORYTELLER, "en")
            t4 = time.perf_counter()
            parts = b"".join(streamed.bundle(store, streamed.taken(builder)))
            t5 = time.perf_counter()
            print(f"{session:<20} {len(builder.items):>8,} events  build {t1 - t0:5.2f} s  "
                  f"bundle {t2 - t1:5.2f} s  {len(data) / 1e6:5.1f} MB; paged {t4 - t3:5.2f} s, "
                  f"by parts {t5 - t4:5.2f} s, {'the same bytes' if parts == data else 'OTHER BYTES'}", flush=True)


if __name__ == "__main__":
    main()
