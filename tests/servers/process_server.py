"""An MCP stdio server, written with the SDK, for the tests of server processes and their stderr.

``--stubborn`` makes it ignore SIGTERM and keep running after its stdin closes; ``--child plain``
or ``--child stubborn`` makes it start a sleeping child (a stubborn one ignores SIGTERM) that holds
its stderr;
``--exit-at-once`` makes it exit before answering anything (after starting the child, if asked).
Its tools write to stderr: a flood of numbered lines, one very long line, bytes that are not UTF-8.
``--marker`` tags the server and its child so tests find them in the process table.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

from mcp.server.mcpserver import MCPServer

CHILD = "import signal, sys, time\nif sys.argv[2] == 'stubborn': signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)"


def build(child_pid: int | None) -> MCPServer:
    server = MCPServer(name="process-server", version="1.0", log_level="WARNING")

    @server.tool(structured_output=False)
    def pids() -> str:
        """The server's process id and its child's (0 without one)."""
        return f"{os.getpid()} {child_pid or 0}"

    @server.tool(structured_output=False)
    def flood(total_bytes: int) -> str:
        """Write numbered 100-byte lines to stderr, ``total_bytes`` in all; the last says 'flood end'."""
        count = total_bytes // 100
        err = sys.stderr.buffer
        for start in range(0, count, 1000):
            err.write(b"".join(b"flood %07d " % i + b"x" * 86 + b"\n" for i in range(start, min(count, start + 1000))))
        err.write(b"flood end\n")
        err.flush()
        return f"{count} lines"

    @server.tool(structured_output=False)
    def long_line(total_bytes: int) -> str:
        """Write one line of ``total_bytes`` bytes (no newline until the end), then a short one."""
        err = sys.stderr.buffer
        err.write(b"long:")
        block = b"y" * 1_000_000
        for _ in range(total_bytes // len(block)):
            err.write(block)
        err.write(b"\nafter the long line\n")
        err.flush()
        return "written"

    @server.tool(structured_output=False)
    def bad_bytes() -> str:
        """Write bytes that are not UTF-8 on stderr, then a clean line."""
        sys.stderr.buffer.write(b"bad \xff\xfe bytes \xe2\x82\n\xc3 alone\nclean line\n")
        sys.stderr.buffer.flush()
        return "written"

    return server


def start_child(marker: str, kind: str) -> int:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, marker, kind], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    return child.pid


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--marker", default="")
    parser.add_argument("--stubborn", action="store_true")
    parser.add_argument("--child", choices=["plain", "stubborn"])
    parser.add_argument("--exit-at-once", action="store_true")
    args = parser.parse_args()
    if args.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child_pid = start_child(args.marker, args.child) if args.child else None
    if args.exit_at_once:
        print("process server: exiting at once", file=sys.stderr, flush=True)
        os._exit(1)
    try:
        build(child_pid).run("stdio")
    except BaseException:  # noqa: BLE001 - a broken stdout once the client is gone
        if not args.stubborn:
            raise
    while args.stubborn:  # stdin closed: a stubborn server stays anyway
        time.sleep(600)
    os._exit(0)  # at once, as a server that ends on its stdin closing should (its child runs on)


if __name__ == "__main__":
    main()
