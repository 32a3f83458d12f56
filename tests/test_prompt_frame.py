"""Enter's effect comes in one frame: the prompt box emptied, the prompt in the chat and its reply
opened are drawn together (``PromptInput.hold_frames``), not in three frames a 60th of a second
apart, each a layout of the whole screen; and the model starts after that frame, not after one
more (``AgentEventView.wait_until_drawn``). Counted in frames, not timed: bench/key_latency.py times it."""

import asyncio
import json

from textual.errors import NoWidget
from textual.widget import Widget

from mcp_chat_tui.config import Settings
from mcp_chat_tui.transcript import Exchange, Proposal, Step, ToolResult, Transcript
from mcp_chat_tui.ui import agent_events
from mcp_chat_tui.ui.widgets import prompt as prompt_module
from mcp_chat_tui.ui.widgets.chat import UserMessage
from mcp_chat_tui.ui.widgets.reply import ReplyHeader
from tests.fakes import ScriptedEngine
from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done


class Watching(ScriptedEngine):
    """Notes when it is asked for a reply (the frames before that are the key's)."""

    asked = 0

    def stream(self, *args, **kwargs):
        self.asked += 1
        return super().stream(*args, **kwargs)


def placed(app, kind: type[Widget]) -> int:
    """How many ``kind`` widgets of the chat the screen's last layout placed."""
    count = 0
    for widget in app.chat.query(kind):
        try:
            app.screen.find_widget(widget)
        except NoWidget:
            continue
        count += 1
    return count


async def frames_after_enter(app, pilot, prompt: str, waited: list[int] | None = None) -> list[tuple[str, int, int]]:
    """Each frame drawn from Enter to the model's start: the box's text, the prompts and reply headers
    placed. ``waited`` gets how many of them were drawn when the turn's wait for a frame ended."""
    frames: list[tuple[str, int, int]] = []
    display, engine = app._display, app.engine
    asked = engine.asked
    after_refresh = app.chat.call_after_refresh

    def noted_wait(callback, *args, **kwargs):
        if not isinstance(getattr(callback, "__self__", None), asyncio.Event):  # not the turn's wait
            return after_refresh(callback, *args, **kwargs)

        def called() -> None:
            if waited is not None:
                waited.append(len(frames))
            callback(*args, **kwargs)

        return after_refresh(called)

    def noted(screen, renderable) -> None:
        display(screen, renderable)
        # Enter empties the box as it is handled: a frame with the prompt still in it came before
        # (a timer's redraw while a loaded machine delayed the key), and is no frame Enter held.
        entered = app.query_one("#prompt").value != prompt
        if renderable is not None and not app._batch_count and engine.asked == asked and entered:
            frames.append((app.query_one("#prompt").value, placed(app, UserMessage), placed(app, ReplyHeader)))

    box = app.query_one("#prompt")
    box.focus()
    box.value = prompt
    await pilot.pause()
    await app.screen.wait_for_refresh()  # the typed prompt drawn
    app._display = noted
    app.chat.call_after_refresh = noted_wait
    try:
        await pilot.press("enter")
        await wait_for(pilot, lambda: engine.asked > asked, what="the model asked")
    finally:
        del app._display
        del app.chat.call_after_refresh
    return frames


def earlier(exchanges: int) -> Transcript:
    """A conversation longer than the chat's height (its scroll bar moves as a prompt is added)."""
    answer = "\n\n".join(f"line {line}" for line in range(6))
    return Transcript(
        [Exchange(user=f"question {index}", model="scripted", steps=[Step(text=answer)]) for index in range(exchanges)]
    )


async def test_the_emptied_box_the_prompt_and_its_reply_come_in_one_frame(monkeypatch):
    monkeypatch.setattr(prompt_module, "HOLD_LIMIT", 60.0)  # let go by the reply opened, not by the limit
    engine = Watching(["first answer", "second answer"])
    loaded = 8
    settings = Settings(max_turns=50)  # no summaries asked of the model
    app = make_app(engine, servers=[], settings=settings, transcript=earlier(loaded), autosave=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: len(app.chat.query(UserMessage)) == loaded, what="the conversation shown")
        assert app.chat.max_scroll_y > 0
        layout_left: list[bool] = []

        def noted_layout(screen) -> bool:
            layout_left.append(agent_events.layout_pending.__wrapped__(screen))  # type: ignore[attr-defined]
            return layout_left[-1]

        noted_layout.__wrapped__ = agent_events.layout_pending  # type: ignore[attr-defined]
        monkeypatch.setattr(agent_events, "layout_pending", noted_layout)
        for number, prompt in enumerate(("one", "two"), start=loaded + 1):
            layout_left.clear()
            frames = await frames_after_enter(app, pilot, prompt)
            assert frames, "nothing was drawn before the model started"
            # The first frame has all three, and no frame shows less; the model starts after it,
            # no second frame waited for when it left no layout to do (a scroll bar's thumb put in
            # place is drawn beside the model). A loaded machine may draw the same screen again
            # (a timer's redraw) before the model's worker has asked it: not a frame waited for.
            assert frames[0] == ("", number, number) and set(frames) == {frames[0]}, frames
            assert layout_left == [False], f"the turn waited for a second frame: {layout_left}"
            await wait_turn_done(pilot, app)


async def test_enter_that_starts_no_turn_lets_the_frames_go_when_handled(monkeypatch):
    """A command (here one that only says something) lets the frames go as it is handled, not at
    the hold's limit (made a minute here: the test would time out waiting for it)."""
    monkeypatch.setattr(prompt_module, "HOLD_LIMIT", 60.0)
    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        box = app.query_one("#prompt")
        await send(pilot, "/roots")
        await wait_for(pilot, lambda: not box.frames.holding and not app._batch_count, what="the frames let go")


async def test_enter_while_a_turn_waits_to_open_its_reply_lets_its_own_frames_go(monkeypatch):
    """A turn that waits before opening its reply (a prompt sent during start-up waits for the model)
    holds no frames of a later Enter: that Enter's are let go when it is handled."""
    monkeypatch.setattr(prompt_module, "HOLD_LIMIT", 60.0)
    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        box = app.query_one("#prompt")
        app.turns.running = app.agent_view.opening_reply = True  # as a turn waiting for start-up leaves them
        try:
            await send(pilot, "/roots")
            await wait_for(pilot, lambda: not box.frames.holding, what="the frames let go")
        finally:
            app.turns.running = app.agent_view.opening_reply = False


async def test_a_prompt_box_taken_away_while_holding_lets_the_frames_go(monkeypatch):
    monkeypatch.setattr(prompt_module, "HOLD_LIMIT", 60.0)
    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        box = app.query_one("#prompt")
        box.hold_frames()
        assert app._batch_count
        await box.remove()
        await wait_for(pilot, lambda: not app._batch_count, what="the frames let go")


class Summarising(Watching):
    """Answers a prompt with a line, and a request aside (a summary of a loaded exchange) with another."""

    def __init__(self) -> None:
        super().__init__([])

    async def stream(self, messages, tools=None, *, known_tools=None, aside=False, overrides=None):
        if aside:
            self.replies = ["A summary."]
        else:
            self.asked += 1
            self.replies = ["An answer."]
        async for event in ScriptedEngine.stream(
            self, messages, tools, known_tools=known_tools, aside=aside, overrides=overrides
        ):
            yield event


def with_calls(exchanges: int) -> Transcript:
    """Exchanges each with two calculator calls and their results (the sidebar and the chat's cards full)."""
    made = []
    for index in range(exchanges):
        proposals = []
        for number in range(2):
            call = {"id": f"call_{index}_{number}", "type": "function", "function": {"name": "calculator"}}
            call["function"]["arguments"] = json.dumps({"expression": f"{index} * {number} + 1"})
            result = ToolResult("calculator", f"call_{index}_{number}", "done", str(index * number + 1), "demo", 0.01)
            proposals.append(Proposal(call, "yo", result))
        steps = [Step(text="Let me work it out.", proposals=proposals), Step(text=f"They are 1 and {index + 1}.")]
        made.append(Exchange(f"question {index}: what is {index} times 0 and 1, plus one?", "scripted", steps))
    return Transcript(made)


async def test_in_a_loaded_chat_the_model_starts_after_the_frame_enter_held(monkeypatch):
    """The frames Enter held go only once the turn's wait for a frame is in place (the chat handles
    its messages in order): in a loaded chat the wait came after that frame, and the model started
    a frame later."""
    monkeypatch.setattr(prompt_module, "HOLD_LIMIT", 60.0)
    engine = Summarising()
    app = make_app(engine, transcript=with_calls(20), autosave=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: not app.turns.running, what="the loaded exchanges' summaries")
        for _ in range(2):
            waited: list[int] = []
            frames = await frames_after_enter(app, pilot, "one more", waited)
            # The turn's wait ended with the first frame Enter let go; a loaded machine may draw the
            # same screen again (a timer's redraw) before the model's worker has asked it.
            assert frames and set(frames) == {frames[0]} and waited == [1], (frames, waited)
            await wait_for(pilot, lambda: not app.turns.running, what="the turn")
