"""The scripted chat-completions server speaks the OpenAI protocol: the real client reads its
streamed tool calls, and a non-streaming request gets one ``chat.completion`` object."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from mcp_chat_tui.engine.events import Done, Stats, TextDelta, ToolCallProposed
from mcp_chat_tui.engine.remote import OpenAIEngine
from tests.models import tool_schemas
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply

QUESTION = [{"role": "user", "content": "what is 12 * 7?"}]


async def test_the_client_reads_a_streamed_tool_call_and_the_usage():
    script = [tool_reply("calculator", {"expression": "12 * 7"}, content="Let me see.", call_id="c9")]
    with ScriptedEndpoint(script) as endpoint:
        engine = OpenAIEngine(endpoint.url, "scripted")
        await engine.load()
        events = [event async for event in engine.stream(QUESTION, tool_schemas())]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me see."
    assert ToolCallProposed("c9", "calculator", {"expression": "12 * 7"}) in events
    stats = next(e for e in events if isinstance(e, Stats))
    assert stats.prompt_tokens == 40 and stats.generated_tokens == 6  # 3 pieces of text, 3 of the call
    assert events[-1] == Done("tool_calls")
    assert endpoint.requests[0]["messages"] == QUESTION and endpoint.requests[0]["stream"] is True


def test_a_request_without_stream_gets_one_completion_and_past_the_script_a_500():
    with ScriptedEndpoint([tool_reply("calculator", {"expression": "1 + 1"})]) as endpoint:

        def post() -> dict:
            request = urllib.request.Request(
                endpoint.url + "/chat/completions",
                method="POST",
                headers={"Content-Type": "application/json"},
                data=json.dumps({"model": "m", "messages": QUESTION}).encode(),
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.load(response)

        completion = post()
        with pytest.raises(urllib.error.HTTPError) as exhausted:
            post()
    [choice] = completion["choices"]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    call = choice["message"]["tool_calls"][0]
    assert call["function"] == {"name": "calculator", "arguments": '{"expression": "1 + 1"}'}
    assert exhausted.value.code == 500
