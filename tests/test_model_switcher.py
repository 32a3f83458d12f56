"""``ModelSwitcher`` below both front ends: the conversation moves to the new engine only once it has
loaded (the agent, the record, a server's sampling), a failed load is closed and leaves the current one."""

from __future__ import annotations

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.asking_requests import AskingClientRequests
from mcp_chat_tui.conversation import Conversation, ModelSwitcher, SwitchRefused
from mcp_chat_tui.engine.events import EngineError
from mcp_chat_tui.engine.model_list import MLX, ModelChoice
from mcp_chat_tui.servers import ServerHub
from tests.fakes import ScriptedEngine

CHOICE = ModelChoice("other", MLX, "/models/other", "/models/other", 1)


class ClosingEngine(ScriptedEngine):
    def __init__(self, replies, *, fails: bool = False) -> None:
        super().__init__(replies)
        self.fails, self.closed = fails, False

    async def load(self, on_progress=None) -> None:
        if self.fails:
            raise EngineError("cannot load model '/models/other': config.json names no known architecture")

    async def close(self) -> None:
        self.closed = True


def conversation(engine) -> Conversation:
    agent = Agent(engine, ServerHub([]), ApprovalPolicy("ask"))
    return Conversation(agent, "first", save=False)


async def test_after_a_switch_the_agent_the_record_and_sampling_use_the_new_model():
    old, new = ClosingEngine(["from the first"]), ClosingEngine(["from the other"])
    chat = conversation(old)
    sampling = AskingClientRequests(lambda: chat.agent.engine, None, chat.record, model_name=lambda: chat.model_label)
    switcher = ModelSwitcher(chat, lambda choice: new)
    assert await switcher.switch(CHOICE) is new
    assert chat.agent.engine is new and chat.model_label == "other" and old.closed and not new.closed
    assert sampling.engine is new and sampling.model_name == "other"
    await chat.agent.run_turn("hello", chat.record)
    assert chat.transcript.exchanges[-1].model == "other"
    assert chat.transcript.exchanges[-1].steps[-1].text == "from the other"


async def test_a_model_that_fails_to_load_is_closed_and_the_current_one_stays():
    old, broken = ClosingEngine([]), ClosingEngine([], fails=True)
    chat = conversation(old)
    switcher = ModelSwitcher(chat, lambda choice: broken)
    try:
        await switcher.switch(CHOICE)
    except SwitchRefused as exc:
        said = str(exc)
    else:
        raise AssertionError("the switch went through")
    assert said.startswith("cannot switch to other: cannot load model") and said.endswith("; still on first"), said
    assert chat.agent.engine is old and chat.model_label == "first" and broken.closed and not old.closed


async def test_a_switch_before_the_first_reply_is_in_the_file_and_read_back(tmp_path):
    """The conversation began on "first" and switched before any reply: the first reply's record says
    so (there is no reply before it to differ from), and the file read back shows the switch."""
    from mcp_chat_tui.transcript import parse, read_transcript_text, render

    chat = conversation(ClosingEngine([]))
    switcher = ModelSwitcher(chat, lambda choice: ClosingEngine(["from the other", "again", "and back"]))
    await switcher.switch(CHOICE)
    await chat.agent.run_turn("hello", chat.record)
    await chat.agent.run_turn("more", chat.record)  # no switch between: nothing more to say
    assert chat.transcript.model_switches() == {0: "other"}
    path = tmp_path / "chat.md"
    path.write_text(render(chat.transcript), encoding="utf-8")
    read = parse(read_transcript_text(path), path)
    assert read.model_switches() == {0: "other"}
    assert [(e.model, e.switched_from) for e in read.exchanges] == [("other", "first"), ("other", "")]


async def test_switching_away_and_back_before_a_reply_records_no_switch():
    from mcp_chat_tui.transcript import render

    chat = conversation(ClosingEngine([]))
    await ModelSwitcher(chat, lambda choice: ClosingEngine([])).switch(CHOICE)
    back = ModelChoice("first", MLX, "/models/first", "/models/first", 1)
    await ModelSwitcher(chat, lambda choice: ClosingEngine(["same as ever"])).switch(back)
    await chat.agent.run_turn("hello", chat.record)
    assert chat.transcript.model_switches() == {}
    assert "switched_from" not in render(chat.transcript)
