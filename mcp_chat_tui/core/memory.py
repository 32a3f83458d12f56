"""The C heap for large tool results: freed memory kept for the next result, given back between turns.

A result of tens of megabytes passes through a few buffers as large (the bytes read, the decoded
text, the parsed message). glibc serves allocations over its ``mmap`` threshold (at most 32 MB) with
fresh pages that the kernel must fault in and zero each time, so an 80 MB result cost about twice as
much per megabyte as a 10 MB one (bench/mcp_overhead.py). Raising the threshold to 256 MB (and
the trim threshold to 1 GB) serves such buffers from the heap, where freed memory is used again;
what a turn freed is given back to the system when the turn ends (``give_back_memory``). Elsewhere than glibc,
both do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any

LARGE_BYTES = 256 * 1024 * 1024  # buffers up to this size come from the heap
KEPT_BYTES = 1024 * 1024 * 1024  # free memory the heap keeps until the turn ends (then given back)
M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3


@cache
def _glibc() -> Any | None:
    """The C library when it is glibc (it has ``mallopt`` and ``malloc_trim``), else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        if not hasattr(libc, "gnu_get_libc_version"):
            return None
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


@cache
def keep_freed_memory() -> bool:
    """Serve buffers up to ``LARGE_BYTES`` from the heap and keep up to ``KEPT_BYTES`` freed (once
    per process); True when the C library took the settings."""
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, LARGE_BYTES)) and bool(libc.mallopt(M_TRIM_THRESHOLD, KEPT_BYTES))


def give_back_memory() -> None:
    """Return the heap's free memory to the system (after a turn, which may have held large results)."""
    libc = _glibc()
    if libc is not None and keep_freed_memory.cache_info().currsize:
        libc.malloc_trim(0)
