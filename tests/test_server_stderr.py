"""A server's stderr, however much and however bad, stays bounded: the log file starts again at
1 MiB keeping one previous file, the in-memory tail keeps the newest lines, a line without end is
cut, bytes that are not UTF-8 show as U+FFFD. Real server processes, the real hub."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import pytest

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.servers import ServerHub, ServerState
from mcp_chat_tui.servers.state import STDERR_TAIL_LINES
from mcp_chat_tui.servers.stderr import LOG_FILE_MAX_BYTES, MAX_LINE_CHARS
from tests.helpers import eventually, new_marker, pids_with

PROCESS_SERVER = str(Path(__file__).parent / "servers" / "process_server.py")


def noisy_config(name: str, marker: str) -> ServerConfig:
    return ServerConfig(name=name, type="stdio", command=sys.executable, args=[PROCESS_SERVER, "--marker", marker])


@pytest.fixture
def marker():
    """A tag for this test's processes; none may be left when it ends."""
    value = new_marker()
    yield value
    assert not pids_with(value), "a server process outlived the test"


async def test_a_5_mb_flood_rotates_the_log_at_1_mib_and_keeps_the_newest_lines(tmp_path, marker):
    hub = ServerHub([noisy_config("noisy", marker)], log_dir=tmp_path)
    async with hub:
        await hub.start_all()
        result = await hub.call_tool("noisy", "flood", {"total_bytes": 5_000_000})
        assert result.ok, result.text
        status = hub.status("noisy")
        assert await eventually(lambda: status.stderr_tail and status.stderr_tail[-1] == "flood end", 10)
        assert len(status.stderr_tail) == STDERR_TAIL_LINES
        assert status.stderr_tail[-2].startswith("flood 0049999 ")
    log, previous = tmp_path / "noisy.log", tmp_path / "noisy.log.1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["noisy.log", "noisy.log.1"]
    assert LOG_FILE_MAX_BYTES == 1024 * 1024  # the size the README states
    assert 0 < log.stat().st_size <= LOG_FILE_MAX_BYTES
    assert LOG_FILE_MAX_BYTES - 200 < previous.stat().st_size <= LOG_FILE_MAX_BYTES
    newest, before = log.read_text().splitlines(), previous.read_text().splitlines()
    assert newest[-1] == "flood end"
    assert int(before[-1].split()[1]) + 1 == int(newest[0].split()[1]), "lines lost between the two files"


async def test_a_50_mb_line_without_newline_is_cut_in_bounded_memory(tmp_path, marker):
    hub = ServerHub([noisy_config("long", marker)], log_dir=tmp_path)
    async with hub:
        await hub.start_all()
        tracemalloc.start()
        try:
            result = await hub.call_tool("long", "long_line", {"total_bytes": 50_000_000})
            status = hub.status("long")
            assert await eventually(lambda: "after the long line" in status.stderr_tail, 20)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert result.ok, result.text
        assert peak < 4_000_000, f"reading one long line took {peak:,} bytes"
        long_lines = [line for line in status.stderr_tail if line.startswith("long:")]
        assert len(long_lines) == 1
        assert long_lines[0] == "long:" + "y" * (MAX_LINE_CHARS - 5) + " … [line cut: it had 50,000,005 bytes]"
        assert hub.status("long").state == ServerState.READY
    log_text = (tmp_path / "long.log").read_text()
    assert log_text.count("long:") == 1 and log_text.endswith("after the long line\n")
    assert (tmp_path / "long.log").stat().st_size < 10_000


async def test_bytes_that_are_not_utf8_show_as_replacement_characters(tmp_path, marker):
    hub = ServerHub([noisy_config("bad", marker)], log_dir=tmp_path)
    async with hub:
        await hub.start_all()
        assert (await hub.call_tool("bad", "bad_bytes")).ok
        status = hub.status("bad")
        assert await eventually(lambda: "clean line" in status.stderr_tail, 10)
        shown = list(status.stderr_tail)[-3:]
        assert shown == ["bad \ufffd\ufffd bytes \ufffd", "\ufffd alone", "clean line"]
        assert (await hub.call_tool("bad", "pids")).ok, "the server stopped being usable"
        await hub.call_tool("bad", "flood", {"total_bytes": 1000})
        assert await eventually(lambda: status.stderr_tail[-1] == "flood end", 10), "the reader stopped"
    assert "bad \ufffd\ufffd bytes \ufffd\n\ufffd alone\nclean line\n" in (tmp_path / "bad.log").read_text()
