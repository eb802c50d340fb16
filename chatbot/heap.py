"""How the process treats the garbage collector while it builds long-lived structures.

A search index build allocates hundreds of thousands of small containers and frees none:
cyclic GC passes over the growing heap only slow it down (~3x at 10k entries). What is built
lives as long as the library generation: freezing it keeps later full collections from walking
it (~200 ms at 10k entries, a p99 query otherwise). A build also frees megabytes of
temporaries (analyses, key arrays being sorted) between blocks that stay: glibc keeps those
pages unless asked to give them back. All are process-wide switches, so they belong to whoever
owns the process (the wiring, the CLI, a bench), never to a library class.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def build_long_lived(build: Callable[[], T]) -> T:
    """`build()` with cyclic GC paused, its result frozen out of later collections, and the
    free pages it left returned to the system."""
    collecting = gc.isenabled()
    gc.disable()  # bench/scale.py row "load + index 10k"
    try:
        built = build()
    finally:
        if collecting:
            gc.enable()
    gc.freeze()  # bench/scale.py search rows (p99: a full collection walked the index)
    release_free_memory()  # bench/scale.py row "peak RSS 10k"
    return built


def release_free_memory() -> bool:
    """Return the C heap's free pages to the system (glibc `malloc_trim`); False where the C
    library has no such call (musl, macOS): there it is only memory the process keeps."""
    import ctypes  # only here: most processes never build

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim(0)
    return True
