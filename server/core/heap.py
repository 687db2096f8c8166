"""The C heap of a server that runs all night.

glibc's malloc serves a large block with mmap and gives it back to the system when it is
freed, but then raises its threshold to that block's size: the next blocks below it come
from the heap, where memory freed stays resident as long as anything lives above it. A
server that plays the night writes a snapshot of each session every 10,000 events (its
encoded bytes are about 35 bytes an event of a MET night: 26 MB by the sixth hour), so each
snapshot left a higher mark: in one process playing a MET night through ``Chronicle``,
RSS grew about 110 bytes an event with snapshots, 30 without them or with the threshold
fixed. Fixing it (at glibc's own default, 128 KiB) keeps large blocks out of the heap all
night. Other C libraries (musl, macOS) have no such call: nothing is done there.
"""

from __future__ import annotations

import ctypes

M_MMAP_THRESHOLD = -3  # glibc's malloc.h: setting it also stops the dynamic adjustment
THRESHOLD = 128 * 1024


def fix_mmap_threshold(size: int = THRESHOLD) -> bool:
    """Whether the process's C library took a fixed mmap threshold of ``size`` bytes."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, size) == 1


def trim() -> bool:
    """Gives the C heap's free pages back to the system (glibc's ``malloc_trim``): after a
    kept review's snapshot is written on the snapshots' thread, its copies and encoding,
    freed, stayed resident in that thread's arena, where nothing else reuses them (the
    night's RSS grew about 30 MB an hour instead of 10). False where there is no such call."""
    try:
        malloc_trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    malloc_trim.argtypes, malloc_trim.restype = (ctypes.c_size_t,), ctypes.c_int
    malloc_trim(0)
    return True
