"""No stdio server outlives the app, nor do the children it started: not when the app stops it,
restarts it or ends normally, and not when the app is killed with SIGKILL while a server ignores
SIGTERM and its stdin closing. HTTP servers are not the app's to end. Real server processes, the
real hub, the real app with Pilot, the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.servers import ServerHub, ServerState
from mcp_chat_tui.servers.watchdog import WATCHDOG_PROGRAM, server_watchdog
from tests.fakes import ScriptedEngine
from tests.helpers import FIXTURE_SERVER, eventually, free_port, new_marker, pids_with, start_http_server, wait_until
from tests.test_exit_signals import StalledEndpoint
from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

PROCESS_SERVER = str(Path(__file__).parent / "servers" / "process_server.py")


def process_config(name: str, marker: str, *flags: str) -> ServerConfig:
    return ServerConfig(
        name=name, type="stdio", command=sys.executable, args=[PROCESS_SERVER, "--marker", marker, *flags]
    )


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def kill_all(marker: str) -> None:
    for pid in pids_with(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def marker():
    """A tag for this test's processes: any left a few seconds after the test ends (the watchdog
    gives a child that ignores SIGTERM a second before SIGKILL) fails it, and is killed."""
    value = new_marker()
    yield value
    wait_until(lambda: not pids_with(value), 5)
    left = pids_with(value)
    kill_all(value)
    assert not left, f"processes outlived the test: {left}"


async def server_pids(hub: ServerHub, name: str) -> tuple[int, int]:
    result = await hub.call_tool(name, "pids")
    assert result.ok, result.text
    leader, child = (int(word) for word in result.text.split())
    return leader, child


async def test_two_servers_and_their_children_end_with_the_hub_each_its_own_way(marker):
    """One stubborn server (the SDK escalates to SIGKILL), one that exits as its stdin closes and
    leaves a child that ignores SIGTERM (the SDK stops there; the watchdog ends the child)."""
    hub = ServerHub(
        [
            process_config("stubborn", marker, "--stubborn", "--child", "stubborn"),
            process_config("polite", marker, "--child", "stubborn"),
        ]
    )
    async with hub:
        statuses = await hub.start_all()
        assert [s.state for s in statuses] == [ServerState.READY] * 2, [s.summary() for s in statuses]
        pids = [pid for name in ("stubborn", "polite") for pid in await server_pids(hub, name)]
        assert all(alive(pid) for pid in pids)
        leader, child = await server_pids(hub, "polite")
        assert os.getpgid(child) == leader, "the child runs in its server's process group"
        assert server_watchdog().pid is not None
        started = time.monotonic()
    took = time.monotonic() - started
    assert took < 1.5, f"stopping took {took:.2f} s"
    assert await eventually(lambda: not any(alive(pid) for pid in pids), 5), [p for p in pids if alive(p)]
    assert not server_watchdog().watched_groups & set(pids)


async def test_a_server_that_exits_at_once_leaves_no_child_and_no_watched_group(marker):
    hub = ServerHub([process_config("brief", marker, "--exit-at-once", "--child", "plain")])
    async with hub:
        await hub.start_all()
        status = hub.status("brief")
        assert status.state == ServerState.FAILED
        assert "exiting at once" in status.reason
        assert await eventually(lambda: not pids_with(marker), 5), "the server's child is still running"
    assert server_watchdog().watched_groups == set()


async def test_restarting_from_the_panel_ends_the_old_process_group(marker):
    app = make_app(ScriptedEngine([]), [process_config("proc", marker, "--child", "stubborn")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        old = await server_pids(app.hub, "proc")
        await pilot.press("f4")
        assert app.focused is app.servers_table
        await pilot.press("r")
        await wait_for(
            pilot,
            lambda: app.hub.status("proc").restarts == 1 and app.hub.status("proc").state == ServerState.READY,
            what="restart",
        )
        new = await server_pids(app.hub, "proc")
        await wait_for(pilot, lambda: not any(alive(pid) for pid in old), 5, "the old group to end")
        assert os.getpgid(new[1]) == new[0] and all(alive(pid) for pid in new)


async def test_an_http_server_is_not_the_apps_to_end(marker):
    port = free_port()
    http_process = start_http_server([FIXTURE_SERVER, "--http", str(port), "--marker", marker], port)
    try:
        before = set(server_watchdog().watched_groups)
        hub = ServerHub([ServerConfig(name="web", type="http", url=f"http://127.0.0.1:{port}/mcp")])
        async with hub:
            await hub.start_all()
            assert hub.status("web").state == ServerState.READY
            assert server_watchdog().watched_groups == before
        assert http_process.poll() is None
    finally:
        http_process.kill()
        http_process.wait()


def watchdogs_of(app_pid: int) -> list[int]:
    """Live watchdog processes started by the process ``app_pid``."""
    ending = f"--app-pid\x00{app_pid}\x00".encode()
    found = []
    for pid in pids_with("watchdog_program.py"):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().endswith(ending):
                found.append(pid)
        except OSError:
            pass
    return found


def test_a_killed_app_takes_its_stdio_servers_and_their_children_with_it(tmp_path, marker):
    """SIGKILL: nothing in the app runs any more; two stubborn servers, each with a stubborn child,
    are ended by the watchdog; the HTTP server, which the app did not start, keeps running."""
    port = free_port()
    http_process = start_http_server([FIXTURE_SERVER, "--http", str(port)], port)
    stdio = {"command": sys.executable}
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "servers": {
                    "one": {**stdio, "args": [PROCESS_SERVER, "--marker", marker, "--stubborn", "--child", "stubborn"]},
                    "two": {**stdio, "args": [PROCESS_SERVER, "--marker", marker, "--stubborn", "--child", "stubborn"]},
                    "web": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"},
                }
            }
        )
    )
    try:
        with StalledEndpoint() as endpoint:
            app = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mcp_chat_tui.cli.main",
                    "--endpoint",
                    endpoint.url,
                    "scripted",
                    "--mcp-config",
                    str(config),
                    "-p",
                    "hello",
                ],
                cwd=tmp_path,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                assert wait_until(endpoint.asked.is_set, 60), "the app never asked the model"
                assert len(pids_with(marker)) == 4, "two servers and two children"
                assert len(watchdogs_of(app.pid)) == 1
                app.kill()
                app.wait(10)
            finally:
                if app.poll() is None:
                    app.kill()
                    app.wait(10)
        assert wait_until(lambda: not pids_with(marker), 5), "a server or its child outlived the killed app"
        assert wait_until(lambda: not watchdogs_of(app.pid), 5), "the watchdog outlived its work"
        assert http_process.poll() is None, "the HTTP server, not the app's, was ended"
    finally:
        http_process.kill()
        http_process.wait()


def test_a_watchdog_that_died_is_replaced_and_told_about_every_server(marker):
    """The first watchdog is killed after one server started; the next server's start starts a
    new one, which must also know the first server: SIGKILL of the app then ends both."""
    script = Path(__file__).parent / "apps" / "hub_with_a_new_watchdog.py"
    app = subprocess.Popen(
        [sys.executable, str(script), marker],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert select.select([app.stdout], [], [], 60)[0], "the app never got ready"
        word, old, new = app.stdout.readline().split()
        assert word == "ready" and new != old and watchdogs_of(app.pid) == [int(new)]
        assert len(set(pids_with(marker)) - {app.pid}) == 4, "two servers and two children"
        app.kill()
        app.wait(10)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(10)
    assert wait_until(lambda: not pids_with(marker), 5), "a server outlived the app"


def test_the_watchdog_never_signals_its_own_group_or_group_0():
    """Group 0 means the sender's own group to killpg: a line naming it, or the watchdog's own
    group, is ignored, and the watchdog ends normally at end of file."""
    read_fd, write_fd = os.pipe()
    watchdog = subprocess.Popen(
        [sys.executable, "-I", "-S", str(WATCHDOG_PROGRAM), str(read_fd)],
        pass_fds=(read_fd,),
        start_new_session=True,
        stderr=subprocess.PIPE,
    )
    os.close(read_fd)
    try:
        os.write(write_fd, b"+0\n-0\nnot a line\n-\n+12x\n-%d\n+%d\n" % (watchdog.pid, watchdog.pid))
    finally:
        os.close(write_fd)
    assert watchdog.wait(10) == 0, watchdog.stderr.read()
    watchdog.stderr.close()
