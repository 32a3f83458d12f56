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
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

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


def run_cli(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str], stdin: str | bytes | None = None
) -> subprocess.CompletedProcess:
    """``mcp-chat-tui ARGS`` in this process with ``env`` as its whole environment, in ``cwd``, reading
    ``stdin`` (none: an empty pipe); what it wrote and its exit code, as ``subprocess.run`` gives them."""
    from mcp_chat_tui.cli.main import main

    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    with _process_state(env, cwd, data) as (out, err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's errors: the message is on stderr already
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
    return subprocess.CompletedProcess(list(args), code, out.text(), err.text())
