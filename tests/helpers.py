"""Shared helpers for tests: real server configs, free ports, the process table."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path

from pydantic import PrivateAttr

from mcp_chat_tui.config import ServerConfig

FIXTURE_SERVER = str(Path(__file__).parent / "servers" / "fixture_server.py")
LIAR_SERVER = str(Path(__file__).parent / "servers" / "liar_server.py")
CATALOG_SERVER = str(Path(__file__).parent / "servers" / "catalog_server.py")
ATTACHMENTS_SERVER = str(Path(__file__).parent / "servers" / "attachments_server.py")
PLANTED_SERVER = str(Path(__file__).parent / "servers" / "planted_server.py")


def starts(started: Path) -> int:
    """How many times tests/servers/planted_server.py started with ``--started-file started``."""
    return len(started.read_text(encoding="utf-8").splitlines()) if started.exists() else 0


IN_PROCESS_FIXTURE_FLAGS = {"--extra-tools", "--long-tool-name"}  # what fixture_server.build() reads


def fixture_config(
    name: str, *flags: str, marker: str = "", in_process: bool = False, **overrides: object
) -> ServerConfig:
    """A stdio server running tests/servers/fixture_server.py with the given flags; ``in_process``:
    its server object connected in memory instead, for a test that neither calls ``crash`` (which
    ends its process) nor waits for what ``slow`` or ``shout_to_stderr`` say on the process's stderr."""
    args = [FIXTURE_SERVER, "--label", name, *flags]
    if marker:
        args += ["--marker", marker]
    config = ServerConfig(name=name, type="stdio", command=sys.executable, args=args, **overrides)
    if not in_process or REAL_SERVERS:
        return config
    if marker or {flag for flag in flags if flag.startswith("--")} - IN_PROCESS_FIXTURE_FLAGS:
        raise ValueError("a marker and flags other than --extra-tools and --long-tool-name need a process")

    def build():
        module = server_module(FIXTURE_SERVER)
        return module.build(module.parse_args(args[1:]))

    return in_process_config(config, build)


# MCT_REAL_SERVERS=1: every server a real process, as before in-process servers (to compare, or to
# look for a difference the memory transport might hide).
REAL_SERVERS = os.environ.get("MCT_REAL_SERVERS") == "1"


class InProcessConfig(ServerConfig):
    """A stdio server's config, shown and named as that server's command, whose server object the hub
    connects in memory (``servers/transports.py: memory_transport``): the same server code and the
    same SDK client, without the ~1-2 CPU-seconds of a process importing ``mcp``. For tests that are
    not about processes, stderr, the watchdog, signals or transports."""

    _build: object = PrivateAttr(default=None)

    def in_process(self):
        return self._build()


def in_process_config(config: ServerConfig, build) -> InProcessConfig:
    """``config``, its server built by ``build()`` in this process at each start."""
    memory = InProcessConfig(**config.model_dump())
    memory._build = build
    return memory


class StreamsServer:
    """A server whose own loop serves a pair of streams (a 2025-11-25-only runner, which a process
    runs on stdio), in the form the SDK's in-memory transport runs: ``serve(read, write)`` on its
    memory streams instead."""

    def __init__(self, serve) -> None:
        self.serve = serve

    def create_initialization_options(self) -> None:
        return None

    async def run(self, read, write, _options, raise_exceptions: bool = False) -> None:
        await self.serve(read, write)


def demo_server():
    from mcp_chat_tui.demo.server import server

    return server


def demo_config(name: str = "demo", *, process: bool = False, **overrides: object) -> ServerConfig:
    """The demo server; in this process (``InProcessConfig``) unless ``process`` or an environment
    or folder of its own is asked for (those need a process)."""
    config = ServerConfig(
        name=name, type="stdio", command=sys.executable, args=["-m", "mcp_chat_tui.demo.server"], **overrides
    )
    if process or REAL_SERVERS or {"env", "env_file", "cwd"} & overrides.keys():
        return config
    return in_process_config(config, demo_server)


def liar_config(name: str = "liar") -> ServerConfig:
    """tests/servers/liar_server.py: a tool that writes a file while marked read-only (in this process;
    what it says of its tool is the same on any transport)."""
    config = ServerConfig(name=name, type="stdio", command=sys.executable, args=[LIAR_SERVER])
    return config if REAL_SERVERS else in_process_config(config, lambda: server_module(LIAR_SERVER).server)


def server_module(path: str):
    """A new copy of a tests/servers module: its module-level state fresh, as in a new process."""
    folder = str(Path(path).parent)  # a server imports its neighbours, as ``python path`` lets it
    if folder not in sys.path:
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(f"mct_test_server_{Path(path).stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # where the SDK looks up the names in the tools' annotations
    spec.loader.exec_module(module)
    return module


def catalog_config(name: str = "docs", *flags: str) -> ServerConfig:
    """tests/servers/catalog_server.py: prompts, resources and templates (``--legacy``: 2025-11-25 only,
    a process of its own; otherwise in this process)."""
    config = ServerConfig(name=name, type="stdio", command=sys.executable, args=[CATALOG_SERVER, *flags])
    if "--legacy" in flags or REAL_SERVERS:
        return config

    def build():
        module = server_module(CATALOG_SERVER)
        return module.build(module.parse_args(list(flags)))

    return in_process_config(config, build)


def attachments_config(name: str = "pictures", *flags: str) -> ServerConfig:
    """tests/servers/attachments_server.py: image, audio and binary resources and prompts that embed them
    (in this process, unless ``--legacy-only``, which changes the SDK's runner for the whole process)."""
    config = ServerConfig(name=name, type="stdio", command=sys.executable, args=[ATTACHMENTS_SERVER, *flags])
    if "--label" in flags or "--legacy-only" in flags or REAL_SERVERS:
        return config
    return in_process_config(config, lambda: server_module(ATTACHMENTS_SERVER).build("pictures"))


def examples(count: int) -> int:
    """``count`` Hypothesis examples under the CI profile (100 by default), scaled with the profile
    loaded (tests/conftest.py): ``@settings(max_examples=examples(300))``."""
    from hypothesis import settings

    return max(10, count * settings.default.max_examples // 100)


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


SERVER_START_BOUND = 180  # seconds: a failure bound, never waited out by a server that starts (see below)


def wait_accepting(port: int, what: str, process: subprocess.Popen | None = None) -> None:
    """Return once 127.0.0.1:port accepts connections; fail at once if ``process`` exits. A server
    process spends about 1.8 CPU-s importing ``mcp`` before it listens: on a loaded machine (``stress
    --cpu 4`` beside four test workers) that is many seconds of wall time, so the bound only names a
    server that never listens, and a server that does returns as soon as it listens."""
    deadline = time.monotonic() + SERVER_START_BOUND
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {SERVER_START_BOUND} s")


def start_http_server(module_args: list[str], port: int) -> subprocess.Popen:
    """Start an HTTP MCP server on 127.0.0.1:port and wait until it accepts connections."""
    process = subprocess.Popen(
        [sys.executable, *module_args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_accepting(port, "HTTP server", process)
    except BaseException:
        process.kill()
        process.wait(10)
        raise
    return process


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


async def call_by_model_name(hub, model_name: str, arguments: dict | None = None):
    """Call a tool by the name the model knows it by, as the agent does: the hub's tool behind that name."""
    spec = hub.find_tool(model_name)
    assert spec is not None, f"no server offers a tool named {model_name!r}"
    return await hub.call_tool(spec.server, spec.name, arguments)
