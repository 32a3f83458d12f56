"""The full-screen app driven with Pilot: real demo server, scripted model (UI behaviour only)."""

from __future__ import annotations

import asyncio
import re

import pytest
from textual.widgets import Markdown, _markdown
from textual.widgets.markdown import MarkdownBlock

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import ServerConfig, Settings, load_settings
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.engine.events import Done, Stats, TextDelta, Throughput
from mcp_chat_tui.servers import ServerState
from mcp_chat_tui.ui.app import ChatApp
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.detail import CallDetailScreen, ServerDetailScreen, TextScreen
from mcp_chat_tui.ui.streaming import (
    MAX_PACE,
    MAX_SHARE,
    MODEL_SLOWDOWN,
    PACE,
    DrawingBudget,
    drawing_cost,
    drawing_share,
)
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config, fixture_config, new_marker, pids_with, wait_until
from tests.ui_helpers import (
    SIZE,
    chat_text,
    dialog_armed,
    make_app,
    record_states,
    send,
    wait_for,
    wait_ready,
    wait_turn_done,
)

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)


async def test_prompt_history_with_up_and_down():
    app = make_app(ScriptedEngine(["one", "two"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "first")
        await wait_turn_done(pilot, app)
        await send(pilot, "second")
        await wait_turn_done(pilot, app)
        prompt = app.query_one("#prompt")
        await pilot.press("up")
        assert prompt.value == "second"
        await pilot.press("up")
        assert prompt.value == "first"
        await pilot.press("down", "down")
        assert prompt.value == ""


async def test_a_key_typed_right_after_enter_stays_in_the_prompt():
    """Enter sends the prompt and empties it in the order the keys came: a key typed in the same
    moment (seen in tmux: the first letter of the next prompt) is the next prompt's, neither sent
    with this one nor emptied away. ``pilot.press`` waits between keys: the keys are posted at once."""
    from textual import events

    def type_at_once(*keys: str) -> None:
        """The keys in one read from the terminal, handled one after the other with nothing between."""
        for key in keys:
            app.post_message(events.Key(key, key if len(key) == 1 else "\r" if key == "enter" else None))

    app = make_app(ScriptedEngine(["one", "two"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        prompt = app.query_one("#prompt")
        prompt.focus()
        prompt.value = "first"
        type_at_once("enter", "x")
        await wait_turn_done(pilot, app, left_in_prompt="x")
        assert [message["content"] for message in app.agent.messages if message["role"] == "user"] == ["first"]
        type_at_once("y", "backspace", "z", "enter", "w")  # Backspace in its place too
        await wait_turn_done(pilot, app, left_in_prompt="w")
        assert [message["content"] for message in app.agent.messages if message["role"] == "user"] == ["first", "xz"]


async def test_escape_stops_the_reply_and_keeps_the_partial_answer():
    words = [TextDelta(f"word{i} ") for i in range(200)]
    app = make_app(ScriptedEngine([words], delay=0.02))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "talk")
        await wait_for(pilot, lambda: "word5" in chat_text(app), what="streaming")
        await pilot.press("escape")
        await wait_turn_done(pilot, app)
        text = chat_text(app)
        assert "■ stopped" in text and "word5" in text and "word199" not in text
        assert app.agent.messages[-1]["role"] == "assistant"
        assert app.agent.messages[-1]["content"].startswith("word0 word1")


async def test_failed_server_is_shown_in_the_panel_when_continuing():
    servers = [demo_config(), ServerConfig(name="ghost", type="stdio", command="no-such-mcp-server")]
    app = make_app(ScriptedEngine([]), servers, settings=Settings(on_server_failure="continue"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        table = app.servers_table
        await wait_for(pilot, lambda: "ghost" in table.statuses, what="ghost row")
        row = [str(cell) for cell in table.get_row("ghost")]
        assert row[0].endswith("failed") and "command not found" in row[5]
        assert "continuing without ghost: command not found" in chat_text(app)


async def test_ctrl_c_leaves_and_no_server_process_remains():
    marker = new_marker()
    app = make_app(ScriptedEngine([]), [fixture_config("a", marker=marker), fixture_config("b", marker=marker)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert len(pids_with(marker)) == 2
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="exit")
    assert app.return_code == 130
    assert wait_until(lambda: not pids_with(marker), 5), "a server outlived the app"


async def test_ctrl_c_in_the_middle_of_a_reply_leaves_cleanly():
    # The stopped turn's last event reaches the app as it closes: it must not be drawn then.
    marker = new_marker()
    reply = " ".join(f"word{n}" for n in range(400))
    app = make_app(ScriptedEngine([reply], delay=0.01), [fixture_config("a", marker=marker)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "a long one")
        await wait_for(pilot, lambda: "word5" in chat_text(app), what="the reply to start")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="exit")
    assert app.return_code == 130 and app._exception is None
    assert wait_until(lambda: not pids_with(marker), 5), "a server outlived the app"


async def test_bye_leaves():
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "bye")
        await wait_for(pilot, lambda: app.return_code is not None, what="exit")
    assert all(s.state == ServerState.STOPPED for s in app.hub.statuses)


async def test_restarting_a_server_from_the_panel():
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4")
        assert app.focused is app.servers_table
        await pilot.press("r")
        await wait_for(
            pilot,
            lambda: app.hub.status("demo").restarts == 1 and app.hub.status("demo").state == ServerState.READY,
            what="restart",
        )
        await pilot.press("l")
        assert isinstance(app.screen, TextScreen)
        await pilot.press("escape")
        await pilot.press("enter")
        assert isinstance(app.screen, ServerDetailScreen)


async def test_call_detail_opens_from_the_sidebar_and_copies():
    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "84"])
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "calc")
        await wait_turn_done(pilot, app)
        await pilot.press("f3", "enter")
        assert isinstance(app.screen, CallDetailScreen)
        await pilot.press("c")
        assert "12 * 7 = 84" in app.clipboard and '"expression": "12 * 7"' in app.clipboard
        assert "call id: call_1" in app.clipboard


async def test_auto_run_toggle_from_the_sidebar_marks_the_tool():
    engine = ScriptedEngine(
        [[call("calculator", {"expression": "1+1"})], "2", [call("calculator", {"expression": "2+2"})], "4"]
    )
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "one")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="dialog")
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        await pilot.press("f3", "a")
        spec = app.hub.find_tool("calculator")
        assert app.policy.runs_without_asking(spec)
        assert "⚡" in str(app.calls_table.get_cell("call-1", "tool"))
        await send(pilot, "two")
        await wait_turn_done(pilot, app)
        assert [r.state for r in app.calls_table.records.values()] == [CallState.DONE, CallState.DONE]


async def test_help_lists_every_binding():
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f1")
        assert isinstance(app.screen, TextScreen)
        body = str(app.screen.body)
        for words in (
            "Allow once",
            "Restart",
            "Stderr log",
            "Auto-run tool",
            "Copy",
            "Command palette",
            "Stop the reply and its running tool calls, or the summaries being written",
            "Go to the prompt",
            "Run it unsaved",  # the dialogs that come up on their own: the not-saved one, a folder's mcp.json
            "Trust and start",
        ):
            assert words in body
        assert re.search(r"^ +u +Run it unsaved$", body, re.MULTILINE), "a plain u, as the dialog says"


async def test_typing_in_the_chat_pane_writes_the_prompt():
    from textual import events

    from mcp_chat_tui.ui.widgets.chat import ChatLog
    from mcp_chat_tui.ui.widgets.prompt import PromptInput

    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        prompt = app.query_one(PromptInput)

        def offered():
            return {b.binding.key for b in app.screen.active_bindings.values() if b.enabled and b.binding.show}

        # The keys of the other panes are offered, not that of the pane with the focus.
        assert {"f2", "f3", "f4"} <= offered() and "f5" not in offered()
        await pilot.press("f2")
        assert isinstance(app.focused, ChatLog)
        assert {"f3", "f4", "f5"} <= offered() and "f2" not in offered()
        await pilot.press("end", "pageup")  # keys that scroll the chat keep doing it
        assert isinstance(app.focused, ChatLog) and prompt.value == ""
        await pilot.press("h", "i", "space")
        await pilot.pause()
        assert prompt.has_focus and prompt.value == "hi "
        await pilot.press("f5", "left", "f2", "x")  # back in the prompt, the draft is kept as it was
        await pilot.pause()
        assert prompt.value == "hix " and prompt.cursor_position == 3
        prompt.value = "hi "
        await pilot.press("end", "f2")
        app.focused.post_message(events.Paste("there\nsecond line"))
        await pilot.pause()
        assert prompt.has_focus and prompt.value == "hi there"  # the prompt keeps one line of a paste
        await pilot.press("f2", "question_mark")  # the app's keys still work from the chat
        assert isinstance(app.screen, TextScreen)


async def test_command_palette_offers_the_app_commands():
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        for wanted in (
            "Restart server demo",
            "Toggle auto-run: demo › calculator",
            "Change theme: mcp-light",
            "Clear the chat",
            "Hide or show the sidebar",
        ):
            assert wanted in titles
        sidebar = app.query_one("#sidebar")
        [toggle] = [c for c in app.get_system_commands(app.screen) if c.title == "Hide or show the sidebar"]
        toggle.callback()
        assert not sidebar.display


async def test_themes_bad_file_is_reported_and_skipped_and_choice_is_saved(tmp_path):
    themes = tmp_path / "themes"
    themes.mkdir()
    (themes / "broken.toml").write_text("name = 'broken'\nprimary = 'not-a-colour'\n")
    (themes / "good.toml").write_text("name = 'good'\nprimary = '#336699'\n")
    from mcp_chat_tui.core.paths import bundled_path

    config = tmp_path / "config.toml"
    config.write_text("max_turns = 5\n")
    app = make_app(
        ScriptedEngine([]),
        settings=load_settings(config),
        settings_file=config,
        theme_dirs=[bundled_path("themes"), themes],
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert "good" in app.available_themes and "broken" not in app.available_themes
        assert app.theme == "mcp-dark"
        assert any("broken.toml" in str(n.message) for n in app._notifications)
        app.theme = "mcp-light"
        await wait_for(pilot, lambda: load_settings(config).theme == "mcp-light", what="the theme saved to config.toml")
    saved = load_settings(config)
    assert saved.theme == "mcp-light" and saved.max_turns == 5


async def test_text_before_a_tool_call_streams_then_the_card_follows():
    from mcp_chat_tui.engine.events import TextDelta

    engine = ScriptedEngine([[TextDelta("Let me check. "), call("calculator", {"expression": "1+1"})], "It is 2."])
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "x")
        await wait_turn_done(pilot, app, timeout=20)
        text = chat_text(app)
        assert "Let me check." in text and "It is 2." in text
        assert [r.state for r in app.calls_table.records.values()] == [CallState.DONE]


class SettledEngine(ScriptedEngine):
    """Sends each event once the app has handled every agent event posted before it, as a model
    does when the app keeps up with it (a slow machine under other tests' load may not)."""

    app = None

    async def stream(self, messages, tools=None, *, known_tools=None, aside=False):
        events = super().stream(messages, tools, known_tools=known_tools)
        try:
            async for event in events:
                while self.app.agent_view.agent_messages:
                    await asyncio.sleep(0.005)
                yield event
        finally:
            await events.aclose()


async def test_text_that_only_extends_the_open_part_of_a_reply_takes_no_message(monkeypatch):
    # Each message through the app's queue is work on its thread beside the model: text goes
    # straight into the reply's stream when nothing from the agent waits to be shown before it.
    # The first text (which opens the part), text with a blank line, and everything else still
    # come as messages, in order.
    from mcp_chat_tui.agent.events import AssistantText, CallProposed
    from mcp_chat_tui.ui.agent_messages import AgentMessage
    from mcp_chat_tui.ui.widgets.reply import AssistantReply

    posted = []
    original = ChatApp.post_message

    def post_message(self, message):
        if isinstance(message, AgentMessage):
            posted.append(type(message.event))
        return original(self, message)

    monkeypatch.setattr(ChatApp, "post_message", post_message)
    words = " ".join(f"word{n}" for n in range(20))
    engine = SettledEngine(
        [
            [
                TextDelta("Let me check "),
                TextDelta("that sum. "),
                TextDelta("One moment.\n\nStill here."),
                TextDelta(" Then: "),
                call("calculator", {"expression": "1+1"}),
            ],
            "It is 2. " + words,
        ]
    )
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    engine.app = app
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "x")
        await wait_turn_done(pilot, app, timeout=20)
        reply = app.chat.query(AssistantReply).last()
        assert [type(child).__name__ for child in reply.children] == [
            "ReplyHeader",
            "ReplyText",
            "ToolCallCard",
            "ReplyText",
        ]
        assert reply.text == "Let me check that sum. One moment.\n\nStill here. Then: It is 2. " + words
    texts = [kind for kind in posted if kind is AssistantText]
    assert len(texts) == 3, posted  # the first text of each part, and the one with a blank line
    assert CallProposed in posted


async def test_a_reply_that_starts_with_thinking_or_a_call_keeps_no_empty_text_part():
    # Each reply comes with its first text part ready (mounted before the model starts); a reply
    # that begins with something else lets it go rather than keep an empty part above it.
    from mcp_chat_tui.engine.events import ThinkingDelta
    from mcp_chat_tui.ui.widgets.reply import AssistantReply, ReplyMarkdown

    engine = ScriptedEngine(
        [
            [ThinkingDelta("first, think"), TextDelta("Thought it over.")],
            [call("calculator", {"expression": "1+1"})],
            "It is 2.",
            "Plain words.",
        ]
    )
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        for prompt in ("think", "add", "plain"):
            await send(pilot, prompt)
            await wait_turn_done(pilot, app, timeout=20)
        replies = list(app.chat.query(AssistantReply))
        parts = [[type(child).__name__ for child in reply.children] for reply in replies]
        assert parts == [
            ["ReplyHeader", "Collapsible", "ReplyText"],
            ["ReplyHeader", "ToolCallCard", "ReplyText"],
            ["ReplyHeader", "ReplyText"],
        ]
        assert not app.chat.query(ReplyMarkdown)
        text = chat_text(app)
        assert text.index("Thought it over.") < text.index("It is 2.") < text.index("Plain words.")


async def test_a_long_reply_is_split_only_at_paragraph_breaks_and_keeps_every_character():
    """Long streamed replies close their Markdown segment at paragraph breaks (so appending stays
    cheap): never inside a code fence or a list, and no text is lost or reordered."""
    from rich.markdown import Markdown as RichMarkdown

    from mcp_chat_tui.ui.widgets.reply import SEAL_AFTER, AssistantReply

    def block(k: int) -> str:  # blocks of varying length, so the segments end at different places
        return (
            "A short paragraph. " * (k % 3 + 1) + "\n\n"
            "```python\n"
            + "".join(f"x{i} = {i}\n\n" for i in range(k % 7 + 30))
            + "```\n\n"
            + "".join(f"- item {i}\n\n" for i in range(k % 5 + 20))
            + "Closing words.\n\n"
        )

    source = "".join(block(k) for k in range(30))
    assert len(source) > 7 * SEAL_AFTER
    pieces = [source[i : i + 3] for i in range(0, len(source), 3)]
    app = make_app(ScriptedEngine([[TextDelta(piece) for piece in pieces]]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "write a lot")
        await wait_turn_done(pilot, app, timeout=120)
        reply = app.query_one(AssistantReply)
        assert reply.text == source
        assert app.agent.messages[-1]["content"] == source
        shown = [
            widget.content.markup for widget in reply.query(".reply-text") if isinstance(widget.content, RichMarkdown)
        ]
        assert len(shown) >= 6 and "".join(shown) == source
        for part in shown:
            assert part.count("```") % 2 == 0, part[-200:]
            assert not re.search(r"- item \d+\s*$", part), part[-200:]  # a loose list stays one list


async def test_status_bar_follows_the_turn_through_approval_and_the_tool_run():
    """The states the turn went through, as they were set: the tool's run is brief (0 s), so a test
    that polled the screen for "running tools" would miss it on a busy machine."""
    engine = ScriptedEngine([[call("sleep", {"seconds": 0})], "done waiting"])
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        welcome = chat_text(app)
        assert "scripted is ready with 6 tools from 1 server" in welcome
        assert "You approve each tool call before it runs" in welcome
        states = record_states(app)
        await send(pilot, "wait a bit")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="dialog")
        assert app.status_bar.engine_state == "awaiting approval"
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        assert app.status_bar.engine_state == "ready"
        assert "done waiting" in chat_text(app)
    assert [state for state in states if state != "generating"] == ["awaiting approval", "running tools", "ready"]
    assert states.index("running tools") < len(states) - 1 - states[::-1].index("generating")  # then the answer


async def test_the_sidebar_never_scrolls_sideways_however_long_the_arguments():
    engine = ScriptedEngine([[call("web_search", {"query": "x" * 300})], "nothing found"])
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "search")
        await wait_turn_done(pilot, app)
        await pilot.pause()
        table = app.calls_table
        assert table.virtual_size.width <= table.size.width  # the columns fit the pane…
        assert str(table.get_cell("call-1", "args")).endswith("…")  # …the arguments cut to theirs
        assert not table.show_horizontal_scrollbar
        assert table.scroll_x == 0


async def test_the_status_bar_shows_the_rate_while_the_model_writes():
    reply = [TextDelta("counting "), Throughput(12, 42.5), TextDelta("one "), TextDelta("two")]
    app = make_app(ScriptedEngine([reply], delay=0.4))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "count")
        await wait_for(pilot, lambda: app.status_bar.detail == "42.5 tok/s", what="the live rate")
        assert app.status_bar.engine_state == "generating"
        await wait_turn_done(pilot, app)


class Clocks:
    """A CPU clock and a wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.cpu = self.wall = 0.0

    def spend(self, cpu: float, wall: float | None = None) -> None:
        self.cpu += cpu
        self.wall += cpu if wall is None else wall


BUSY = drawing_share(1.0)  # the share of a core left to the app when each second of it costs the model one


def test_a_streaming_reply_is_drawn_less_often_when_drawing_is_costly():
    # Over the reply the app's thread keeps to its share of a core: what it spent beyond it is
    # waited off before the next redraw, never longer than the longest pause.
    clocks = Clocks()
    budget = DrawingBudget(lambda: 1.0, lambda: clocks.cpu, lambda: clocks.wall)
    clocks.spend(0.001, wall=PACE)  # a cheap update
    assert budget.further_wait(since_update=PACE) == 0.0
    clocks.spend(0.3 * BUSY, wall=PACE)  # a costly one: 0.3 s of waiting at the share left
    assert budget.further_wait(since_update=PACE) == pytest.approx(0.3 - PACE + budget_credit(0.001))
    clocks.spend(0.0, wall=budget.further_wait(PACE))  # it waits that long: nothing more is owed
    assert budget.further_wait(since_update=0.0) == 0.0
    clocks.spend(0.2, wall=PACE)  # very costly: the text still waits no longer than the longest pause
    assert budget.further_wait(since_update=PACE) == pytest.approx(MAX_PACE - PACE)
    assert budget.further_wait(since_update=MAX_PACE + 0.1) == 0.0
    assert budget.owed == MAX_PACE  # owed no more than that: cheap updates soon draw at full pace again
    clocks.spend(0.001, wall=MAX_PACE + PACE)
    assert budget.further_wait(since_update=PACE) == 0.0


def budget_credit(cpu: float) -> float:
    """Seconds of credit a cheap update leaves beside a busy model: PACE passed, ``cpu`` was spent."""
    return cpu / BUSY - PACE


def test_the_start_of_a_reply_is_paid_for_and_a_quiet_spell_buys_little():
    clocks = Clocks()
    budget = DrawingBudget(lambda: 1.0, lambda: clocks.cpu, lambda: clocks.wall)
    clocks.spend(0.4 * BUSY, wall=0.05)  # the prompt and the reply appear, the first text comes
    clocks.spend(0.1 * BUSY, wall=0.0)  # the first text is drawn at once
    assert budget.further_wait(since_update=0.0) == pytest.approx(0.5 - 0.05)
    quiet = DrawingBudget(lambda: 1.0, lambda: clocks.cpu, lambda: clocks.wall)
    clocks.spend(0.0, wall=30.0)  # a tool runs for half a minute
    clocks.spend(1.2 * BUSY, wall=0.0)  # then a costly redraw: 1.2 s owed, less at most MAX_PACE of credit
    assert quiet.further_wait(since_update=0.0) == pytest.approx(1.2 - MAX_PACE)


def test_the_busier_the_model_the_less_the_app_draws():
    # Drawing costs the model in proportion to the share of the time its thread needs the
    # interpreter, and a whole core more when the process leaves none spare.
    assert drawing_cost(0.0, spare_cores=8.0) == 0.0  # a remote model
    assert drawing_cost(0.1, spare_cores=7.8) == pytest.approx(0.1)  # a large model on a GPU
    assert drawing_cost(0.65, spare_cores=6.5) == pytest.approx(0.65)  # a small model, 8 cores
    assert drawing_cost(0.65, spare_cores=0.55) == pytest.approx(1.1)  # the same on 2 cores
    assert drawing_cost(1.0, spare_cores=0.0) == pytest.approx(2.0)
    # The app's thread keeps its CPU to the share of a core that costs the model MODEL_SLOWDOWN.
    assert drawing_share(0.0) == MAX_SHARE
    assert drawing_share(MODEL_SLOWDOWN / MAX_SHARE) == MAX_SHARE
    assert drawing_share(0.5) == pytest.approx(2 * MODEL_SLOWDOWN)
    assert drawing_share(1.0) == pytest.approx(MODEL_SLOWDOWN)
    assert drawing_share(1.1) * 1.1 == pytest.approx(drawing_share(0.65) * 0.65)  # the same cost to the model
    # The same redraw waits longer beside a busy model, and the cost is read at each redraw.
    clocks, cost = Clocks(), [0.0]
    budget = DrawingBudget(lambda: cost[0], lambda: clocks.cpu, lambda: clocks.wall)
    clocks.spend(0.05, wall=PACE)  # 0.2 s of waiting at a quarter of a core
    assert budget.further_wait(since_update=PACE) == pytest.approx(0.05 / MAX_SHARE - PACE)
    clocks.spend(0.0, wall=budget.further_wait(PACE))  # waited off
    cost[0] = 0.8  # the model turns out busy
    clocks.spend(0.01, wall=PACE)  # a tenth of the CPU now makes it wait longer
    assert budget.further_wait(since_update=PACE) == pytest.approx(0.01 / drawing_share(0.8) - PACE)
    assert 0.01 / drawing_share(0.8) > 0.05 / MAX_SHARE


class BusyModel(ScriptedEngine):
    """A scripted engine reporting that its generating thread runs all of the time, and the
    process leaves no core spare."""

    class thread_load:
        share = 1.0
        spare_cores = 0.0


async def redraws_of_a_streaming_reply(engine: ScriptedEngine, monkeypatch) -> int:
    """How often the reply's Markdown took in new text while 30 words came over 1.5 s."""
    from mcp_chat_tui.ui.widgets import reply

    updates = []
    original = reply.ReplyMarkdown.append

    def append(self, markdown):
        updates.append(markdown)
        return original(self, markdown)

    monkeypatch.setattr(reply.ReplyMarkdown, "append", append)
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "count")
        await wait_turn_done(pilot, app)
        assert "word29" in chat_text(app)
    return len(updates)


async def test_the_chat_redraws_less_beside_a_model_whose_thread_is_busy(monkeypatch):
    reply = " ".join(f"word{n}" for n in range(30))
    idle = await redraws_of_a_streaming_reply(ScriptedEngine([reply], delay=0.05), monkeypatch)
    busy = await redraws_of_a_streaming_reply(BusyModel([reply], delay=0.05), monkeypatch)
    assert busy < idle, (busy, idle)


class WatchingEngine(ScriptedEngine):
    """Notes, each time it is asked for a reply, how many prompts, reply headers and Markdown
    widgets for replies the app's screen has been laid out and drawn with."""

    def __init__(self, replies: list) -> None:
        super().__init__(replies)
        self.app = None
        self.drawn: list[tuple[int, int]] = []

    def stream(self, messages, tools=None, *, known_tools=None, aside=False):
        from textual.errors import NoWidget

        from mcp_chat_tui.ui.widgets.chat import UserMessage
        from mcp_chat_tui.ui.widgets.reply import ReplyHeader, ReplyMarkdown

        def on_screen(kind) -> int:
            placed = 0
            for widget in self.app.chat.query(kind):
                try:
                    self.app.screen.find_widget(widget)  # placed by the last layout
                except NoWidget:
                    continue
                placed += 1
            return placed

        self.drawn.append((on_screen(UserMessage), on_screen(ReplyHeader), on_screen(ReplyMarkdown)))
        return super().stream(messages, tools, known_tools=known_tools)


async def test_the_model_starts_once_the_prompt_and_the_reply_header_are_drawn():
    # Drawing that frame takes the app's thread 10-20 ms; beside a model generating on a CPU
    # it would take the same from the model. The Markdown widget the reply's text will stream
    # into is mounted in it too (the earlier reply's has become static text by then).
    engine = WatchingEngine(["first answer", "second answer"])
    app = make_app(engine, servers=[])
    engine.app = app
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        for prompt in ("one", "two"):
            await send(pilot, prompt)
            await wait_turn_done(pilot, app)
        assert "second answer" in chat_text(app)
    assert engine.drawn == [(1, 1, 1), (2, 2, 1)]


async def test_a_stream_about_to_give_way_leaves_the_rest_out_of_its_widget():
    # Closing a reply, or a long part of one, puts a static rendering of the whole text in the
    # place of the Markdown widget: parsing the text that had not been taken in yet, into a
    # widget about to go, would be work on the app's thread for nothing.
    from textual.app import App

    from mcp_chat_tui.ui.streaming import PacedMarkdownStream
    from mcp_chat_tui.ui.widgets.reply import ReplyMarkdown

    shown = {}
    for show_the_rest in (True, False):
        app = App()
        async with app.run_test() as pilot:
            widget = ReplyMarkdown()
            await app.mount(widget)
            stream = PacedMarkdownStream(widget, DrawingBudget(lambda: 1.0))
            stream.start()
            await stream.write("first words ")  # the first text is taken in at once
            await pilot.pause()
            await stream.write("and the rest")  # waits for the next update
            await stream.stop(show_the_rest=show_the_rest)
            shown[show_the_rest] = widget.source
    assert shown == {True: "first words and the rest", False: "first words "}


async def test_the_first_reply_adds_no_styles_to_parse():
    """A new style source makes Textual parse every style sheet again (a tenth of a second on a
    slow machine, taken from the model writing): the chat's styles come with the panes."""
    reply = (
        "# Plan\n\nSome *text* and `code`.\n\n- one\n- two\n\n1. first\n\n> quoted\n\n"
        "```python\nprint(1)\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\nDone."
    )
    app = make_app(ScriptedEngine([reply], delay=0.01), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        sources = set(app.stylesheet.source)
        await send(pilot, "show me everything")
        await wait_turn_done(pilot, app)
        assert set(app.stylesheet.source) == sources


async def test_on_a_narrow_terminal_the_chat_keeps_more_than_half_the_width():
    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        chat, sidebar = app.query_one("#chat-column"), app.query_one("#sidebar")
        assert chat.size.width > 40 and chat.size.width > sidebar.size.width
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert sidebar.outer_size.width == 90  # the sidebar grows with the terminal (45%); the chat keeps the rest
        assert chat.size.width > sidebar.outer_size.width


async def test_a_streaming_paragraph_grows_on_screen_while_it_is_written():
    """Mid-reply, the open Markdown segment is as tall as the text it has taken in needs (a
    redraw optimisation once left a growing paragraph one line high until the reply ended)."""
    words = " ".join(f"word{index}" for index in range(600))
    app = make_app(ScriptedEngine([words], delay=0.005), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "ramble")
        await wait_for(
            pilot,
            lambda: (
                app.reply.widget is not None
                and app.reply.widget._segment is not None
                and len(app.reply.widget._segment.source) > 1500
            ),
            what="a long paragraph",
        )
        await pilot.pause(MAX_PACE + 0.2)  # one redraw at least since
        segment = app.reply.widget._segment
        shown = len(segment.source)
        assert segment.size.height >= 0.8 * shown / segment.size.width, (shown, segment.size)
        await wait_turn_done(pilot, app)


class GatedEngine(ScriptedEngine):
    """Plays each part of one reply, then waits for ``go`` to be set before going on."""

    def __init__(self, parts: list[str]) -> None:
        super().__init__([])
        self.parts = parts
        self.go = asyncio.Event()

    async def stream(self, messages, tools=None, *, known_tools=None, aside=False):
        for _index, part in enumerate(self.parts):
            for start in range(0, len(part), 7):
                await asyncio.sleep(0.002)
                yield TextDelta(part[start : start + 7])
            await self.go.wait()
            self.go.clear()
        yield Stats(10, 10, 100, 0.01, 100.0, 0.0)
        yield Done("stop")


def block_shapes(markdown) -> list[tuple[str, int, int]]:
    return [(type(block).__name__, block.size.width, block.size.height) for block in markdown.query(MarkdownBlock)]


async def test_the_prompt_cursor_holds_still_while_a_reply_is_written():
    from mcp_chat_tui.ui.widgets.prompt import PromptInput

    async def cursor_states(pilot, prompt) -> set[bool]:
        seen = set()
        for _ in range(12):  # 1.2 s: the cursor blinks every 0.5 s
            seen.add(prompt._cursor_visible)
            await pilot.pause(0.1)
        return seen

    async def blinking(pilot, prompt) -> set[bool]:
        """The states the cursor shows until it has shown both (a blinking one within 0.5 s), for 6 s
        at most: the blinks are awaited, not sampled over a fixed time."""
        seen = {prompt._cursor_visible}
        for _ in range(120):
            await pilot.pause(0.05)
            seen.add(prompt._cursor_visible)
            if len(seen) == 2:
                break
        return seen

    async def let_the_turn_end(pilot, app, engine) -> None:
        while app.turns.running:
            engine.go.set()
            await pilot.pause(0.05)
        await wait_turn_done(pilot, app)

    engine = GatedEngine(["Part one. ", "Part two."])
    app = make_app(engine, servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        prompt = app.query_one(PromptInput)
        assert await blinking(pilot, prompt) == {True, False}
        await send(pilot, "go")
        await wait_for(pilot, lambda: "Part one" in chat_text(app), what="the first part")
        assert await cursor_states(pilot, prompt) == {True}
        engine.go.set()
        await wait_for(pilot, lambda: "Part two" in chat_text(app), what="the second part")
        engine.go.set()
        await wait_turn_done(pilot, app)
        assert await blinking(pilot, prompt) == {True, False}
        # Out of focus when the turn ends: no blink until the prompt has the focus again.
        await send(pilot, "again")
        await wait_for(pilot, lambda: app.reply.is_open, what="the next reply")
        app.query_one("#chat").focus()
        await let_the_turn_end(pilot, app, engine)
        assert len(await cursor_states(pilot, prompt)) == 1
        prompt.focus()
        assert await blinking(pilot, prompt) == {True, False}
        # A cursor set not to blink before the turn does not blink after it either.
        prompt.cursor_blink = False
        await send(pilot, "once more")
        await let_the_turn_end(pilot, app, engine)
        assert not prompt.cursor_blink and await cursor_states(pilot, prompt) == {True}


async def test_the_updates_of_a_streaming_reply_share_one_parser(monkeypatch):
    """Textual's Markdown widget builds a Markdown parser for every update; the reply's takes
    the one shared parser."""
    from mcp_chat_tui.ui.widgets.reply import ReplyMarkdown

    built = []

    class CountedParser(_markdown.MarkdownIt):
        def __init__(self, *args, **kwargs) -> None:
            built.append(self)
            super().__init__(*args, **kwargs)

    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        plain, streamed = Markdown(), ReplyMarkdown()
        await app.chat.mount_all([plain, streamed])
        monkeypatch.setattr(_markdown, "MarkdownIt", CountedParser)
        counts = {}
        for widget in (plain, streamed):
            built.clear()
            for part in ("# Notes\n\n", "A paragraph *with* emphasis ", "and more.\n\n- one\n", "- two\n"):
                await widget.append(part)
            counts[type(widget).__name__] = len(built)
        await pilot.pause()
        assert counts == {"Markdown": 4, "ReplyMarkdown": 0}
        assert block_shapes(streamed) == block_shapes(plain)


async def test_a_streaming_reply_is_laid_out_as_the_same_markdown_shown_whole():
    """The reply's Markdown takes one layout per update (``OneLayoutPass``): stopped part-way
    through a list, a wide code block, a table and at the end, every block of it is as wide and
    as tall as Textual's own Markdown widget lays out the same text, and so is the whole."""
    from mcp_chat_tui.ui.widgets.reply import AssistantReply

    parts = [
        "# Findings\n\n"
        + "A paragraph long enough to wrap over several lines of the chat. " * 6
        + "\n\n- one\n- two\n",
        "- three, an item that goes on " + "and on " * 20 + "\n\n```python\nrows = [" + "'cell', " * 30,
        "]\nprint(rows)\n```\n\n| name | value |\n|---|---|\n| a | 1 |\n",
        "| b | " + "long value " * 12 + "|\n\n> quoted " + "words " * 30 + "\n\nDone.",
    ]
    engine = GatedEngine(parts)
    app = make_app(engine, servers=[])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "report")
        shown = ""
        for part in parts:
            shown += part
            await wait_for(
                pilot,
                lambda: (
                    app.reply.widget is not None
                    and app.reply.widget._segment is not None
                    and app.reply.widget._segment.source == shown
                ),
                what="the part to be shown",
            )
            await pilot.pause(MAX_PACE + 0.1)
            segment = app.reply.widget._segment
            holder = AssistantReply("reference")  # the same styles around it as the reply's
            await app.chat.mount(holder)
            reference = Markdown(shown)
            await holder.mount(reference)
            await pilot.pause()
            assert block_shapes(segment) == block_shapes(reference)
            assert segment.size == reference.size
            await holder.remove()
            engine.go.set()
        await wait_turn_done(pilot, app)


async def test_an_update_of_a_streaming_reply_is_one_layout(monkeypatch):
    """With a plain Markdown widget each update of a growing reply is laid out twice (the second
    layout only finds the new sizes stored by the first); the reply's widgets take one."""
    from textual.screen import Screen

    from mcp_chat_tui.ui.widgets.reply import AssistantReply, ReplyMarkdown

    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        reply = AssistantReply("model")
        await app.chat.mount(reply)
        plain, streamed = Markdown(), ReplyMarkdown()
        await reply.mount(plain)
        await reply.mount(streamed)
        for widget in (plain, streamed):  # a first paragraph: mounting it is a layout of its own
            await widget.append("The start. ")
        layouts = []
        original = Screen._refresh_layout

        def counting(screen, *args, **kwargs):
            layouts.append(screen)
            return original(screen, *args, **kwargs)

        monkeypatch.setattr(Screen, "_refresh_layout", counting)
        counts = {}
        for widget in (plain, streamed):
            for _ in range(3):  # each append makes the paragraph (and all around it) taller
                # Counted from a quiet screen (a loaded machine lays out the start's last changes
                # late) until the screen is quiet again (it may take the second layout late too).
                await settle_layouts(pilot, layouts)
                await widget.append("words that wrap over the width of the chat " * 4)
                await settle_layouts(pilot, layouts, keep=True)
                counts.setdefault(type(widget).__name__, []).append(len(layouts))
        monkeypatch.setattr(Screen, "_refresh_layout", original)
        assert counts == {"Markdown": [2, 2, 2], "ReplyMarkdown": [1, 1, 1]}
        assert block_shapes(streamed) == block_shapes(plain)


async def settle_layouts(pilot, layouts: list, quiet: float = 0.2, limit: int = 100, keep: bool = False) -> None:
    """Wait until a ``quiet`` pause passes with no layout (a loaded machine finishes the start's later),
    then clear ``layouts`` unless ``keep``."""
    for _ in range(limit):
        seen = len(layouts)
        await pilot.pause(quiet)
        if len(layouts) == seen:
            if not keep:
                layouts.clear()
            return
    raise AssertionError(f"the screen was still laying out after {limit} pauses: {layouts[-3:]}")


async def test_no_layout_of_a_reply_finds_nothing_to_move(monkeypatch):
    """A prompt, a reply, its first paragraph, its closing and a notice appearing each take one
    layout: none comes after them only to find every widget where it already is (a new widget's
    first size, or text a Markdown block was given before it was mounted, asked for one)."""
    from textual._compositor import Compositor

    from mcp_chat_tui.ui.widgets.chat import Notice, UserMessage
    from mcp_chat_tui.ui.widgets.reply import AssistantReply

    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        layouts = []  # per layout: the widgets it placed anew, moved or resized
        original = Compositor.reflow

        def reflow(compositor, parent, size):
            before = dict(compositor._full_map)
            result = original(compositor, parent, size)
            layouts.append([type(w).__name__ for w, place in compositor._full_map.items() if before.get(w) != place])
            return result

        monkeypatch.setattr(Compositor, "reflow", reflow)
        # On a loaded machine the screen may lay out between a widget's mount and the end of
        # Textual's ``await mount`` (whose own layout then finds nothing to move): a race outside
        # the app's widgets, so the steps get three tries; a layout asked for needlessly fails all.
        tries = []
        for _ in range(3):
            await app.chat.clear()
            await settle_layouts(pilot, layouts)  # the start's last layouts (the footer's keys) are not the chat's
            await app.chat.add_prompt(UserMessage("hi"))
            await pilot.pause(0.1)
            reply = AssistantReply("model")
            await app.chat.mount(reply)
            await pilot.pause(0.1)
            await reply.append_text("Hello there, a short reply.")
            await pilot.pause(MAX_PACE + 0.1)
            await reply.finish("stopped")
            await pilot.pause(0.1)
            await app.chat.mount(Notice("a notice"))
            await pilot.pause(0.1)
            assert "short reply" in chat_text(app)
            tries.append(list(layouts))
            if len(layouts) >= 5 and all(layouts):
                break
        monkeypatch.setattr(Compositor, "reflow", original)
        assert len(tries[-1]) >= 5 and all(tries[-1]), tries
