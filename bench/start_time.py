"""Seconds from the command ``mcp-chat-tui --demo`` to its first frame and to ready, as a person
starting it in a terminal waits for them.

The command (the installed console script beside this Python) runs in a pseudo-terminal of
120x40 (``TERM=xterm-256color``), its user folders and working folder in a new temporary folder.
Times are taken from just before the process is forked; the terminal's output is read as it comes
and, with its escape sequences taken out, searched:

- ``first_frame_s``: the first output holding ``demo model``, the model's name in the status bar,
  which is the whole of the app's first frame (ChatApp composes the status bar alone, then the
  panes). Output before it (the terminal being set up) is not a frame.
- ``ready_s``: the first output holding ``is ready with``, the chat's first line, which the app
  mounts in the step that marks it ready (``ChatApp.ready``): the model loaded, the demo server
  connected with its tools listed, and a prompt sent with Enter now goes to the model at once.

The app is then sent SIGTERM (it leaves within a second, taking the demo server with it).

Before the starts, the package the command imports is compiled (its ``.pyc`` files), as ``pip install``
does for an installed copy: an editable checkout run with ``PYTHONDONTWRITEBYTECODE=1`` (as the
development sessions here are) never keeps them, and compiled the app's 200-odd modules at every
start, a third of a second of CPU that no installed copy spends.
Run alone: ``.venv/bin/python bench/start_time.py [--starts 5]``; ``bench/ui_stream.py`` runs it too.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ESCAPES = re.compile(rb"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|.)")
FIRST_FRAME = b"demo model"
READY = b"is ready with"
ROWS, COLUMNS = 40, 120
TIMEOUT = 120.0


def command() -> str:
    """The ``mcp-chat-tui`` console script of the Python running this."""
    script = Path(sys.executable).with_name("mcp-chat-tui")
    if not script.exists():
        raise SystemExit(f"{script} not found: install the project into this venv first (pip install -e .)")
    return str(script)


def _spawn(argv: list[str], folder: Path) -> tuple[int, int]:
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("COLUMNS", None), env.pop("LINES", None)
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(folder / kind.lower())
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its terminal
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        os.chdir(folder)
        os.execve(argv[0], argv, env)
    return pid, fd


def _end(pid: int, fd: int) -> None:
    """SIGTERM, the output drained until the app has left (SIGKILL after 10 s)."""
    os.kill(pid, signal.SIGTERM)
    deadline = time.perf_counter() + 10
    while time.perf_counter() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        try:
            if ready and not os.read(fd, 65536):
                break
        except OSError:  # EIO: the app closed the terminal
            break
        if os.waitpid(pid, os.WNOHANG)[0]:
            os.close(fd)
            return
    else:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(fd)


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) process ``pid`` has used so far; what a busy machine does not
    stretch as it stretches wall time (NaN where /proc cannot say)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CPU: dict[str, list[float]] = {"frame": [], "ready": []}  # the app's CPU seconds at each, every start


def one_start(argv: list[str]) -> tuple[float, float]:
    """(first frame, ready) in seconds for one start of ``argv`` in a new pseudo-terminal."""
    with tempfile.TemporaryDirectory(prefix="mct-start-") as scratch:
        started = time.perf_counter()
        pid, fd = _spawn(argv, Path(scratch))
        output, frame, ready = b"", None, None
        try:
            while ready is None:
                if time.perf_counter() - started > TIMEOUT:
                    raise SystemExit(f"no ready screen after {TIMEOUT:.0f} s: {ESCAPES.sub(b'', output)[-500:]!r}")
                if not select.select([fd], [], [], 0.5)[0]:
                    continue
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    raise SystemExit(f"the app left before it was ready: {ESCAPES.sub(b'', output)[-500:]!r}")
                now = time.perf_counter() - started
                output += data
                text = ESCAPES.sub(b"", output)
                if frame is None and FIRST_FRAME in text:
                    frame = now
                    CPU["frame"].append(cpu_seconds(pid))
                if READY in text:
                    ready = now
                    CPU["ready"].append(cpu_seconds(pid))
        finally:
            _end(pid, fd)
    assert frame is not None
    return frame, ready


def compile_package(script: str) -> None:
    """Compile the ``mcp_chat_tui`` package that ``script``'s Python imports, as ``pip install`` does."""
    python = Path(script).read_text(errors="replace").splitlines()[0].removeprefix("#!").strip()
    program = "import compileall, pathlib, mcp_chat_tui; compileall.compile_dir(pathlib.Path(mcp_chat_tui.__file__).parent, quiet=1)"
    subprocess.run([python, "-c", program], check=True, timeout=300)


def start_times(starts: int, script: str | None = None, warm_up: bool = True) -> tuple[float, float]:
    """Median first frame and ready over ``starts`` starts (after one not counted, the disk cache's,
    unless not ``warm_up``)."""
    argv = [script or command(), "--demo"]
    compile_package(argv[0])
    if warm_up:
        one_start(argv)
    CPU["frame"].clear(), CPU["ready"].clear()
    frames, readies = [], []
    for _ in range(starts):
        frame, ready = one_start(argv)
        frames.append(frame)
        readies.append(ready)
    first, whole = statistics.median(frames), statistics.median(readies)
    print(
        f"4. mcp-chat-tui --demo in a {COLUMNS}x{ROWS} pseudo-terminal, {starts} starts: first frame median "
        f"{first:.2f} s ({', '.join(f'{t:.2f}' for t in frames)}; target <= 1), ready median {whole:.2f} s "
        f"({', '.join(f'{t:.2f}' for t in readies)}; target <= 2.5)"
    )
    print(
        f"   the app's own CPU time (its servers' not counted): {statistics.median(CPU['frame']):.2f} s by the "
        f"first frame, {statistics.median(CPU['ready']):.2f} s by ready (medians)"
    )
    return first, whole


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--command", help="another mcp-chat-tui console script (another checkout's, to compare)")
    options = parser.parse_args()
    start_times(options.starts, options.command)
