"""scripts/conformance_client.py, the command the conformance suite starts once a scenario (issue 32):
it imports no HTTP library beyond the standard one, and its browser follows the authorization
server's redirect to the app's callback, as a browser would."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from scripts.conformance_client import browse, follow_sign_in

TOP = Path(__file__).resolve().parent.parent


@contextmanager
def serving(answer) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 whose GETs ``answer(handler)`` handles; its address."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            answer(self)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_client_imports_no_http_library_beyond_the_standard_one():
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import scripts.conformance_client"],
        capture_output=True, text=True, cwd=TOP, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = {found.group(1).split(".")[0] for found in re.finditer(r"^import time:.*\|\s*(\S+)$", done.stderr, re.M)}
    assert "tests" in names  # importtime did report the script's imports
    assert not names & {"httpx2", "httpx", "httpcore2", "requests", "mcp", "mcp_chat_tui"}


def test_the_browser_follows_the_redirect_to_the_callback():
    came_back: list[str] = []

    def callback(handler: BaseHTTPRequestHandler) -> None:
        came_back.append(handler.path)
        handler.send_response(200)
        handler.end_headers()
        handler.wfile.write(b"Signed in.")

    with serving(callback) as app:

        def authorize(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(302)
            handler.send_header("Location", f"{app}/callback?code=abc&state=xyz")
            handler.end_headers()

        with serving(authorize) as server:
            browse(f"{server}/authorize?client_id=app")
    assert came_back == ["/callback?code=abc&state=xyz"]


def test_the_sign_in_address_is_followed_once_the_cli_waits_for_the_browser():
    opened: list[str] = []

    def authorize(handler: BaseHTTPRequestHandler) -> None:
        opened.append(handler.path)
        handler.send_response(200)
        handler.end_headers()

    with serving(authorize) as server:
        shown = f"scenario needs sign-in. Sign in now? [Y/n] y\r\nSign in to scenario at this address:\r\n{server}/authorize?state=1\r\n"
        assert follow_sign_in(shown, 0) == 0  # its callback is not up yet: nothing is opened
        assert opened == []
        shown += (
            "Open it in your browser? [Y/n] n\r\nwaiting for the browser to come back to http://127.0.0.1:1/callback"
        )
        start = follow_sign_in(shown, 0)
        assert opened == ["/authorize?state=1"]
        assert follow_sign_in(shown, start) == start  # followed once
        assert opened == ["/authorize?state=1"]
