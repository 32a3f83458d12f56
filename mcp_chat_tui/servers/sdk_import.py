"""The MCP SDK imported on a thread of its own, once per process.

The SDK (its client, transports and protocol types: half a second of CPU and more) is imported on a
daemon thread so the event loop, and the screen, keep going meanwhile; leaving the app never waits
for it. The app's first frame waits for none of it. The app starts it as soon as the first frame is
out (``begin_sdk_import``), before it builds its panes, so that the servers' processes, which start
once it is done, start as early as they can; the hub and the app's start-up then wait for the same
import (``import_sdk``), and only then is the model's load begun (docs/architecture.md, "Start-up").
An import that fails is left to fail again where the SDK is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

_lock = threading.Lock()
_started = False
_done = False
_waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []  # loops to tell when it is done


def begin_sdk_import() -> None:
    """Start importing the SDK on its thread (once: a later call, or one once it is imported, does nothing)."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    threading.Thread(target=_import, name="sdk-import", daemon=True).start()


async def import_sdk() -> None:
    """Return once the SDK is imported, starting its import if nobody has yet."""
    loop = asyncio.get_running_loop()
    with _lock:
        if _done:
            return
        imported: asyncio.Future[None] = loop.create_future()
        _waiting.append((loop, imported))
    begin_sdk_import()
    await imported


def _import() -> None:
    global _done
    try:
        from mcp_chat_tui.servers.sdk_private import LEGACY_VERSION

        del LEGACY_VERSION  # the module imported for what it imports: the SDK
    except BaseException:  # raised again, and shown, where the SDK is used
        pass
    finally:
        with _lock:
            _done = True
            waiting = list(_waiting)
            _waiting.clear()
        for loop, imported in waiting:
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits
                loop.call_soon_threadsafe(_settle, imported)


def _settle(imported: asyncio.Future[None]) -> None:
    if not imported.done():
        imported.set_result(None)
