"""``ast.parse`` for the tests that read the package's source, safe from CPython 3.11's
"AST constructor recursion depth mismatch".

In 3.11 that SystemError is raised when the collector, run inside ``ast.parse``, finalises an
object whose finalizer parses too: an asyncio task an earlier test left failed logs "Task exception
was never retrieved" with its traceback, and 3.11's traceback parses the failing line's source. The
collector is paused while one file is parsed (the garbage waits for the next collection)."""

from __future__ import annotations

import ast
import gc


def parse(source: str, filename: str) -> ast.Module:
    """``ast.parse(source, filename)`` with the cycle collector paused meanwhile."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source, filename)
    finally:
        if was_enabled:
            gc.enable()
