"""``Conversation``, the life of a conversation below both front ends, without Textual or a console:
saving to a real file with its lock and the KV cache beside it, the checkpoint before a call is
sent, opening and switching to another file, resuming a turn left open, ``/compact``, and the
routing of typed lines (exit words, ``/roots``, ``/compact``, a server's prompt)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import ApprovalChoice, ApprovalNeeded, CallFinished, TurnEnd
from mcp_chat_tui.conversation import CannotOpen, Conversation, Route, read_if_present, route_line
from mcp_chat_tui.conversation.recording import tee
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import parse, read_transcript_text, render
from tests.fakes import ScriptedEngine, call
from tests.helpers import fixture_config
from tests.test_agent import Recorder

TOP = Path(__file__).resolve().parent.parent
TAKE = (
    "import sys; from pathlib import Path; from mcp_chat_tui.transcript import TranscriptLock; "
    "TranscriptLock.acquire(Path(sys.argv[1])); print('held', flush=True); sys.stdin.readline()"
)


class HeldElsewhere:
    """Another process that takes the lock of a conversation file and keeps it until closed."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", TAKE, str(path)],
            cwd=TOP,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.held = self.process.stdout.readline().strip() == "held"
        self.refusal = "" if self.held else self.process.communicate()[1]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.communicate("\n")


def taken_elsewhere(path: Path) -> bool:
    """Whether another process finds ``path`` held (it cannot take its lock)."""
    other = HeldElsewhere(path)
    other.close()
    return not other.held and "TranscriptInUse" in other.refusal


@pytest.fixture
async def hub():
    servers = ServerHub([fixture_config("fx", in_process=True)])
    async with servers:
        await servers.start_all()
        yield servers


def conversation_of(hub: ServerHub, replies: list, path: Path | None = None, **options) -> Conversation:
    agent = Agent(ScriptedEngine(replies), hub, ApprovalPolicy("auto"))
    return Conversation(agent, "scripted", path=path, **options)


def saved(path: Path):
    return parse(read_transcript_text(path), path)


async def test_a_conversation_is_saved_and_held_and_its_calls_start_on_disk_first(hub, tmp_path):
    path, kept = tmp_path / "chat.md", []
    conversation = conversation_of(hub, [[call("echo", {"text": "hi"})], "It said hi."], path)
    engine = conversation.agent.engine
    engine.keep_cache_in = lambda file, save=True: kept.append((file, save))  # where an MLX engine keeps its cache
    assert conversation.agent.checkpoint == conversation.recorder.persisted, "a call would go out unsaved"
    assert conversation.start_saving("say hi") is None and conversation.saving
    assert kept == [(path, True)] and taken_elsewhere(path)
    end = await conversation.agent.run_turn("say hi", conversation.record)
    assert end is TurnEnd.ANSWERED
    assert conversation.close() is None
    [exchange] = saved(path).exchanges
    [proposal] = exchange.steps[0].proposals
    assert exchange.user == "say hi" and proposal.started_at is not None and proposal.result.status == "done"
    assert "It said hi." in render(saved(path)) and not taken_elsewhere(path), "the lock outlived the conversation"


async def test_a_new_conversation_is_named_after_its_first_prompt(hub, tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CHAT_TUI_DATA_DIR", str(tmp_path))
    conversation = conversation_of(hub, ["hello"])
    assert conversation.start_saving("Plan a trip to Lisbon") is None
    assert conversation.path is not None and "lisbon" in conversation.path.name.lower()
    assert conversation.path.is_relative_to(tmp_path)
    conversation.close()


async def test_a_file_another_instance_holds_is_neither_saved_nor_opened(hub, tmp_path):
    path = tmp_path / "chat.md"
    conversation = conversation_of(hub, ["hello"], path)
    other = HeldElsewhere(path)
    try:
        assert other.held
        problem = conversation.start_saving()
        assert problem is not None and f"process {other.process.pid}" in problem and not conversation.saving
        assert await conversation.recorder.persisted() == problem, "a call's start would count as saved"
        with pytest.raises(CannotOpen, match=f"process {other.process.pid}"):
            await conversation_of(hub, []).open(path)
    finally:
        other.close()
    conversation.close()


async def test_opening_another_file_leaves_this_one_saved_and_resumes_that_one(hub, tmp_path):
    first, second = tmp_path / "first.md", tmp_path / "second.md"
    earlier = conversation_of(hub, ["Lisbon is sunny."], first)
    earlier.start_saving()
    await earlier.agent.run_turn("weather in Lisbon?", earlier.record)
    earlier.close()

    conversation = conversation_of(hub, ["Hi.", "Still sunny."], second)
    conversation.start_saving()
    await conversation.agent.run_turn("hello", conversation.record)
    opened = await conversation.open(first)
    assert taken_elsewhere(first), "the file is not held while it is opened"
    switched = await conversation.switch_to(opened)
    assert switched.left_unsaved is None and switched.cannot_save is None
    assert conversation.path == first and conversation.saving and taken_elsewhere(first)
    assert not taken_elsewhere(second), "the conversation left still holds its file"
    assert conversation.give_to_agent(Recorder()) is False, "a finished turn goes on"
    await conversation.agent.run_turn("and tomorrow?", conversation.record)
    conversation.close()
    assert not taken_elsewhere(first), "the opened file stays held after the conversation ended"
    sent = conversation.agent.engine.prompts[-1]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["weather in Lisbon?", "and tomorrow?"]
    assert [e.user for e in saved(first).exchanges] == ["weather in Lisbon?", "and tomorrow?"]
    assert [e.user for e in saved(second).exchanges] == ["hello"]


async def test_a_file_that_cannot_be_read_is_not_opened_and_not_held(hub, tmp_path):
    path = tmp_path / "broken.md"
    path.write_bytes(b"\xff\xfe not a conversation")
    with pytest.raises(CannotOpen):
        await conversation_of(hub, []).open(path)
    assert not taken_elsewhere(path)


async def test_without_saving_a_file_is_opened_without_its_lock(hub, tmp_path):
    path = tmp_path / "chat.md"
    earlier = conversation_of(hub, ["ok"], path)
    earlier.start_saving()
    await earlier.agent.run_turn("hi", earlier.record)
    earlier.close()
    conversation = conversation_of(hub, [], save=False)
    opened = await conversation.open(path)
    assert opened.lock is None and not taken_elsewhere(path)
    switched = await conversation.switch_to(opened)
    assert switched.cannot_save is None and not conversation.saving and not taken_elsewhere(path)


async def test_a_call_the_file_left_started_is_interrupted_and_never_run_again(hub, tmp_path):
    path = tmp_path / "chat.md"
    live = conversation_of(hub, [[call("echo", {"text": "hi"})], "done"], path)
    live.start_saving()
    await live.agent.run_turn("echo hi", live.record)
    live.close()
    left = saved(path)  # as a kill would leave it: the call started, no result, the reply unfinished
    exchange = left.exchanges[-1]
    exchange.steps, exchange.end = exchange.steps[:1], "unfinished"
    exchange.steps[0].proposals[0].result = None
    path.write_text(render(left), encoding="utf-8")

    conversation = conversation_of(hub, ["It was interrupted."], path, transcript=read_if_present(path))
    conversation.start_saving()
    events, resumed = Recorder(ApprovalChoice.DENY), []  # asked whether to run it again: no
    assert conversation.give_to_agent(events) is True
    await conversation.continue_open_turn(tee(conversation.record, events), lambda c: resumed.append(c.id))
    conversation.close()
    assert resumed == ["call_1"] and len(events.of(ApprovalNeeded)) == 1, "it ran again on the file's word"
    [finished] = events.of(CallFinished)
    assert finished.status is CallState.INTERRUPTED
    [proposal] = saved(path).exchanges[-1].steps[0].proposals
    assert proposal.result.status == "interrupted" and "It was interrupted." in render(saved(path))


async def test_compact_summarises_every_exchange_but_the_last(hub, tmp_path):
    conversation = conversation_of(hub, ["One.", "Two.", "The first asked for one."], tmp_path / "chat.md")
    conversation.start_saving()
    await conversation.agent.run_turn("first", conversation.record)
    assert not conversation.can_compact
    await conversation.agent.run_turn("second", conversation.record)
    assert conversation.can_compact
    await conversation.write_summaries(conversation.record, compact=True)
    conversation.close()
    assert [e.summary for e in saved(tmp_path / "chat.md").exchanges] == ["The first asked for one.", None]
    assert conversation.agent.summaries_in_use == 1


async def test_typed_lines_are_routed_alike_for_both_front_ends():
    redactor = Redactor({"password": "hunter22"})
    asked: list[str] = []

    async def roots(line: str) -> str | None:
        asked.append(line)
        return "roots: /tmp" if line.startswith("/roots") else None

    async def route(line: str, **options):
        routed = await route_line(line, redactor, roots, **options)
        return routed.route, routed.text

    assert await route("  bye ") == (Route.LEAVE, "bye") and await route("QUIT") == (Route.LEAVE, "QUIT")
    assert await route("   ") == (Route.NOTHING, "")
    assert (await route_line("/roots add /tmp", redactor, roots)).said == "roots: /tmp"
    assert await route("/compact") == (Route.COMPACT, "/compact")
    assert await route("/fx:greet Ann") == (Route.COMMAND, "/fx:greet Ann")
    route_, text = await route("my password is hunter22")
    assert route_ is Route.PROMPT and "hunter22" not in text
    assert "hunter22" not in "".join(asked), "a secret reached the roots command"
    assert await route("bye", typed=False) == (Route.PROMPT, "bye"), "-p's prompt is never an exit word"
