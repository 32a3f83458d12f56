"""A tiny MCP server speaking raw JSON-RPC on stdio (no SDK: it must write what the SDK never would).
Its one tool, ``broken``, answers with a line whose JSON holds a lone surrogate escape
(``\\udce9``), which the client's validation refuses: the answer never arrives as one.
With ``--malformed-initialize`` its answer to ``initialize`` has no ``serverInfo`` and its
capabilities are a list."""

import json
import sys

PROTOCOL = "2025-11-25"
TOOL = {
    "name": "broken",
    "description": "Answers with a line the client cannot read",
    "inputSchema": {"type": "object"},
}


def answer(request_id, result) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize" and "--malformed-initialize" in sys.argv:
            version = message["params"].get("protocolVersion", PROTOCOL)
            answer(request_id, {"protocolVersion": version, "capabilities": ["tools"]})
        elif method == "initialize":
            version = message["params"].get("protocolVersion", PROTOCOL)
            answer(
                request_id,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bad-json", "version": "1.0"},
                },
            )
        elif method == "tools/list":
            answer(request_id, {"tools": [TOOL]})
        elif method == "tools/call":
            text = '{"type": "text", "text": "caf\\udce9"}'
            sys.stdout.write(
                f'{{"jsonrpc": "2.0", "id": {json.dumps(request_id)}, "result": {{"content": [{text}]}}}}\n'
            )
            sys.stdout.flush()
        else:
            sys.stdout.write(
                json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no {method}"}})
                + "\n"
            )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
