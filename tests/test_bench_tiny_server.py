"""bench/tiny_server.py's ``big``, which bench/mcp_overhead.py times results with: a call after the
first of its size writes the kept answer, whole and with the call's id, and costs the server no
fresh memory (counted in page faults, not timed). When the server joined the answer into a new
line for each call, each 40 MB call faulted in about 30,000 fresh pages, and from 32 MB on that
work per MB doubled: the bench's 10 MB / 80 MB ratio measured the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TINY = Path(__file__).resolve().parent.parent / "bench" / "tiny_server.py"
MEGABYTES = 40

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="page faults are read from /proc")


def minor_faults(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[7])  # minflt: the 10th field of stat, the 8th after the command's name


def call_big(server: subprocess.Popen[bytes], call_id: int) -> dict:
    assert server.stdin is not None and server.stdout is not None
    request = {"jsonrpc": "2.0", "id": call_id, "method": "tools/call"}
    request["params"] = {"name": "big", "arguments": {"megabytes": MEGABYTES}}
    server.stdin.write(json.dumps(request).encode() + b"\n")
    server.stdin.flush()
    line = server.stdout.readline()
    assert line.endswith(b"\n")
    answer: dict = json.loads(line)
    return answer


def test_a_second_big_answer_of_the_same_size_is_written_as_kept():
    server = subprocess.Popen([sys.executable, str(TINY)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        call_big(server, 1)  # builds the answer and keeps it
        before = minor_faults(server.pid)
        answer = call_big(server, 2)
        faults = minor_faults(server.pid) - before
        assert answer["id"] == 2 and answer["jsonrpc"] == "2.0"
        assert len(answer["result"]["content"][0]["text"]) == MEGABYTES * 1_000_000
        pages = MEGABYTES * 1_000_000 // os.sysconf("SC_PAGE_SIZE")
        assert faults < pages // 10, f"the server faulted in {faults} pages for an answer of {pages} pages"
    finally:
        server.kill()
        server.wait()
