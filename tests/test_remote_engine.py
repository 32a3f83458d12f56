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
from tests.scripted_endpoint import ScriptedEndpoint, failure

QUESTION = [{"role": "user", "content": "What is the time in Tokyo?"}]


@pytest.fixture(scope="module")
def mlx_server(tiny_model, tmp_path_factory):
    """A real ``mlx_lm.server`` serving the tiny model."""
    with mlx_lm_server(tiny_model, tmp_path_factory.mktemp("server") / "server.log") as url:
        yield url


async def collect(stream):
    return [event async for event in stream]


async def test_streams_a_reply_from_mlx_lm_server(mlx_server, tiny_model):
    from mlx_lm.generate import stream_generate
    from mlx_lm.utils import load

    engine = OpenAIEngine(mlx_server, str(tiny_model), max_tokens=8)
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


async def test_nothing_listening_is_a_clear_error():
    endpoint = f"http://127.0.0.1:{free_port()}/v1"
    engine = OpenAIEngine(endpoint, "m")
    with pytest.raises(EngineError) as info:
        await engine.load()
    assert endpoint in str(info.value) and "Check that the server is running" in str(info.value)
    with pytest.raises(EngineError, match="cannot reach the model server at " + endpoint):
        await collect(engine.stream(QUESTION))


async def test_wrong_path_names_what_to_check(mlx_server):
    endpoint = mlx_server.replace("/v1", "/v2")
    engine = OpenAIEngine(endpoint, "m")
    with pytest.raises(EngineError, match=r"HTTP 404: check the endpoint URL \(it usually ends in /v1\)"):
        await collect(engine.stream(QUESTION))


# -- a scripted server for what a random model never produces: tool-call deltas --------------


class _Scripted(BaseHTTPRequestHandler):
    chunks: list = []  # each a dict (sent as JSON) or bytes (sent as they are, for broken data)
    ending = b"data: [DONE]\n\n"
    content_type = "text/event-stream"
    status = 200
    seen: list = []

    def do_GET(self):
        self.send_response(self.status)
        self.end_headers()
        self.wfile.write(b'{"error": "bad key"}' if self.status != 200 else b'{"data": []}')

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((body, self.headers.get("Authorization")))
        if self.status != 200:
            self.send_response(self.status)
            self.end_headers()
            self.wfile.write(b'{"error": "bad key"}')
            return
        self.send_response(200)
        self.send_header("Content-Type", self.content_type)
        self.end_headers()
        for chunk in self.chunks:
            self.wfile.write(chunk if isinstance(chunk, bytes) else f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(self.ending)

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Scripted.seen = []
    _Scripted.status = 200
    _Scripted.ending = b"data: [DONE]\n\n"
    _Scripted.content_type = "text/event-stream"
    yield _Scripted, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _delta(**delta):
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


async def test_tool_call_deltas_are_joined_by_index_and_checked(scripted, monkeypatch):
    handler, endpoint = scripted
    handler.chunks = [
        _delta(reasoning_content="thinking about it"),
        _delta(content="Checking. "),
        _delta(
            tool_calls=[
                {"index": 0, "id": "abc", "type": "function", "function": {"name": "calculator", "arguments": ""}}
            ]
        ),
        _delta(tool_calls=[{"index": 0, "function": {"arguments": '{"expression": '}}]),
        _delta(tool_calls=[{"index": 1, "id": "def", "function": {"name": "rm", "arguments": "{}"}}]),
        _delta(tool_calls=[{"index": 0, "function": {"arguments": '"12 * 7"}'}}]),
        _delta(tool_calls=[{"index": 2, "function": {"name": "current_time", "arguments": "[1]"}}]),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {
            "choices": [],
            "usage": {"prompt_tokens": 50, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 30}},
        },
    ]
    monkeypatch.setenv("MY_KEY", "sekrit")
    engine = OpenAIEngine(endpoint, "m", api_key_env="MY_KEY")
    messages = QUESTION + [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "calculator", "arguments": {"expression": "1"}}}
            ],
        },
        {"role": "tool", "tool_call_id": "x", "name": "calculator", "content": "1"},
    ]
    events = await collect(engine.stream(messages, tool_schemas()))
    assert events[:2] == [ThinkingDelta("thinking about it"), TextDelta("Checking. ")]
    calls = [e for e in events if isinstance(e, (ToolCallProposed, ToolCallMalformed))]
    assert calls[0] == ToolCallProposed("abc", "calculator", {"expression": "12 * 7"})
    assert (
        isinstance(calls[1], ToolCallMalformed)
        and calls[1].id == "def"
        and calls[1].reason.startswith("unknown tool 'rm':")
    )
    assert isinstance(calls[2], ToolCallMalformed) and calls[2].id == "call_1" and "got a list" in calls[2].reason
    stats = events[-2]
    assert (stats.prompt_tokens, stats.prefilled_tokens, stats.generated_tokens) == (50, 20, 9)
    assert stats.prefill_time == stats.time_to_first_token > 0 and stats.decode_time >= 0
    assert events[-1] == Done("tool_calls")
    body, auth = handler.seen[0]
    assert auth == "Bearer sekrit" and body["stream"] is True and body["tools"] == tool_schemas()
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"expression": "1"}'


async def test_tool_call_as_plain_text_content_is_recognised(scripted):
    handler, endpoint = scripted
    text = '<tool_use><tool>calculator</tool><arguments>{"expression": "2+2"}</arguments></tool_use>'
    handler.chunks = [_delta(content=text[i : i + 7]) for i in range(0, len(text), 7)]
    handler.chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "end_turn"}]})
    events = await collect(OpenAIEngine(endpoint, "m").stream(QUESTION, tool_schemas()))
    assert [e for e in events if isinstance(e, TextDelta)] == []
    assert ToolCallProposed("call_1", "calculator", {"expression": "2+2"}) in events
    assert events[-1] == Done("tool_calls")


async def test_rejected_key_names_the_variable(scripted):
    handler, endpoint = scripted
    handler.status = 401
    engine = OpenAIEngine(endpoint, "m", api_key_env="SOME_KEY")
    with pytest.raises(EngineError, match="HTTP 401: check the API key in the environment variable SOME_KEY") as info:
        await collect(engine.stream(QUESTION))
    assert str(info.value).endswith('{"error": "bad key"}')  # the server's own words
    with pytest.raises(EngineError, match="HTTP 401: check the API key"):
        await engine.load()


# -- what goes wrong on the wire is named ------------------------------------------------------


async def test_a_stream_that_ends_before_the_reply_is_complete_is_an_error(scripted):
    handler, endpoint = scripted
    handler.chunks = [_delta(content="The answer is")]
    handler.ending = b""  # the server closes the connection: no finish_reason, no [DONE]
    stream = OpenAIEngine(endpoint, "m").stream(QUESTION)
    text = await anext(stream)
    assert text == TextDelta("The answer is")
    with pytest.raises(
        EngineError, match=f"the model server at {endpoint} ended its stream before the reply was complete"
    ):
        await collect(stream)


async def test_a_reply_that_finished_without_done_is_complete(scripted):
    handler, endpoint = scripted
    handler.chunks = [_delta(content="84."), {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
    handler.ending = b""
    events = await collect(OpenAIEngine(endpoint, "m").stream(QUESTION))
    assert events[0] == TextDelta("84.") and events[-1] == Done("stop")


async def test_data_that_is_not_json_is_named(scripted):
    handler, endpoint = scripted
    handler.chunks = [_delta(content="fine so far"), b"data: {not json\n\n"]
    with pytest.raises(EngineError, match=r"sent data that is not JSON: '\{not json'"):
        await collect(OpenAIEngine(endpoint, "m").stream(QUESTION))


async def test_an_error_event_carries_the_servers_message(scripted):
    handler, endpoint = scripted
    handler.chunks = [{"error": {"message": "context length exceeded", "type": "invalid_request_error"}}]
    with pytest.raises(EngineError, match="reported an error: context length exceeded"):
        await collect(OpenAIEngine(endpoint, "m").stream(QUESTION))


async def test_a_reply_that_is_not_an_event_stream_is_named(scripted):
    handler, endpoint = scripted
    handler.content_type = "application/json"
    handler.chunks, handler.ending = [], b'{"choices": []}'
    with pytest.raises(EngineError, match="did not stream its reply as events: .*'application/json'"):
        await collect(OpenAIEngine(endpoint, "m").stream(QUESTION))


async def test_a_server_failure_names_the_status_and_the_servers_message():
    script = [failure(500, '{"error": {"message": "out of memory"}}')]
    with ScriptedEndpoint(script) as endpoint:
        with pytest.raises(EngineError) as info:
            await collect(OpenAIEngine(endpoint.url, "scripted").stream(QUESTION))
    message = str(info.value)
    assert f"the model server at {endpoint.url} answered HTTP 500: the server failed" in message
    assert "out of memory" in message


async def test_a_server_that_does_not_answer_in_time_is_named():
    import socket

    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        engine = OpenAIEngine(endpoint, "m", timeout=0.5)
        with pytest.raises(EngineError, match=f"the model server at {endpoint} did not answer within 0.5 s"):
            await collect(engine.stream(QUESTION))


async def test_an_event_larger_than_a_mebibyte_is_read_whole(scripted):
    handler, endpoint = scripted
    content = "x" * (2 * 1024 * 1024)  # a whole large tool argument or text in one event
    handler.chunks = [_delta(content=content), {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
    events = await collect(OpenAIEngine(endpoint, "m").stream(QUESTION))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == content
