"""A stdio server that starts the ways real ones do, for the tests of starting (servers/starting.py).

``--progress S`` prints a progress line to stderr every 0.2 s for S seconds (as ``npx -y`` does while it
downloads), then serves; ``--busy S`` uses the CPU for S seconds without a word, then serves;
``--silent`` never says anything (a hung server); ``--exit N`` says why on stderr and exits with code N
(``--exit-quietly N``: without a word; ``--exit-unless PATH``: code 3 while PATH does not exist;
``--orphan``: leaving a child that holds its stdout open for 5 s, so that the client hears of the exit
late, as on a loaded machine); ``--noise`` prints text that is not MCP on stdout, then waits.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def serve() -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name="starting", version="1.0", log_level="WARNING")

    @server.tool(structured_output=False)
    def ping() -> str:
        """Answer pong."""
        return "pong"

    server.run("stdio")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--progress", type=float, default=0.0)
    parser.add_argument("--busy", type=float, default=0.0)
    parser.add_argument("--silent", action="store_true")
    parser.add_argument("--exit", type=int, default=None)
    parser.add_argument("--exit-quietly", type=int, default=None)
    parser.add_argument("--exit-unless", default=None)
    parser.add_argument("--noise", action="store_true")
    parser.add_argument("--orphan", action="store_true")
    args = parser.parse_args()
    if args.exit_unless is not None and not os.path.exists(args.exit_unless):
        args.exit = 3
    if args.exit is not None:
        print("starting: cannot read settings.json", file=sys.stderr, flush=True)
        if args.orphan:
            subprocess.Popen(["sleep", "5"])  # inherits stdout: the connection stays open
        sys.exit(args.exit)
    if args.exit_quietly is not None:
        sys.exit(args.exit_quietly)
    if args.silent:
        time.sleep(600)
    if args.noise:
        print("Welcome to the starting server v1.0!", flush=True)
        time.sleep(600)
    end = time.monotonic() + args.progress
    step = 0
    while time.monotonic() < end:
        step += 1
        print(f"npm http fetch GET 200 https://registry.example/pkg-{step}.tgz", file=sys.stderr, flush=True)
        time.sleep(0.2)
    end = time.monotonic() + args.busy
    while time.monotonic() < end:
        sum(range(10_000))
    serve()


if __name__ == "__main__":
    main()
