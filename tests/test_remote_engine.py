"""OpenAIEngine against a real mlx_lm.server subprocess, and against a scripted SSE server for tool-call deltas."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mcp_chat_tui.engine import Engine
from mcp_chat_tui.engine.events import (
    Done,
    EngineError,
    LoadProgress,
    Stats,
    TextDelta,
    ThinkingDelta,
    ToolCallMalformed,
    ToolCallProposed,
)
from mcp_chat_tui.engine.remote import OpenAIEngine
from tests.helpers import free_port, mlx_lm_server
from tests.models import tool_schemas

QUESTION = [{"role": "user", "content": "What is the time in Tokyo?"}]
TRANSPORTS = ["httpx", "urllib"]


@pytest.fixture(scope="module")
def mlx_server(tiny_model, tmp_path_factory):
    """A real ``mlx_lm.server`` serving the tiny model."""
    with mlx_lm_server(tiny_model, tmp_path_factory.mktemp("server") / "server.log") as url:
        yield url


async def collect(stream):
    return [event async for event in stream]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_streams_a_reply_from_mlx_lm_server(mlx_server, tiny_model, transport):
    from mlx_lm.generate import stream_generate
    from mlx_lm.utils import load

    engine = OpenAIEngine(mlx_server, str(tiny_model), max_tokens=8, transport=transport)
    assert isinstance(engine, Engine)
    progress: list[LoadProgress] = []
    await engine.load(progress.append)
    assert progress[-1].stage == "ready"
    events = await collect(engine.stream(QUESTION, tool_schemas()))
    await engine.close()

    model, tokenizer = load(str(tiny_model))
    prompt = tokenizer.apply_chat_template(QUESTION, tools=tool_schemas(), add_generation_prompt=True)
    expected = "".join(r.text for r in stream_generate(model, tokenizer, prompt, max_tokens=8))
    assert sum(isinstance(e, TextDelta) for e in events) >= 2
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == expected
    stats, done = events[-2:]
    assert isinstance(stats, Stats) and stats.prompt_tokens == len(prompt) and stats.generated_tokens == 8
    assert done == Done("length")


async def test_breaking_out_then_asking_again(mlx_server, tiny_model):
    engine = OpenAIEngine(mlx_server, str(tiny_model), max_tokens=2000)
    async for event in engine.stream(QUESTION):
        assert isinstance(event, TextDelta)
        break
    engine.max_tokens = 3
    events = await collect(engine.stream(QUESTION))
    assert events[-1] == Done("length")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_nothing_listening_is_a_clear_error(transport):
    endpoint = f"http://127.0.0.1:{free_port()}/v1"
    engine = OpenAIEngine(endpoint, "m", transport=transport)
    with pytest.raises(EngineError) as info:
        await engine.load()
    assert endpoint in str(info.value) and "Check that the server is running" in str(info.value)
    with pytest.raises(EngineError, match="cannot reach the model server at " + endpoint):
        await collect(engine.stream(QUESTION))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_wrong_path_names_what_to_check(mlx_server, transport):
    endpoint = mlx_server.replace("/v1", "/v2")
    engine = OpenAIEngine(endpoint, "m", transport=transport)
    with pytest.raises(EngineError, match=r"HTTP 404: check the endpoint URL \(it usually ends in /v1\)"):
        await collect(engine.stream(QUESTION))


# -- a scripted server for what a random model never produces: tool-call deltas --------------


class _Scripted(BaseHTTPRequestHandler):
    chunks: list = []
    status = 200
    seen: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((body, self.headers.get("Authorization")))
        if self.status != 200:
            self.send_response(self.status)
            self.end_headers()
            self.wfile.write(b'{"error": "bad key"}')
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for chunk in self.chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Scripted.seen = []
    _Scripted.status = 200
    yield _Scripted, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _delta(**delta):
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tool_call_deltas_are_joined_by_index_and_checked(scripted, transport, monkeypatch):
    handler, endpoint = scripted
    handler.chunks = [
        _delta(reasoning_content="thinking about it"),
        _delta(content="Checking. "),
        _delta(tool_calls=[{"index": 0, "id": "abc", "type": "function", "function": {"name": "calculator", "arguments": ""}}]),
        _delta(tool_calls=[{"index": 0, "function": {"arguments": '{"expression": '}}]),
        _delta(tool_calls=[{"index": 1, "id": "def", "function": {"name": "rm", "arguments": "{}"}}]),
        _delta(tool_calls=[{"index": 0, "function": {"arguments": '"12 * 7"}'}}]),
        _delta(tool_calls=[{"index": 2, "function": {"name": "current_time", "arguments": "[1]"}}]),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 9,
                                  "prompt_tokens_details": {"cached_tokens": 30}}},
    ]
    monkeypatch.setenv("MY_KEY", "sekrit")
    engine = OpenAIEngine(endpoint, "m", api_key_env="MY_KEY", transport=transport)
    messages = QUESTION + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "calculator", "arguments": {"expression": "1"}}}]},
        {"role": "tool", "tool_call_id": "x", "name": "calculator", "content": "1"},
    ]
    events = await collect(engine.stream(messages, tool_schemas()))
    assert events[:2] == [ThinkingDelta("thinking about it"), TextDelta("Checking. ")]
    calls = [e for e in events if isinstance(e, (ToolCallProposed, ToolCallMalformed))]
    assert calls[0] == ToolCallProposed("abc", "calculator", {"expression": "12 * 7"})
    assert isinstance(calls[1], ToolCallMalformed) and calls[1].id == "def" and calls[1].reason == "unknown tool 'rm'"
    assert isinstance(calls[2], ToolCallMalformed) and calls[2].id == "call_1" and "got a list" in calls[2].reason
    stats = events[-2]
    assert (stats.prompt_tokens, stats.prefilled_tokens, stats.generated_tokens) == (50, 20, 9)
    assert events[-1] == Done("tool_calls")
    body, auth = handler.seen[0]
    assert auth == "Bearer sekrit" and body["stream"] is True and body["tools"] == tool_schemas()
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"expression": "1"}'


async def test_tool_call_as_plain_text_content_is_recognised(scripted):
    handler, endpoint = scripted
    text = '<tool_use><tool>calculator</tool><arguments>{"expression": "2+2"}</arguments></tool_use>'
    handler.chunks = [_delta(content=text[i:i + 7]) for i in range(0, len(text), 7)]
    handler.chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "end_turn"}]})
    events = await collect(OpenAIEngine(endpoint, "m").stream(QUESTION, tool_schemas()))
    assert [e for e in events if isinstance(e, TextDelta)] == []
    assert ToolCallProposed("call_1", "calculator", {"expression": "2+2"}) in events
    assert events[-1] == Done("tool_calls")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_rejected_key_names_the_variable(scripted, transport):
    handler, endpoint = scripted
    handler.status = 401
    engine = OpenAIEngine(endpoint, "m", api_key_env="SOME_KEY", transport=transport)
    with pytest.raises(EngineError, match="HTTP 401: check the API key in the environment variable SOME_KEY"):
        await collect(engine.stream(QUESTION))
