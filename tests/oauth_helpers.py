"""Helpers for the sign-in tests: the authorization server and the MCP server it protects
(tests/servers/oauth_server.py) on 127.0.0.1, and a stand-in for the person at the browser."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

from mcp_chat_tui.servers.oauth import SignInRequest
from tests.helpers import REAL_SERVERS, SERVER_START_BOUND, free_port, server_module, start_http_server, wait_accepting

OAUTH_SERVER = str(Path(__file__).parent / "servers" / "oauth_server.py")


@dataclass
class ProtectedServer:
    url: str  # the MCP endpoint
    issuer: str  # the authorization server

    def revoke_all(self) -> None:
        request = urllib.request.Request(f"{self.issuer}/revoke-all", method="POST")
        urllib.request.urlopen(request, timeout=5).close()

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(f"{self.issuer}/stats", timeout=5) as response:
            return json.loads(response.read())


@contextmanager
def protected_server(*flags: str, sse: bool = False):
    """The authorization server and the MCP server, stopped on the way out: served on a thread of this
    process (the same HTTP on 127.0.0.1, without a process importing mcp, starlette and uvicorn at each
    start: no sign-in test is about the server's process), or as a process with ``MCT_REAL_SERVERS=1``."""
    port, as_port = free_port(), free_port()
    args = ["--port", str(port), "--as-port", str(as_port), *flags, *(["--sse"] if sse else [])]
    path = "sse" if sse else "mcp"
    serving = _process(args, port, as_port) if REAL_SERVERS else _thread(args)
    with serving:
        yield ProtectedServer(f"http://127.0.0.1:{port}/{path}", f"http://127.0.0.1:{as_port}")


@contextmanager
def _process(args: list[str], port: int, as_port: int):
    process = start_http_server([OAUTH_SERVER, *args], port)
    try:
        wait_accepting(as_port, "the authorization server")  # the same process: listening once its port is
        yield
    finally:
        process.kill()
        process.wait(10)


@contextmanager
def _thread(args: list[str]):
    """tests/servers/oauth_server.py's two uvicorn servers on a thread with its own event loop, from a
    fresh copy of the module (its state new, as in a new process); yields once both listen, and on the
    way out stops them (a stream still open is cancelled after a second) and waits for the thread."""
    module = server_module(OAUTH_SERVER)
    both = module.servers(module.parse_args(args))
    for server in both:
        server.config.timeout_graceful_shutdown = 1  # then a stream still open is cancelled
    failed: list[BaseException] = []

    def serve() -> None:
        try:
            asyncio.run(module.serve(both))
        except BaseException as exc:  # a port taken meanwhile: uvicorn exits (SystemExit)
            failed.append(exc)

    thread = threading.Thread(target=serve, name="oauth-servers", daemon=True)
    thread.start()
    try:
        while not all(server.started for server in both):
            if not thread.is_alive():
                raise RuntimeError(f"the protected server did not start: {failed!r}")
            time.sleep(0.01)
        yield
    finally:
        for server in both:
            server.should_exit = True
        thread.join(SERVER_START_BOUND)
        if thread.is_alive():
            raise RuntimeError(f"the protected server's thread did not end within {SERVER_START_BOUND} s")


async def follow(url: str) -> httpx2.Response:
    """What a browser does with the authorization URL: the server approves at once and redirects
    to the app's loopback listener, whose page is the last response."""
    async with httpx2.AsyncClient(follow_redirects=True, timeout=10) as client:
        return await client.get(url)


@dataclass
class Browser:
    """The person: sees each authorization URL and opens it (or not)."""

    opens: bool = True
    requests: list[SignInRequest] = field(default_factory=list)
    pages: list[httpx2.Response] = field(default_factory=list)
    _tasks: set[asyncio.Task] = field(default_factory=set)

    async def __call__(self, request: SignInRequest) -> None:
        self.requests.append(request)
        if self.opens:
            task = asyncio.get_running_loop().create_task(self._open(request.url))
            self._tasks.add(task)

    async def _open(self, url: str) -> None:
        self.pages.append(await follow(url))


def run(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mcp_chat_tui.cli.main", *args], **kwargs)
