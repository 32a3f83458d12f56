"""SIGTERM and Ctrl+C end the app quickly in every phase — starting its servers, loading a long
transcript, waiting on the model, waiting on a tool — with 143 and 130, and no server outlives
it. The real CLI (the full-screen app in a pseudo-terminal, ``-p`` as a script runs it), real
servers, a real HTTP endpoint.

The target is one second; the tests allow 3 s measured from the signal, so a loaded machine
does not fail them (the time measured is in the failure message)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mcp_chat_tui.transcript import Exchange, Step, Transcript, render
from mcp_chat_tui.transcript.lock import lock_path
from tests.helpers import FIXTURE_SERVER, pids_running_in, wait_until
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_tui_exit import Terminal

ALLOWED = 3.0  # seconds from the signal to the exit (target: 1)
CTRL_C = b"\x03"


class StalledEndpoint:
    """An OpenAI-compatible endpoint that starts a streamed reply and then sends nothing more."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked = threading.Event()  # a reply was started
        release, asked = self.release, self.asked

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # /v1/models
                body = json.dumps({"object": "list", "data": [{"id": "stalled", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                chunk = {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "model": "stalled",
                    "choices": [
                        {"index": 0, "delta": {"role": "assistant", "content": "Thinking "}, "finish_reason": None}
                    ],
                }
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                asked.set()
                release.wait(120)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> StalledEndpoint:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()


def servers_json(folder: Path, *flags: str) -> Path:
    config = folder / "servers.json"
    config.write_text(
        json.dumps(
            {
                "servers": {
                    "fixture": {
                        "command": sys.executable,
                        "args": [FIXTURE_SERVER, "--label", "fixture", *flags],
                        "cwd": str(folder),
                    }
                }
            }
        )
    )
    return config


def start_app(folder: Path, dirs: Path, url: str, *options: str) -> Terminal:
    env = dict(
        os.environ,
        TERM="xterm-256color",
        **{f"MCP_CHAT_TUI_{k}_DIR": str(dirs / k.lower()) for k in ("CONFIG", "DATA", "LOG")},
    )
    env.pop("COLUMNS", None), env.pop("LINES", None)
    return Terminal(
        [sys.executable, "-m", "mcp_chat_tui.cli.main", "--endpoint", url, "scripted", *options], folder, env
    )


def stop_and_time(terminal: Terminal, how: str) -> float:
    """Send SIGTERM or Ctrl+C; the seconds until the process ended (it must end within 30 s)."""
    started = time.monotonic()
    if how == "SIGTERM":
        os.kill(terminal.pid, signal.SIGTERM)
    else:
        terminal.press(CTRL_C)
    assert wait_until(lambda: terminal.status is not None, 30), terminal.text()[-2000:]
    return time.monotonic() - started


def check_exit(terminal: Terminal, how: str, took: float, folder: Path) -> None:
    expected = 143 if how == "SIGTERM" else 130
    assert terminal.status == expected, terminal.text()[-2000:]
    assert took < ALLOWED, f"{how} took {took:.2f} s to end the app"
    assert "Traceback" not in terminal.text()
    assert wait_until(lambda: not pids_running_in(folder), 5), "a server outlived the app"


def end_in_phase(terminal: Terminal, how: str, folder: Path, reached, prompt: bytes | None = None) -> None:
    """Wait until the app is in the phase under test (``reached``; after typing ``prompt`` once it is
    ready, when given), signal it, and check it ended as it should."""
    try:
        if prompt is not None:
            assert wait_until(lambda: "ready" in terminal.text(), 60), terminal.text()[-2000:]
            terminal.press(prompt)
        assert wait_until(reached, 30 if prompt is not None else 60), terminal.text()[-2000:]
        took = stop_and_time(terminal, how)
    finally:
        terminal.close()
    check_exit(terminal, how, took, folder)


HOW = ["SIGTERM", "Ctrl+C"]


@pytest.mark.parametrize("how", HOW)
def test_while_a_server_is_still_starting(how, tmp_path, isolated_user_dirs):
    config = servers_json(tmp_path, "--startup-delay", "60")
    with ScriptedEndpoint([]) as endpoint:
        terminal = start_app(tmp_path, isolated_user_dirs, endpoint.url, "--mcp-config", str(config))
        server_started = lambda: bool(set(pids_running_in(tmp_path)) - {terminal.pid})  # noqa: E731
        end_in_phase(terminal, how, tmp_path, lambda: "starting" in terminal.text() and server_started())


@pytest.mark.parametrize("how", HOW)
def test_while_a_long_transcript_is_loading(how, tmp_path, isolated_user_dirs):
    """Signalled as soon as the transcript's lock is taken: the file is being read next."""
    path = long_transcript(tmp_path)
    config = servers_json(tmp_path)
    with ScriptedEndpoint([]) as endpoint:
        terminal = start_app(
            tmp_path, isolated_user_dirs, endpoint.url, "--mcp-config", str(config), "--transcript", str(path)
        )
        end_in_phase(terminal, how, tmp_path, lambda: lock_path(path).exists())
    assert not lock_path(path).exists()


@pytest.mark.parametrize("how", HOW)
def test_while_the_app_shows_a_loaded_conversation(how, tmp_path, isolated_user_dirs):
    """Signalled at the first frame (the status bar alone), as the app mounts 15 long replies:
    the screen taken down under the mounting must not end in a traceback and exit 1."""
    sections = "\n\n".join(
        f"## part {j}\n\nsome *text* and `code`\n\n- a\n- b\n\n```python\nprint({j})\n```" for j in range(400)
    )
    path = tmp_path / "long-replies.md"
    path.write_text(
        render(Transcript([Exchange(f"q{i}", "m", [Step(text=sections)]) for i in range(15)])), encoding="utf-8"
    )
    config = servers_json(tmp_path)
    with ScriptedEndpoint([]) as endpoint:
        terminal = start_app(
            tmp_path, isolated_user_dirs, endpoint.url, "--mcp-config", str(config), "--transcript", str(path)
        )
        end_in_phase(terminal, how, tmp_path, lambda: "starting" in terminal.text())


@pytest.mark.parametrize("how", HOW)
def test_while_the_model_is_generating(how, tmp_path, isolated_user_dirs):
    config = servers_json(tmp_path)
    with StalledEndpoint() as endpoint:
        terminal = start_app(tmp_path, isolated_user_dirs, endpoint.url, "--mcp-config", str(config))
        end_in_phase(terminal, how, tmp_path, lambda: "Thinking" in terminal.text(), prompt=b"hello\r")


@pytest.mark.parametrize("how", HOW)
def test_while_a_tool_call_runs(how, tmp_path, isolated_user_dirs):
    config = servers_json(tmp_path)
    with ScriptedEndpoint([tool_reply("slow", {"seconds": 60}), "done"]) as endpoint:
        terminal = start_app(tmp_path, isolated_user_dirs, endpoint.url, "--mcp-config", str(config), "--yes")
        end_in_phase(terminal, how, tmp_path, lambda: "running tools" in terminal.text(), prompt=b"take your time\r")


def long_transcript(folder: Path) -> Path:
    path = folder / "long.md"
    exchanges = [
        Exchange(f"question {i}", "m", [Step(text="an answer, in a few words\n\n- one\n- two")]) for i in range(60_000)
    ]
    path.write_text(render(Transcript(exchanges)), encoding="utf-8")
    return path


class OneShot:
    """``mcp-chat-tui -p`` as a script starts it, its output (stdout and stderr) read on a thread."""

    def __init__(self, folder: Path, dirs: Path, url: str, *options: str) -> None:
        env = dict(os.environ, **{f"MCP_CHAT_TUI_{k}_DIR": str(dirs / k.lower()) for k in ("CONFIG", "DATA", "LOG")})
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_chat_tui.cli.main", "--endpoint", url, "scripted", *options],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def stop_and_time(self, how: str) -> float:
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGINT)
        self.process.wait(30)
        return time.monotonic() - started


PHASES = ["a server still starting", "a long transcript loading", "the model generating", "a tool call running"]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("phase", PHASES)
def test_p_ends_at_once_in_every_phase(phase, how, tmp_path, isolated_user_dirs):
    flags = ["--startup-delay", "60"] if phase == "a server still starting" else []
    options = ["--mcp-config", str(servers_json(tmp_path, *flags)), "--yes", "-p", "take your time"]
    path = long_transcript(tmp_path) if phase == "a long transcript loading" else None
    if path is not None:
        options += ["--transcript", str(path)]
    script = [tool_reply("slow", {"seconds": 60}), "done"] if phase == "a tool call running" else ["done"]
    endpoint = StalledEndpoint() if phase == "the model generating" else ScriptedEndpoint(script)

    def in_phase() -> bool:
        if phase == "a server still starting":  # the server runs in the folder (so does the CLI)
            return bool(set(pids_running_in(tmp_path)) - {run.process.pid})
        if phase == "a long transcript loading":
            return lock_path(path).exists()
        if phase == "the model generating":
            return endpoint.asked.is_set()
        return run.said("slow")  # the call's line on stderr: it runs

    with endpoint:
        run = OneShot(tmp_path, isolated_user_dirs, endpoint.url, *options)
        try:
            assert wait_until(in_phase, 60), "".join(run.lines)[-2000:]
            took = run.stop_and_time(how)
        finally:
            if run.process.poll() is None:
                run.process.kill()
                run.process.wait(10)
    assert run.process.returncode == (143 if how == "SIGTERM" else 130), "".join(run.lines)[-2000:]
    assert took < ALLOWED, f"{how} took {took:.2f} s to end -p"
    assert "Traceback" not in "".join(run.lines)
    assert wait_until(lambda: not pids_running_in(tmp_path), 5), "a server outlived the run"
