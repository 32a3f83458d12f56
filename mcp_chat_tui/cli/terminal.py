"""What the command line does with its terminal: the signals that end it, the questions asked on it.

Both run modes need these (``main`` for ``--check-servers``, ``chat`` for the conversation), so they
live below both.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator

from mcp_chat_tui.core.errors import UserFacingError

SIGTERM_EXIT = 128 + signal.SIGTERM


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(SIGTERM_EXIT)


def exit_on_sigterm() -> None:
    """Outside the event loop's own handling (start-up, reading a transcript, the last clean-up),
    SIGTERM ends the program at once with 143, running ``finally`` blocks on the way (a lock is
    released, a server stopped), as Ctrl+C's ``KeyboardInterrupt`` does with 130."""
    signal.signal(signal.SIGTERM, _terminated)


def ask_on_terminal(spec: object) -> str:
    """Ask for one ``${input:...}`` value on the terminal (passwords without echo)."""
    description = getattr(spec, "description", "") or getattr(spec, "id", "value")
    default = getattr(spec, "default", None)
    prompt = f"{description}" + (f" [{default}]" if default and not getattr(spec, "password", False) else "") + ": "
    if not sys.stdin.isatty():
        if default is not None:
            return default
        raise UserFacingError(
            f"mcp.json input {getattr(spec, 'id', '?')!r} needs a value and there is no terminal to ask"
        )
    value = getpass.getpass(prompt) if getattr(spec, "password", False) else input(prompt)
    return value or (default or "")


class CtrlC:
    """Whether Ctrl+C was pressed while ``ctrl_c_cancels`` held it."""

    pressed = False


@contextlib.contextmanager
def ctrl_c_cancels(task: asyncio.Future) -> Iterator[CtrlC]:
    """While inside, Ctrl+C (SIGINT) cancels ``task`` (a load the user waits on) instead of ending the
    program; outside, and at once after, it means what it meant before (leave). Only the main thread
    can take a signal: elsewhere this changes nothing."""
    caught = CtrlC()
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    loop = asyncio.get_running_loop()
    before = signal.getsignal(signal.SIGINT)

    def on_sigint(signum: int, frame: object) -> None:
        caught.pressed = True
        loop.call_soon_threadsafe(task.cancel)

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, before)


async def run_until_signal(work: Callable[[], Awaitable[int]]) -> int:
    """Run ``work``; SIGTERM cancels it so every ``finally`` (server shutdown) runs, then exits 143."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    terminated = False

    def on_sigterm() -> None:
        nonlocal terminated
        terminated = True
        if task is not None:
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    try:
        return await work()
    except asyncio.CancelledError:
        if terminated:
            return SIGTERM_EXIT
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        exit_on_sigterm()  # asyncio put the default back, which would end the process without clean-up
