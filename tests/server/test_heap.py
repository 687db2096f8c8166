"""A server up all night frees big blocks of growing size (each snapshot's bytes, about
35 bytes an event of a MET night) among small objects that stay: with glibc's dynamic mmap
threshold each one left a high-water mark in the heap (server/core/heap.py). Run in a
fresh interpreter, so what this one allocated does not count."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conteur.server.core import heap

SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from conteur.server.core.heap import fix_mmap_threshold

    def rss():
        for row in Path("/proc/self/status").read_text().splitlines():
            if row.startswith("VmRSS:"):
                return int(row.split()[1]) * 1024

    if sys.argv[1] == "fixed":
        assert fix_mmap_threshold()
    kept = []
    big = b"x" * (30 << 20)  # a first big block, freed: glibc's threshold rises to it (32 MB at most)
    del big
    start = rss()
    for i in range(1, 25):
        block = b"x" * (i << 20)  # a snapshot's bytes, larger each time (written: resident)
        # what the night adds meanwhile, kept: blocks of malloc's own (over pymalloc's 512 bytes)
        kept.append([[None] * 300 for _ in range(100)])
        del block
    print(rss() - start)
""")


def grown(how: str) -> int:
    out = subprocess.run([sys.executable, "-c", SCRIPT, how], capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.skipif(not heap.fix_mmap_threshold(), reason="not glibc: no mallopt, nothing to fix")
def test_big_blocks_freed_leave_no_mark_once_the_threshold_is_fixed():
    dynamic, fixed = grown("dynamic"), grown("fixed")
    # what is kept takes about 6 MB either way; the freed blocks' mark, about 27 MB more
    assert fixed < 12 << 20, (dynamic, fixed)
    assert dynamic > fixed + (15 << 20), (dynamic, fixed)
