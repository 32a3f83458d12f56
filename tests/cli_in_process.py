"""The real CLI (``mcp_chat_tui.cli.main.main``) run in the test's own process: its output, its exit
code, the files it writes, without a new interpreter importing mcp, mlx-lm and transformers again
(seconds of CPU for each run). For a test about the CLI's words, codes and files; a test about
signals, kills, terminals or the process's own exit keeps a subprocess."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _Output(io.TextIOWrapper):
    """A standard stream the CLI writes text to, as a pipe would take it (no terminal)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", errors="replace")  # type: ignore[attr-defined]


@contextlib.contextmanager
def _process_state(env: Mapping[str, str], cwd: Path, stdin: bytes) -> Iterator[tuple[_Output, _Output]]:
    """The environment, folder and standard streams of a process started so, given back afterwards with
    the logging handlers and signal handlers the CLI replaces."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    saved_signals = {number: signal.getsignal(number) for number in _SIGNALS}
    out, err = _Output(), _Output()
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        sys.stdout, sys.stderr = out, err
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for handler in list(root.handlers):
            if handler not in saved_handlers:
                root.removeHandler(handler)
                handler.close()
        for handler in saved_handlers:
            if handler not in root.handlers:
                root.addHandler(handler)
        root.setLevel(saved_level)
        for number, handler in saved_signals.items():
            signal.signal(number, handler)


def loop_running() -> bool:
    """Whether this thread runs an event loop (the CLI's own ``asyncio.run`` cannot run inside it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


DEMO_SERVER_ARGS = ["-m", "mcp_chat_tui.demo.server"]


def _demo_server():
    from tests.helpers import demo_server

    return demo_server()


# What the CLI run in this process connects in memory: a server config's arguments (after the
# interpreter) and what builds its server object. The demo server always; a test adds its own servers
# for its runs with ``servers_in_memory``.
_IN_MEMORY: dict[tuple[str, ...], Callable[[], Any]] = {tuple(DEMO_SERVER_ARGS): _demo_server}


@contextlib.contextmanager
def servers_in_memory(servers: Mapping[tuple[str, ...], Callable[[], Any]]) -> Iterator[None]:
    """For the CLI runs inside: each config whose arguments are a key here is connected in memory to
    the server object its value builds (a fresh copy of a tests/servers module at each start, as a
    process would have), when it would run as such a process would (``runs_as_a_process_would``)."""
    saved = dict(_IN_MEMORY)
    _IN_MEMORY.update(servers)
    try:
        yield
    finally:
        _IN_MEMORY.clear()
        _IN_MEMORY.update(saved)


def runs_as_a_process_would(config) -> bool:
    """``config`` starts a server this process can build with this interpreter, in the run's own folder
    and environment (a process of its own would see nothing else), so connecting its server object in
    memory changes only the transport."""
    return (
        config.type == "stdio"
        and config.command == sys.executable
        and tuple(config.args) in _IN_MEMORY
        and not config.env
        and config.env_file is None
        and (config.cwd is None or Path(config.cwd).resolve() == Path.cwd().resolve())
    )


@contextlib.contextmanager
def _connected_in_memory() -> Iterator[None]:
    """The hub connects the servers ``runs_as_a_process_would`` takes in memory, as it does a test's
    ``InProcessConfig`` (tests/helpers.py)."""
    from mcp_chat_tui.servers import hub
    from mcp_chat_tui.servers.sdk_private import InMemoryTransport

    original = hub.memory_transport

    def transport(config):
        if runs_as_a_process_would(config):
            return InMemoryTransport(_IN_MEMORY[tuple(config.args)]())
        return original(config)

    hub.memory_transport = transport
    try:
        yield
    finally:
        hub.memory_transport = original


def run_cli(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: str | bytes | None = None,
    in_memory: bool = True,
) -> subprocess.CompletedProcess:
    """``mcp-chat-tui ARGS`` in this process with ``env`` as its whole environment, in ``cwd``, reading
    ``stdin`` (none: an empty pipe); what it wrote and its exit code, as ``subprocess.run`` gives them.
    The demo server its ``mcp.json`` names (and those ``servers_in_memory`` adds) run in this process
    too (``in_memory``; not with ``MCT_REAL_SERVERS=1``): a test of the CLI's words, codes and files is
    not about a server's process, which imported mcp at each start (0.5-1 s of CPU)."""
    from mcp_chat_tui.cli.main import main
    from tests.helpers import REAL_SERVERS

    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    servers = _connected_in_memory() if in_memory and not REAL_SERVERS else contextlib.nullcontext()
    with _process_state(env, cwd, data) as (out, err), servers:
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's errors: the message is on stderr already
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
    return subprocess.CompletedProcess(list(args), code, out.text(), err.text())
