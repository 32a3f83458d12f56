"""Servers that send a lot, in the apps: ``-p`` as a script runs it and the full-screen app under
Pilot, with the real flood server (tests/servers/flood_server.py). 100,000 progress or log
notifications end in the call's result, shown as a few lines; SIGTERM during a large result
ends ``-p`` at once."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.ui.call_store import CallStore
from tests.fakes import ScriptedEngine, call
from tests.helpers import pids_running_in, wait_until
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_call_clock import FRAMES_PER_SECOND
from tests.test_exit_signals import ALLOWED, OneShot
from tests.test_floods import FLOOD_SERVER, flood_config
from tests.test_oneshot import run_cli
from tests.ui_helpers import SIZE, make_app, send, wait_ready, wait_turn_done

BURST_LINES, LINES_PER_SECOND = 50, 20  # cli/log_lines.py


def flood_servers(folder: Path, timeout: float = 300) -> Path:
    config = folder / "servers.json"
    server = {"command": sys.executable, "args": [FLOOD_SERVER], "cwd": str(folder), "timeout": timeout}
    config.write_text(json.dumps({"servers": {"flood": server}}))
    return config


def test_p_ends_a_call_of_100000_progress_and_one_of_100000_warnings_with_their_results(tmp_path, isolated_user_dirs):
    script = [
        tool_reply("burst", {"count": 100_000}),
        tool_reply("burst", {"count": 100_000, "kind": "log"}, call_id="call_2"),
        "done",
    ]
    config = flood_servers(tmp_path)
    started = time.perf_counter()
    with ScriptedEndpoint(script) as endpoint:
        result = run_cli(
            "--endpoint", endpoint.url, "scripted", "--mcp-config", str(config), "-p", "flood me", "--yes",
            cwd=tmp_path, dirs=isolated_user_dirs,
        )  # fmt: skip
    took = time.perf_counter() - started
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == "done\n"
    lines = result.stderr.splitlines()
    progress = [line for line in lines if line.startswith("  ⋯ burst ")]
    warnings = [line for line in lines if line.startswith("flood: warning [flood]: log ")]
    assert progress[-1] == "  ⋯ burst 100000/100000 tick 100000"
    assert len(progress) <= took * FRAMES_PER_SECOND + 2, f"{len(progress)} progress lines in {took:.0f} s"
    assert "sent 100000 progress notifications" in result.stderr and "sent 100000 log notifications" in result.stderr
    assert warnings[0] == "flood: warning [flood]: log 1"
    assert len(warnings) <= BURST_LINES + took * LINES_PER_SECOND, f"{len(warnings)} warnings in {took:.0f} s"
    held_back = [line for line in lines if "not printed (more than 20 a second)" in line]
    assert held_back and all(line.startswith("flood: ") for line in held_back)
    counted = sum(int(line.split()[1].replace(",", "")) for line in held_back)
    assert counted + len(warnings) == 100_000


async def test_the_app_ends_a_call_of_100000_progress_with_its_result_and_draws_a_few_of_them(monkeypatch):
    updates = []
    progressed = CallStore.progressed

    def counted(store, event):
        updates.append(event.progress)
        progressed(store, event)

    monkeypatch.setattr(CallStore, "progressed", counted)
    engine = ScriptedEngine([[call("burst", {"count": 100_000})], "done"])
    app = make_app(engine, [flood_config(timeout=300)], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        started = time.perf_counter()
        await send(pilot, "flood me")
        await wait_turn_done(pilot, app, timeout=300)
        took = time.perf_counter() - started
        [record] = app.calls_table.records.values()
        assert record.state is CallState.DONE, record.content_for_model
        assert record.progress is not None and record.progress.describe() == "100000/100000 tick 100000"
    assert updates[-1] == record.progress
    assert len(updates) <= took * FRAMES_PER_SECOND + 2, f"{len(updates)} progress updates drawn in {took:.1f} s"


def test_sigterm_while_a_large_result_arrives_ends_p_at_once(tmp_path, isolated_user_dirs):
    """150 MB written over 15 s; the signal comes with 60 MB written (and about as much read)."""
    config = flood_servers(tmp_path)
    script = [tool_reply("trickle", {"megabytes": 150, "seconds": 15}), "done"]
    with ScriptedEndpoint(script) as endpoint:
        run = OneShot(tmp_path, isolated_user_dirs, endpoint.url, "--mcp-config", str(config), "--yes", "-p", "go")
        try:
            written = tmp_path / "trickled.txt"
            assert wait_until(lambda: written.exists() and int(written.read_text() or 0) >= 60_000_000, 90), "".join(
                run.lines
            )[-2000:]
            assert run.process.poll() is None, "".join(run.lines)[-2000:]
            took = run.stop_and_time("SIGTERM")
        finally:
            if run.process.poll() is None:
                run.process.kill()
                run.process.wait(10)
    assert run.process.returncode == 143, "".join(run.lines)[-2000:]
    assert took < ALLOWED, f"SIGTERM took {took:.2f} s to end -p"
    assert "Traceback" not in "".join(run.lines)
    assert wait_until(lambda: not pids_running_in(tmp_path), 5), "a server outlived the run"
