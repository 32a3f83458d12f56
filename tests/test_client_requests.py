"""A server's requests to the client (sampling, elicitation) through the real hub and a real SDK server
(tests/servers/asking_server.py), in both protocol eras: what the server gets back for each answer."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.agent.asking_requests import AskingClientRequests, YesAsker
from mcp_chat_tui.agent.events import ServerRequestAnswered
from mcp_chat_tui.agent.sampling import ToolUse
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.incoming_requests import NO_ONE_TO_SAMPLE
from tests.fakes import ScriptedEngine, call
from tests.helpers import REAL_SERVERS, StreamsServer, in_process_config, server_module

ASKING_SERVER = str(Path(__file__).parent / "servers" / "asking_server.py")
ERAS = ["modern", "legacy"]


def asking_config(era: str, name: str = "asking", **overrides: object) -> ServerConfig:
    """tests/servers/asking_server.py, in this process (a fresh copy of its module at each start, as a
    new process has; the legacy era through its own 2025-11-25 loop on memory streams), or a process
    of its own with ``MCT_REAL_SERVERS=1``. No test of it is about processes."""
    args = [ASKING_SERVER] + (["--legacy"] if era == "legacy" else [])
    config = ServerConfig(name=name, type="stdio", command=sys.executable, args=args, **overrides)
    if REAL_SERVERS:
        return config
    if era == "legacy":
        return in_process_config(config, lambda: StreamsServer(server_module(ASKING_SERVER).serve_legacy_on))
    return in_process_config(config, lambda: server_module(ASKING_SERVER).server)


class ScriptedAsker:
    """Answers as a test says: ``sampling`` is "approve", "reject" or an edit function; ``answer``
    None rejects the model's answer, a string replaces it."""

    def __init__(self, *, sampling="approve", tools=True, answer=..., form=("accept", {}), url="accept"):
        self.sampling, self.tools, self.answer, self.form, self.url = sampling, tools, answer, form, url
        self.seen: list[tuple] = []

    async def approve_sampling(self, server, params):
        self.seen.append(("sampling", server, params))
        if self.sampling == "reject":
            return None
        return params if self.sampling == "approve" else self.sampling(params)

    async def approve_tool_use(self, server, use):
        self.seen.append(("tool", server, use))
        return self.tools

    async def review_sample(self, server, text, tool_uses):
        self.seen.append(("review", server, text, tool_uses))
        return text if self.answer is ... else self.answer

    async def fill_form(self, server, message, fields):
        self.seen.append(("form", server, message, [f.name for f in fields]))
        return self.form

    async def visit_url(self, server, message, url):
        self.seen.append(("url", server, message, url))
        return self.url


def answered(result) -> dict:
    assert result.ok, result.failure
    return json.loads(result.for_model())


async def run_hub(era, requests=None):
    hub = ServerHub([asking_config(era)])
    if requests is not None:
        hub.client_requests = requests
    await hub.start_all()
    return hub


@pytest.mark.parametrize("era", ERAS)
async def test_without_a_front_end_elicitation_is_declined_and_sampling_refused(era):
    async with ServerHub([asking_config(era)]) as hub:
        await hub.start_all()
        assert answered(await hub.call_tool("asking", "sign_up")) == {"action": "decline"}
        result = await hub.call_tool("asking", "summarize", {"text": "x"})
        assert not result.ok and NO_ONE_TO_SAMPLE in result.for_model()


@pytest.mark.parametrize("era", ERAS)
async def test_approved_sampling_is_answered_by_the_engine_and_recorded(era):
    engine = ScriptedEngine(["A short summary."])
    asker, events = ScriptedAsker(), []
    async with ServerHub([asking_config(era)]) as hub:
        hub.client_requests = AskingClientRequests(engine, asker, events.append, model_name="tiny")
        await hub.start_all()
        got = answered(await hub.call_tool("asking", "summarize", {"text": "a long story"}))
    assert got["content"] == {"type": "text", "text": "A short summary."}
    assert got["model"] == "tiny" and got["role"] == "assistant"
    assert engine.prompts[0] == [
        {"role": "system", "content": "You summarize in one line."},
        {"role": "user", "content": "Summarize: a long story"},
    ]
    (event,) = events
    assert isinstance(event, ServerRequestAnswered) and event.server == "asking" and event.answer == "approved"
    assert event.request["maxTokens"] == 40 and event.result["text"] == "A short summary."
    assert hub.status("asking").samples_asked == 1


@pytest.mark.parametrize("era", ERAS)
async def test_edited_request_and_answer_reach_the_model_and_the_server(era):
    def edit(params):
        from mcp_chat_tui.agent.sampling import with_edits

        return with_edits(params, "Be brief.", ["Summarize: the edited story"])

    engine = ScriptedEngine(["model text"])
    asker, events = ScriptedAsker(sampling=edit, answer="the user's text"), []
    async with ServerHub([asking_config(era)]) as hub:
        hub.client_requests = AskingClientRequests(engine, asker, events.append)
        await hub.start_all()
        got = answered(await hub.call_tool("asking", "summarize", {"text": "x"}))
    assert engine.prompts[0][0] == {"role": "system", "content": "Be brief."}
    assert engine.prompts[0][1]["content"] == "Summarize: the edited story"
    assert got["content"]["text"] == "the user's text"
    assert events[0].answer == "edited" and events[0].request["edited"]["systemPrompt"] == "Be brief."


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("step", ["request", "answer"])
async def test_a_rejected_sampling_request_or_answer_is_an_error_for_the_server(era, step):
    engine = ScriptedEngine(["never sent"])
    asker = ScriptedAsker(sampling="reject") if step == "request" else ScriptedAsker(answer=None)
    events = []
    async with ServerHub([asking_config(era)]) as hub:
        hub.client_requests = AskingClientRequests(engine, asker, events.append)
        await hub.start_all()
        result = await hub.call_tool("asking", "summarize", {"text": "x"})
    assert not result.ok and "the user rejected" in result.for_model()
    assert len(engine.prompts) == (0 if step == "request" else 1)
    assert events[0].answer == "rejected"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("allowed", [True, False])
async def test_sampling_with_tools_returns_the_approved_tool_use_to_the_server(era, allowed):
    engine = ScriptedEngine([[call("lookup", {"word": "ketch"}, "toolu_1")]])
    asker, events = ScriptedAsker(tools=allowed), []
    async with ServerHub([asking_config(era)]) as hub:
        hub.client_requests = AskingClientRequests(engine, asker, events.append)
        await hub.start_all()
        got = answered(await hub.call_tool("asking", "define", {"word": "ketch"}))
    assert engine.tools_sent[0][0]["function"]["name"] == "lookup"
    assert ("tool", "asking", ToolUse("toolu_1", "lookup", {"word": "ketch"})) in asker.seen
    if allowed:
        assert got["stopReason"] == "toolUse"
        assert got["content"] == [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"word": "ketch"}}]
    else:
        assert got["stopReason"] != "toolUse" and all(block["type"] == "text" for block in got["content"])


async def test_a_server_over_its_sampling_limit_is_refused_with_why():
    engine = ScriptedEngine(["one", "two"])
    asker = ScriptedAsker()
    async with ServerHub([asking_config("modern")], sampling_per_minute=1) as hub:
        hub.client_requests = AskingClientRequests(engine, asker, lambda event: None)
        await hub.start_all()
        assert (await hub.call_tool("asking", "summarize", {"text": "x"})).ok
        second = await hub.call_tool("asking", "summarize", {"text": "x"})
    assert not second.ok and "more than 1 time in a minute" in second.for_model()
    assert second.failure.kind is FailureKind.REFUSED  # the user's limit, not the server's fault (-p: exit 3)
    assert "sampling_per_minute" in second.for_model()
    status = hub.status("asking")
    assert (status.samples_asked, status.samples_refused) == (2, 1)
    assert status.sampling_note() == "sampled 2× (limit 1/min, 1 over the limit)"
    assert len(engine.prompts) == 1


async def test_sampling_while_the_model_writes_the_users_reply_is_refused():
    engine = ScriptedEngine(["never"])
    asker, events = ScriptedAsker(), []
    async with ServerHub([asking_config("modern")]) as hub:
        hub.client_requests = AskingClientRequests(engine, asker, events.append, model_busy=lambda: True)
        await hub.start_all()
        result = await hub.call_tool("asking", "summarize", {"text": "x"})
    assert not result.ok and "the model is busy writing the user's reply" in result.for_model()
    assert asker.seen == [] and engine.prompts == [] and events[0].answer == "refused"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
async def test_form_answers_reach_the_server_with_the_spec_action(era, action):
    values = {"name": "Ada", "email": "ada@example.com", "api_token": "tok-123456"} if action == "accept" else {}
    asker, events = ScriptedAsker(form=(action, values)), []
    async with ServerHub([asking_config(era)]) as hub:
        hub.client_requests = AskingClientRequests(ScriptedEngine([]), asker, events.append)
        await hub.start_all()
        got = answered(await hub.call_tool("asking", "sign_up"))
    assert got["action"] == action
    assert got.get("content") == (values or None)
    assert asker.seen[0][3] == ["name", "email", "age", "plan", "newsletter", "api_token"]
    if action == "accept":
        assert events[0].result["content"]["api_token"] == "[redacted]"
        assert events[0].result["content"]["name"] == "Ada"


@pytest.mark.parametrize("era", ERAS)
async def test_url_elicitation_and_its_completion(era):
    asker, events = ScriptedAsker(url="accept"), []
    async with ServerHub([asking_config(era)]) as hub:
        requests = AskingClientRequests(ScriptedEngine([]), asker, events.append)
        hub.client_requests = requests
        await hub.start_all()
        got = answered(await hub.call_tool("asking", "open_page"))
        if era == "legacy":  # the completion notification follows the answer: wait for it (5 s at most)
            for _ in range(250):
                if requests.completed:
                    break
                await asyncio.sleep(0.02)
    assert got == {"action": "accept"}
    assert asker.seen[0][3] == "https://bank.example/authorize?state=xyz"
    if era == "legacy":
        assert requests.completed == {("asking", "e-1")}
        assert events[-1].answer == "complete"


async def test_yes_approves_sampling_without_asking_but_not_forms():
    engine = ScriptedEngine(["yes answer"])
    fallback = ScriptedAsker(form=("decline", {}))
    async with ServerHub([asking_config("modern")]) as hub:
        hub.client_requests = AskingClientRequests(engine, YesAsker(fallback), lambda event: None)
        await hub.start_all()
        assert answered(await hub.call_tool("asking", "summarize", {"text": "x"}))["content"]["text"] == "yes answer"
        assert answered(await hub.call_tool("asking", "sign_up")) == {"action": "decline"}
    assert [seen[0] for seen in fallback.seen] == ["form"]
