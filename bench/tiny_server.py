"""A minimal MCP server on the standard library alone, for the start-up and result benchmarks.

Start-up benchmarks measure how the hub overlaps servers that are slow to
start; a server built on the SDK spends most of its start importing it, which
on a 2-core machine measures the CPU instead. This one answers the handshake
era protocol (initialize, tools/list, tools/call, ping) after sleeping
``--delay`` seconds, and costs almost no CPU. Its ``big`` tool answers with a text of
``megabytes`` million characters, written as fast as the pipe takes it: the answer is built once
for each size and kept (the last one), and written from where it is kept, so a call after the
first of its size measures the pipe and the client's reading, not the building.
"""

import json
import sys
import time


def reply(message_id, result=None, error=None):
    payload = {"jsonrpc": "2.0", "id": message_id}
    if error is not None:
        payload["error"] = error
    else:
        payload["result"] = result
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


BIG_PATTERN = "0123456789abcdef"
_built: dict[int, bytes] = {}  # size -> the answer's line without its id


def reply_big(message_id, size: int) -> None:
    """The answer of ``big`` for ``size`` characters, built once and kept (the last size only)."""
    if size not in _built:
        _built.clear()
        result = {"content": [{"type": "text", "text": BIG_PATTERN * (size // len(BIG_PATTERN))}], "isError": False}
        _built[size] = json.dumps({"jsonrpc": "2.0", "result": result}).encode()
    body = _built[size]
    sys.stdout.flush()
    # Written as kept, not joined into a new line first: a copy of 80 MB is fresh memory each time
    # (glibc maps it anew), which cost this server twice as much per MB at 80 MB as at 10 MB.
    out = sys.stdout.buffer
    out.write(b'{"id": ' + json.dumps(message_id).encode() + b", ")
    out.write(memoryview(body)[1:])
    out.write(b"\n")
    out.flush()


def main():
    delay = float(sys.argv[sys.argv.index("--delay") + 1]) if "--delay" in sys.argv else 0.0
    time.sleep(delay)
    tool = {
        "name": "echo",
        "description": "Echo the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
    big = {
        "name": "big",
        "description": "A text of `megabytes` million characters.",
        "inputSchema": {"type": "object", "properties": {"megabytes": {"type": "number"}}},
    }
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue
        if method == "initialize":
            version = message["params"].get("protocolVersion", "2025-06-18")
            reply(
                message_id,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "tiny", "version": "1"},
                },
            )
        elif method == "tools/list":
            reply(message_id, {"tools": [tool, big]})
        elif method == "tools/call" and message["params"].get("name") == "big":
            reply_big(message_id, int(float(message["params"].get("arguments", {}).get("megabytes", 1)) * 1_000_000))
        elif method == "tools/call":
            text = message["params"].get("arguments", {}).get("text", "")
            reply(message_id, {"content": [{"type": "text", "text": text}], "isError": False})
        elif method == "ping":
            reply(message_id, {})
        else:
            reply(message_id, error={"code": -32601, "message": f"method not found: {method}"})


if __name__ == "__main__":
    main()
