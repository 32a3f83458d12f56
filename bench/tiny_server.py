"""A minimal MCP server on the standard library alone, for the start-up benchmark.

Start-up benchmarks measure how the hub overlaps servers that are slow to
start; a server built on the SDK spends most of its start importing it, which
on a 2-core machine measures the CPU instead. This one answers the handshake
era protocol (initialize, tools/list, tools/call, ping) after sleeping
``--delay`` seconds, and costs almost no CPU.
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


def main():
    delay = float(sys.argv[sys.argv.index("--delay") + 1]) if "--delay" in sys.argv else 0.0
    time.sleep(delay)
    tool = {
        "name": "echo",
        "description": "Echo the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
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
            reply(message_id, {"tools": [tool]})
        elif method == "tools/call":
            text = message["params"].get("arguments", {}).get("text", "")
            reply(message_id, {"content": [{"type": "text", "text": text}], "isError": False})
        elif method == "ping":
            reply(message_id, {})
        else:
            reply(message_id, error={"code": -32601, "message": f"method not found: {method}"})


if __name__ == "__main__":
    main()
