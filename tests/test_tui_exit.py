"""The full-screen app as a user runs it, in a pseudo-terminal: Ctrl+C leaves with exit code 130."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import signal
import struct
import sys
import termios
import threading
from pathlib import Path

from tests.helpers import pids_running_in, wait_until
from tests.scripted_endpoint import ScriptedEndpoint

ESCAPES = re.compile(r"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|.)")


class Terminal:
    """A child process on a pseudo-terminal (its controlling terminal), with its output drained on a thread."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], size: tuple[int, int] = (40, 140)) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty is its stdin, stdout, stderr and controlling terminal
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.output = bytearray()
        self.status: int | None = None
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            self.output += data
        _, status = os.waitpid(self.pid, 0)
        self.status = os.waitstatus_to_exitcode(status)

    def text(self) -> str:
        return ESCAPES.sub("", self.output.decode("utf-8", "replace"))

    def press(self, data: bytes) -> None:
        os.write(self.fd, data)

    def close(self) -> None:
        if self.status is None:
            os.kill(self.pid, 9)
            wait_until(lambda: self.status is not None, 10)
        os.close(self.fd)


def test_ctrl_c_in_the_full_screen_app_exits_130_and_takes_the_servers_with_it(tmp_path, isolated_user_dirs):
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "servers": {
                    "demo": {
                        "command": sys.executable,
                        "args": ["-m", "mcp_chat_tui.demo.server"],
                        "cwd": str(tmp_path),
                    }
                }
            }
        )
    )
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("COLUMNS", None), env.pop("LINES", None)
    with ScriptedEndpoint([]) as endpoint:
        terminal = Terminal(
            [
                sys.executable,
                "-m",
                "mcp_chat_tui.cli.main",
                "--endpoint",
                endpoint.url,
                "scripted-model",
                "--mcp-config",
                str(config),
            ],
            tmp_path,
            env,
        )
        try:
            assert wait_until(lambda: "ready" in terminal.text() and pids_running_in(tmp_path), 60), terminal.text()
            terminal.press(b"\x03")
            assert wait_until(lambda: terminal.status is not None, 15), terminal.text()[-2000:]
        finally:
            terminal.close()
    assert terminal.status == 130, terminal.text()[-2000:]
    assert "Traceback" not in terminal.text()
    assert wait_until(lambda: not pids_running_in(tmp_path), 5), "a server outlived the app"


def test_kill_int_on_the_full_screen_app_exits_130_as_ctrl_c_does(tmp_path, isolated_user_dirs):
    """SIGINT from another process (``kill -INT``, a supervisor) ends the app as Ctrl+C does: the
    servers shut down, the terminal restored, exit code 130."""
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "servers": {
                    "demo": {
                        "command": sys.executable,
                        "args": ["-m", "mcp_chat_tui.demo.server"],
                        "cwd": str(tmp_path),
                    }
                }
            }
        )
    )
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("COLUMNS", None), env.pop("LINES", None)
    with ScriptedEndpoint([]) as endpoint:
        argv = [sys.executable, "-m", "mcp_chat_tui.cli.main", "--endpoint", endpoint.url, "scripted-model"]
        terminal = Terminal([*argv, "--mcp-config", str(config)], tmp_path, env)
        try:
            assert wait_until(lambda: "ready" in terminal.text() and pids_running_in(tmp_path), 60), terminal.text()
            os.kill(terminal.pid, signal.SIGINT)
            assert wait_until(lambda: terminal.status is not None, 15), terminal.text()[-2000:]
        finally:
            terminal.close()
    assert terminal.status == 130, terminal.text()[-2000:]
    assert "Traceback" not in terminal.text()
    assert wait_until(lambda: not pids_running_in(tmp_path), 5), "a server outlived the app"
    assert b"\x1b[?1049l" in terminal.output  # the screen given back
