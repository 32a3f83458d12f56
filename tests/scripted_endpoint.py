"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for running the real CLI
behind ``--endpoint`` with exact replies (tool calls included) and no model.

    with ScriptedEndpoint([tool_reply("calculator", {"expression": "12 * 7"}), "12 * 7 = 84."]) as endpoint:
        run the CLI with --endpoint endpoint.url
        endpoint.requests  # the JSON bodies the client sent to /chat/completions, in order

Each POST to ``/v1/chat/completions`` takes the next reply of the script: a string (the
answer), a dict ``{"content": ..., "tool_calls": [{"name", "arguments", "id"?}], "usage"?}``,
or ``failure(status, body)``. Replies are streamed as server-sent events when the request
asks for ``"stream": true`` (content in word pieces, each tool call's arguments in two
pieces, the finish reason, a usage chunk when ``stream_options.include_usage``, then
``[DONE]``), and sent as one JSON object otherwise. ``GET /v1/models`` lists the model.
A request past the end of the script is answered with HTTP 500, so a test that expected
fewer requests fails loudly. Runs on a thread of the test process; ``python
tests/scripted_endpoint.py SCRIPT.json`` serves a JSON list of replies by hand.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_ID = "scripted"
DEFAULT_PROMPT_TOKENS = 40


@dataclass(frozen=True)
class Failure:
    """A reply that is an HTTP error instead of a completion."""

    status: int
    body: str


def failure(status: int, body: str = '{"error": {"message": "scripted failure"}}') -> Failure:
    return Failure(status, body)


def tool_reply(name: str, arguments: dict | str, *, content: str = "", call_id: str = "call_1") -> dict:
    """A reply that proposes one tool call (after ``content``, if any)."""
    return {"content": content, "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def _normalise(reply: str | dict) -> dict:
    if isinstance(reply, str):
        return {"content": reply, "tool_calls": []}
    return {
        "content": reply.get("content") or "",
        "tool_calls": reply.get("tool_calls") or [],
        "usage": reply.get("usage"),
    }


def _wire_calls(reply: dict) -> list[dict]:
    return [
        {
            "id": call.get("id") or f"call_{index + 1}",
            "type": "function",
            "function": {"name": call["name"], "arguments": _arguments_text(call["arguments"])},
        }
        for index, call in enumerate(reply["tool_calls"])
    ]


def _arguments_text(arguments: dict | str) -> str:
    """A call's arguments as the wire carries them: an object as JSON, a string as it is (text that
    need not be JSON, for a model that writes broken arguments)."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _usage(reply: dict, pieces: int) -> dict:
    usage = reply.get("usage") or {}
    prompt = usage.get("prompt_tokens", DEFAULT_PROMPT_TOKENS)
    completion = usage.get("completion_tokens", pieces)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def stream_chunks(reply: dict, include_usage: bool) -> list[dict]:
    """The SSE chunks of one reply, in the order an OpenAI-compatible server sends them."""

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "model": MODEL_ID,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    words = reply["content"].split(" ")
    content_pieces = [word + " " for word in words[:-1]] + [words[-1]] if reply["content"] else []
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in content_pieces if piece]
    for index, call in enumerate(_wire_calls(reply)):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        for part in (arguments[:half], arguments[half:]):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
    chunks.append(chunk({}, "tool_calls" if reply["tool_calls"] else "stop"))
    if include_usage:
        pieces = len(content_pieces) + 3 * len(reply["tool_calls"])
        chunks.append(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "model": MODEL_ID,
                "choices": [],
                "usage": _usage(reply, pieces),
            }
        )
    return chunks


def whole_completion(reply: dict) -> dict:
    """One reply as a non-streaming ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply["content"] or None}
    if reply["tool_calls"]:
        message["tool_calls"] = _wire_calls(reply)
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply["tool_calls"] else "stop"}],
        "usage": _usage(reply, len(reply["content"].split()) + 3 * len(reply["tool_calls"])),
    }


class ScriptedEndpoint:
    """The server; a context manager that starts it on a free port and stops it on the way out."""

    def __init__(self, script: list[str | dict | Failure], *, models: list[str] | None = None) -> None:
        self.script = list(script)
        self.models = models or [MODEL_ID]  # what GET /v1/models lists
        self.requests: list[dict] = []
        self.authorizations: list[str] = []  # each request's Authorization header ("" when none)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """What to pass to ``--endpoint``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def next_reply(self, body: dict) -> str | dict | Failure:
        with self._lock:
            self.requests.append(body)
            if len(self.requests) > len(self.script):
                return failure(500, '{"error": {"message": "the script has no more replies"}}')
            return self.script[len(self.requests) - 1]

    def __enter__(self) -> ScriptedEndpoint:
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-endpoint", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    listed = [{"id": model_id, "object": "model"} for model_id in endpoint.models]
                    self._send_json(200, {"object": "list", "data": listed})
                else:
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                endpoint.authorizations.append(self.headers.get("Authorization") or "")
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = endpoint.next_reply(body)
                if isinstance(reply, Failure):
                    self._send_raw(reply.status, reply.body.encode(), "application/json")
                elif body.get("stream"):
                    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                    self._send_events(stream_chunks(_normalise(reply), include_usage))
                else:
                    self._send_json(200, whole_completion(_normalise(reply)))

            def _send_events(self, chunks: list[dict]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _send_json(self, status: int, payload: dict) -> None:
                self._send_raw(status, json.dumps(payload).encode(), "application/json")

            def _send_raw(self, status: int, data: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def main(script_file: str) -> None:
    with open(script_file, encoding="utf-8") as handle:
        script = [
            failure(r["status"], r.get("body", "")) if isinstance(r, dict) and "status" in r else r
            for r in json.load(handle)
        ]
    with ScriptedEndpoint(script) as endpoint:
        print(endpoint.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1])
