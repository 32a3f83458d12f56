"""The cycle collector is paused while the full-screen app starts (core/collector.py, issue 33's
start-up): from the command's first line until the app is ready, fails or ends, and for at most
``START_UP_LIMIT_SECONDS``; ``-p`` and ``--plain`` until they have started (issue 32); ``--search``
runs with it as Python sets it."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from mcp_chat_tui.cli import chat, plain
from mcp_chat_tui.core import collector
from mcp_chat_tui.engine.events import EngineError
from tests.cli_in_process import run_cli
from tests.fakes import ScriptedEngine
from tests.scripted_endpoint import MODEL_ID, ScriptedEndpoint
from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

# What ``main`` imports after ``run`` has paused the collector: importing the command's module
# must not bring them in first.
IMPORTED_BY_MAIN = ("rich", "pydantic", "textual", "mcp_chat_tui.config", "mcp_chat_tui.cli.args")

ENTRY = textwrap.dedent(
    """
    import gc, json, sys
    import mcp_chat_tui.cli.main as entry

    loaded = sorted(name for name in json.loads(sys.argv[1]) if name in sys.modules)

    def main():
        print(json.dumps({"collecting": gc.isenabled(), "loaded": loaded}), flush=True)
        return 0

    entry.main = main
    entry.run()
    """
)


# The demo server run as ``python -m``, its serving stopped where it would start: how many collections
# ran while its module (the SDK) was imported, and whether the collector is on when it serves.
DEMO_SERVER = textwrap.dedent(
    """
    import gc, json, runpy
    import anyio
    import mcp_chat_tui.demo  # the packages above the module, which runpy imports first

    collections = []
    gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))

    def serve(*args, **kwargs):
        print(json.dumps({"collections_while_importing": len(collections), "collecting": gc.isenabled()}))

    anyio.run = serve
    collections.clear()  # from the module's first line
    runpy.run_module("mcp_chat_tui.demo.server", run_name="__main__")
    """
)


@pytest.fixture
def paused_collector():
    """The collector paused as the command pauses it; given back as it was after the test."""
    collecting = gc.isenabled()
    collector.pause_collector()
    yield
    collector.resume_collector()
    if collecting:
        gc.enable()


def test_the_command_runs_main_with_the_collector_paused_and_its_module_imports_little():
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, json.dumps(IMPORTED_BY_MAIN)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"collecting": False, "loaded": []}


def test_modes_other_than_the_app_run_with_the_collector_on(
    paused_collector, isolated_user_dirs, tmp_path, monkeypatch
):
    seen: list[bool] = []

    def run_search(query: str, *, as_json: bool) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr("mcp_chat_tui.cli.search.run_search", run_search)
    done = run_cli(["--search", "anything"], cwd=tmp_path, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert seen == [True]


async def test_the_app_resumes_the_collector_when_it_is_ready(paused_collector):
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        assert not gc.isenabled()  # still starting: the demo server takes a while
        await wait_ready(pilot, app)
        assert app.fatal_error is None
        assert gc.isenabled()


class _FailingLoad(ScriptedEngine):
    async def load(self, on_progress=None) -> None:
        raise EngineError("cannot load model 'scripted': no such folder")


class _EndlessLoad(ScriptedEngine):
    async def load(self, on_progress=None) -> None:
        await asyncio.Event().wait()


async def test_a_start_that_fails_resumes_the_collector(paused_collector):
    app = make_app(_FailingLoad([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.fatal_error is not None, what="the fatal screen")
        assert gc.isenabled()


async def test_a_long_start_resumes_the_collector_after_the_limit(paused_collector, monkeypatch):
    monkeypatch.setattr("mcp_chat_tui.ui.startup.START_UP_LIMIT_SECONDS", 0.3)
    app = make_app(_EndlessLoad([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, gc.isenabled, what="the collector resumed")
        assert not app.ready.is_set()


def test_the_demo_server_imports_the_sdk_with_the_collector_paused_and_serves_with_it_on():
    done = subprocess.run([sys.executable, "-c", DEMO_SERVER], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["collecting"]
    # runpy reading the module's code may make one young collection before its first line; the
    # SDK's import made about 190 without the pause
    assert seen["collections_while_importing"] <= 2, seen


def test_one_shot_starts_with_the_collector_paused_and_runs_its_turn_with_it_on(
    paused_collector, isolated_user_dirs, tmp_path
):
    """``-p`` imports the SDK as it starts (issue 32): the collector stays paused until the model is
    loaded and the servers are up, and the turn runs with it on."""
    seen: dict[str, bool] = {}
    load_and_start, run_plain = chat._load_and_start, plain.run_plain

    async def started(*args, **kwargs):
        await load_and_start(*args, **kwargs)
        seen["started"] = gc.isenabled()

    async def turn(*args, **kwargs):
        seen["turn"] = gc.isenabled()
        return await run_plain(*args, **kwargs)

    config = tmp_path / "mcp.json"
    config.write_text('{"servers": {}}')
    with ScriptedEndpoint(["Hello."]) as endpoint, pytest.MonkeyPatch.context() as patch:
        patch.setattr(chat, "_load_and_start", started)
        patch.setattr(plain, "run_plain", turn)
        command = ["--endpoint", endpoint.url, MODEL_ID, "--mcp-config", str(config), "--no-save", "-p", "hi"]
        done = run_cli(command, cwd=tmp_path, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert seen == {"started": False, "turn": True}


def test_a_mode_that_never_says_it_started_resumes_the_collector_at_the_limit(paused_collector):
    collector.resume_collector_later(0.05)
    deadline = time.monotonic() + 30
    while not gc.isenabled() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gc.isenabled()


def test_resuming_the_collector_cancels_the_limit(paused_collector):
    """The limit's timer ends with the start: left running, it would resume a later pause (another
    in-process run's, another test's)."""
    collector.resume_collector_later(600)
    (limit,) = [thread for thread in threading.enumerate() if thread.name == "collector-limit"]
    collector.resume_collector()
    limit.join(timeout=30)
    assert not limit.is_alive()
