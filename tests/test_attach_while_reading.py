"""A prompt sent while one of its ``@`` resources is still being read waits for it, visibly; Esc
stops the wait and a failed read stops the prompt, both said, with the prompt given back
(tests/servers/slow_resource_server.py gates the read with a file)."""

from __future__ import annotations

import sys
from pathlib import Path

from textual.widgets import Input

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.ui.widgets.chat import UserMessage
from mcp_chat_tui.ui.widgets.completion import CompletionMenu
from tests.fakes import ScriptedEngine
from tests.ui_helpers import SIZE, chat_text, make_app, wait_for, wait_ready, wait_turn_done

TOP = Path(__file__).resolve().parent.parent


def slow_server(gate: Path) -> ServerConfig:
    script = TOP / "tests" / "servers" / "slow_resource_server.py"
    return ServerConfig(name="slow", type="stdio", command=sys.executable, args=[str(script), "--gate", str(gate)])


async def send_before_the_read_ends(pilot, app) -> Input:
    """Type ``look at @gate``, take the resource from the list and send at once."""
    await pilot.press(*"look at @ga")
    menu = app.query_one(CompletionMenu)
    await wait_for(pilot, lambda: menu.is_open and [c.name for c in menu.candidates] == ["@gate"], what="@gate")
    await pilot.press("tab")
    prompt = app.query_one("#prompt", Input)
    await wait_for(pilot, lambda: prompt.value.startswith("look at @gate") and prompt.reading, what="the read")
    await pilot.press("enter")
    await wait_for(pilot, lambda: "reading @gate…" in chat_text(app), what="the prompt waiting for its read")
    assert app.status_bar.engine_state == "reading"
    return prompt


def open_gate(gate: Path, word: str) -> None:
    """Write the gate file whole at once: the server reads it as soon as it exists, and a file written
    in place exists (empty, which reads as "open") before the word is in it."""
    written = gate.with_name(gate.name + ".part")
    written.write_text(word)
    written.replace(gate)


def user_prompts(engine: ScriptedEngine) -> list[str]:
    return [str(message["content"]) for messages in engine.prompts for message in messages if message["role"] == "user"]


async def test_esc_stops_waiting_and_the_prompt_comes_back_with_its_resource(tmp_path):
    gate = tmp_path / "gate"
    engine = ScriptedEngine(["Read it."])
    app = make_app(engine, [slow_server(gate)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        prompt = await send_before_the_read_ends(pilot, app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: prompt.value.startswith("look at @gate"), what="the prompt given back")
        assert not app.chat.query(UserMessage), "the prompt not sent is still shown as sent"
        assert any(n.title == "not sent" and "@gate" in n.message for n in app._notifications)
        assert app.status_bar.engine_state == "ready"
        open_gate(gate, "open")
        await wait_for(pilot, lambda: prompt.attached, what="the contents back in the prompt box")
        await pilot.press("enter")
        await wait_turn_done(pilot, app)
    assert engine.prompts, "the prompt was never sent"
    [sent] = user_prompts(engine)
    assert "the gated contents" in sent


async def test_a_read_that_fails_stops_the_prompt_and_says_why(tmp_path):
    gate = tmp_path / "gate"
    engine = ScriptedEngine(["Read it."])
    app = make_app(engine, [slow_server(gate)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        prompt = await send_before_the_read_ends(pilot, app)
        open_gate(gate, "fail")
        await wait_for(pilot, lambda: prompt.value.startswith("look at @gate"), what="the prompt given back")
        await wait_turn_done(pilot, app, left_in_prompt=prompt.value)
        [problem] = [n for n in app._notifications if n.title == "not sent"]
        assert "@gate could not be read" in problem.message and "wait://gate" in problem.message
        assert not app.chat.query(UserMessage)
    assert not engine.prompts, "the prompt went without its resource"
