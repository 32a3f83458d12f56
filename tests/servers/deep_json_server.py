"""A tiny MCP server speaking raw JSON-RPC on stdio (no SDK: it must write what the SDK never
would): JSON nested deeper than any parser of the client takes, in an answer, a notification, a
tool's schema, or a line on stdout that is not a message at all.

Tools (``depth`` is how deep; 100,000 by default):
- ``deep_result``: answers with structured content nested ``depth`` deep;
- ``deep_log``: sends a log message whose data is nested ``depth`` deep, then answers "logged";
- ``deep_noise``: writes a line of ``depth`` brackets (not a message), then answers "noisy";
- ``shaped``: answers with structured content nested ``depth`` deep that its output schema,
  nested as deep, describes (for depths a parser takes: what the client does with it after);
- ``echo``: answers with its ``text``.

``--shape-depth DEPTH`` sets how deep ``shaped`` nests (190 by default: as deep as a parser takes);
``--deep-schema DEPTH`` adds a tool whose input schema is nested DEPTH deep to the tool list;
``--noise-first`` writes a deep line before anything else.
"""

import argparse
import json
import sys

PROTOCOL = "2025-11-25"
DEEP = 100_000


def nested(depth: int, leaf: object = 1) -> str:
    """JSON text of ``leaf`` inside ``depth`` arrays (built as text: Python's JSON would recurse)."""
    return "[" * depth + json.dumps(leaf) + "]" * depth


def nested_schema(depth: int) -> str:
    """A JSON schema for ``nested(depth)``: arrays of arrays ... of integers."""
    return '{"type": "array", "items": ' * depth + '{"type": "integer"}' + "}" * depth


def write(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def answer(request_id, result: dict) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


def answer_raw(request_id, result_json: str) -> None:
    write(f'{{"jsonrpc": "2.0", "id": {json.dumps(request_id)}, "result": {result_json}}}')


def text_result(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}]}


def tools(deep_schema: int, shape_depth: int) -> str:
    plain = [
        {"name": name, "description": name, "inputSchema": {"type": "object"}}
        for name in ("deep_result", "deep_log", "deep_noise", "echo")
    ]
    listed = ", ".join(json.dumps(tool) for tool in plain)
    shape = nested_schema(shape_depth)
    listed += (
        ', {"name": "shaped", "description": "shaped", "inputSchema": {"type": "object"}, '
        f'"outputSchema": {{"type": "object", "properties": {{"value": {shape}}}}}}}'
    )
    if deep_schema:
        properties = '{"value": ' * deep_schema + '{"type": "string"}' + "}" * deep_schema
        listed += f', {{"name": "deep_schema", "inputSchema": {{"type": "object", "properties": {properties}}}}}'
    return f'{{"tools": [{listed}]}}'


def call(request_id, name: str, arguments: dict, shape_depth: int) -> None:
    depth = int(arguments.get("depth", DEEP))
    if name == "deep_result":
        answer_raw(request_id, f'{{"content": [], "structuredContent": {{"value": {nested(depth)}}}}}')
    elif name == "deep_log":
        params = f'{{"level": "warning", "logger": "deep", "data": {nested(depth)}}}'
        write(f'{{"jsonrpc": "2.0", "method": "notifications/message", "params": {params}}}')
        answer(request_id, text_result("logged"))
    elif name == "deep_noise":
        write(nested(depth))
        answer(request_id, text_result("noisy"))
    elif name == "shaped":
        content = '[{"type": "text", "text": "shaped"}]'
        answer_raw(request_id, f'{{"content": {content}, "structuredContent": {{"value": {nested(shape_depth)}}}}}')
    else:
        answer(request_id, text_result(str(arguments.get("text", ""))))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deep-schema", type=int, default=0)
    parser.add_argument("--noise-first", action="store_true")
    parser.add_argument("--shape-depth", type=int, default=190)
    args = parser.parse_args()
    if args.noise_first:
        write(nested(DEEP))
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            version = message["params"].get("protocolVersion", PROTOCOL)
            capabilities = {"tools": {}, "logging": {}}
            info = {"name": "deep-json", "version": "1.0"}
            answer(request_id, {"protocolVersion": version, "capabilities": capabilities, "serverInfo": info})
        elif method == "tools/list":
            answer_raw(request_id, tools(args.deep_schema, args.shape_depth))
        elif method == "tools/call":
            call(request_id, message["params"]["name"], message["params"].get("arguments") or {}, args.shape_depth)
        elif method == "logging/setLevel":
            answer(request_id, {})
        else:
            error = {"code": -32601, "message": f"no {method}"}
            write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}))


if __name__ == "__main__":
    main()
