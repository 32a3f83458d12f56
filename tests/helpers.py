"""Shared helpers for tests: real server configs, free ports, the process table."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path

from mcp_chat_tui.config import ServerConfig

FIXTURE_SERVER = str(Path(__file__).parent / "servers" / "fixture_server.py")
LIAR_SERVER = str(Path(__file__).parent / "servers" / "liar_server.py")
CATALOG_SERVER = str(Path(__file__).parent / "servers" / "catalog_server.py")
ATTACHMENTS_SERVER = str(Path(__file__).parent / "servers" / "attachments_server.py")
PLANTED_SERVER = str(Path(__file__).parent / "servers" / "planted_server.py")


def starts(started: Path) -> int:
    """How many times tests/servers/planted_server.py started with ``--started-file started``."""
    return len(started.read_text(encoding="utf-8").splitlines()) if started.exists() else 0


def fixture_config(name: str, *flags: str, marker: str = "", **overrides: object) -> ServerConfig:
    """A stdio server running tests/servers/fixture_server.py with the given flags."""
    args = [FIXTURE_SERVER, "--label", name, *flags]
    if marker:
        args += ["--marker", marker]
    return ServerConfig(name=name, type="stdio", command=sys.executable, args=args, **overrides)


def demo_config(name: str = "demo", **overrides: object) -> ServerConfig:
    return ServerConfig(
        name=name, type="stdio", command=sys.executable, args=["-m", "mcp_chat_tui.demo.server"], **overrides
    )


def liar_config(name: str = "liar") -> ServerConfig:
    """tests/servers/liar_server.py: a tool that writes a file while marked read-only."""
    return ServerConfig(name=name, type="stdio", command=sys.executable, args=[LIAR_SERVER])


def catalog_config(name: str = "docs", *flags: str) -> ServerConfig:
    """tests/servers/catalog_server.py: prompts, resources and templates (``--legacy``: 2025-11-25 only)."""
    return ServerConfig(name=name, type="stdio", command=sys.executable, args=[CATALOG_SERVER, *flags])


def attachments_config(name: str = "pictures", *flags: str) -> ServerConfig:
    """tests/servers/attachments_server.py: image, audio and binary resources and prompts that embed them."""
    return ServerConfig(name=name, type="stdio", command=sys.executable, args=[ATTACHMENTS_SERVER, *flags])


def new_marker() -> str:
    return f"mct-{uuid.uuid4().hex[:12]}"


def pids_with(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker`` (zombies count as gone)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z" and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_http_server(module_args: list[str], port: int) -> subprocess.Popen:
    """Start an HTTP MCP server on 127.0.0.1:port and wait until it accepts connections."""
    process = subprocess.Popen(
        [sys.executable, *module_args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"HTTP server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("HTTP server did not start")


@contextmanager
def mlx_lm_server(model: Path, log_path: Path):
    """A real ``mlx_lm.server`` for ``model`` on a free port of 127.0.0.1; yields its ``/v1`` URL.

    Killed and waited for on the way out; a server that exits or does not answer within 90 s
    fails with its log."""
    port = free_port()
    log = log_path.open("w+")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlx_lm.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "WARNING",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"mlx_lm.server exited with {process.returncode}:\n{log.read()}")
            try:
                with urllib.request.urlopen(base + "/v1/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("mlx_lm.server did not start within 90 s") from None
                time.sleep(0.2)
        yield base + "/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def pids_running_in(folder: Path) -> list[int]:
    """Live processes whose working directory is ``folder``."""
    found = []
    target = str(folder.resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if os.readlink(entry / "cwd") == target:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


async def eventually(predicate, timeout: float = 10.0, interval: float = 0.05, *, pause=None) -> bool:
    """``wait_until`` for async tests: lets the event loop run while waiting.

    Args:
        pause: the coroutine function that waits ``interval`` between two looks (``asyncio.sleep``;
            a Pilot's ``pause`` also lets the app's screen catch up).
    """
    import asyncio

    pause = pause or asyncio.sleep
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await pause(interval)
    return predicate()


def mentions(text: str, value: str) -> bool:
    """``value`` (a number such as ``84`` or ``299,792,458``) stands on its own in ``text``: not
    as part of a longer number ("484848" does not mention 84; "= 84." does)."""
    import re

    return re.search(rf"(?<![\w.,]){re.escape(value)}(?![\w,]|\.\d)", text) is not None
