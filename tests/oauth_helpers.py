"""Helpers for the sign-in tests: the authorization server and the MCP server it protects
(tests/servers/oauth_server.py) on 127.0.0.1, and a stand-in for the person at the browser."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

from mcp_chat_tui.servers.oauth import SignInRequest
from tests.helpers import free_port, start_http_server, wait_accepting

OAUTH_SERVER = str(Path(__file__).parent / "servers" / "oauth_server.py")


@dataclass
class ProtectedServer:
    url: str  # the MCP endpoint
    issuer: str  # the authorization server
    process: subprocess.Popen

    def revoke_all(self) -> None:
        request = urllib.request.Request(f"{self.issuer}/revoke-all", method="POST")
        urllib.request.urlopen(request, timeout=5).close()

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(f"{self.issuer}/stats", timeout=5) as response:
            return json.loads(response.read())


@contextmanager
def protected_server(*flags: str, sse: bool = False):
    """The authorization server and the MCP server, killed on the way out."""
    port, as_port = free_port(), free_port()
    args = [OAUTH_SERVER, "--port", str(port), "--as-port", str(as_port), *flags, *(["--sse"] if sse else [])]
    process = start_http_server(args, port)
    try:
        start_http_server_ready(as_port)
        path = "sse" if sse else "mcp"
        yield ProtectedServer(f"http://127.0.0.1:{port}/{path}", f"http://127.0.0.1:{as_port}", process)
    finally:
        process.kill()
        process.wait(10)


def start_http_server_ready(port: int) -> None:
    """Wait until the authorization server (same process as the MCP server) answers too."""
    wait_accepting(port, "the authorization server")


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
