"""What the full-screen app shows is true: keys never act on a hidden pane, the status bar reads
as English in every phase, key names are written as a person writes them.

The real app with the real demo server (and a fixture server that never answers, where start-up
must be held), a scripted model; driven with Pilot.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from rich.text import Text
from textual.command import CommandList, CommandPalette
from textual.widgets import Input

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import Settings
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.engine.events import LoadProgress, TextDelta, Throughput
from mcp_chat_tui.servers import ServerState
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config, fixture_config
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

PANE_LETTERS = ["a", "t", "T", "r", "l", "j", "k", "y", "n", "c", "q"]


def auto_run_tools(app) -> set[str]:
    return {spec.name for spec in app.hub.tools() if app.policy.runs_without_asking(spec)}


async def one_approved_call(pilot, app) -> None:
    """A finished calculator call, so the calls table has a row ``a`` would act on."""
    await wait_ready(pilot, app)
    await send(pilot, "calc")
    await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the dialog")
    await pilot.press("y")
    await wait_turn_done(pilot, app)


async def press_letters(pilot) -> None:
    await pilot.press(*PANE_LETTERS)
    await pilot.pause()


@pytest.mark.parametrize("pane_key", ["f3", "f4"])
async def test_hiding_the_sidebar_takes_the_focus_to_the_prompt_and_its_keys_do_nothing(pane_key):
    app = make_app(ScriptedEngine([[call("calculator", {"expression": "1+1"})], "2"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await one_approved_call(pilot, app)
        await pilot.press(pane_key)
        assert app.focused in (app.calls_table, app.servers_table)
        await pilot.press("ctrl+b")
        assert not app.query_one("#sidebar").display
        prompt = app.query_one(PromptInput)
        assert app.focused is prompt
        await press_letters(pilot)
        assert prompt.value == "".join(PANE_LETTERS)  # typing went to the prompt…
        assert auto_run_tools(app) == set()  # …and no tool was switched to auto-run unseen
        assert app.hub.status("demo").restarts == 0
        assert app.screen is app.screen_stack[0]  # no log or detail screen opened
        await pilot.press("ctrl+b")  # shown again, the focus stays where the typing went
        assert app.query_one("#sidebar").display and app.focused is prompt


async def test_hiding_the_sidebar_from_the_command_palette_takes_the_focus_to_the_prompt():
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4", "ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        app.screen.query_one(Input).value = "Hide or show the sidebar"
        await wait_for(pilot, lambda: app.screen.query_one(CommandList).option_count > 0, what="the palette's match")
        await pilot.press("down", "enter")
        await wait_for(
            pilot,
            lambda: app.screen is app.screen_stack[0] and not app.query_one("#sidebar").display,
            what="the sidebar hidden",
        )
        await press_letters(pilot)
        assert app.query_one(PromptInput).value == "".join(PANE_LETTERS)
        assert auto_run_tools(app) == set() and app.hub.status("demo").restarts == 0


async def test_with_a_call_running_and_the_sidebar_hidden_letters_go_to_the_prompt():
    app = make_app(ScriptedEngine([[call("sleep", {"seconds": 30})], "slept"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "sleep")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the dialog")
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: [r.state for r in app.calls_table.records.values()] == [CallState.RUNNING],
            what="the call running",
        )
        await pilot.press("f3", "ctrl+b")
        await press_letters(pilot)
        assert app.query_one(PromptInput).value == "".join(PANE_LETTERS)
        assert auto_run_tools(app) == set()
        assert app.turns.running  # the letters stopped nothing
        await pilot.press("escape")
        await wait_turn_done(pilot, app, left_in_prompt="".join(PANE_LETTERS))


async def test_with_the_approval_dialog_open_the_pane_keys_do_not_act_behind_it():
    app = make_app(ScriptedEngine([[call("calculator", {"expression": "1+1"})], "2"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "calc")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the dialog")
        main = app.screen_stack[0]
        await pilot.press("f3", "f4", "ctrl+b", "f2")
        assert isinstance(app.screen, ApprovalScreen)
        assert app.query_one("#sidebar").display
        assert isinstance(main.focused, PromptInput)
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        assert app.focused is app.query_one(PromptInput)
        assert auto_run_tools(app) == set()


class GatedEngine(ScriptedEngine):
    """A scripted model whose loading lasts until the test lets it finish."""

    def __init__(self, replies: list, **options) -> None:
        super().__init__(replies, **options)
        self.loaded = asyncio.Event()

    async def load(self, on_progress=None) -> None:
        if on_progress is not None:
            on_progress(LoadProgress("load", 0, 1, "loading scripted"))
        await self.loaded.wait()
        if on_progress is not None:
            on_progress(LoadProgress("load", 1, 1, "loaded scripted"))


def status_line(app) -> str:
    return str(app.status_bar.render())


# A starting server is shown with its time and, once it has printed on stderr, its last line: the mute
# fixture prints "fixture mute starting" once it has imported mcp, which a loaded machine's app may see
# before it shows the first phases of start-up (it did under `stress --cpu 4`).
MUTE_STARTING = ("starting mute, 120 ms…", "starting mute, 120 ms: fixture mute starting")


async def wait_status(pilot, app, wanted: str) -> None:
    """Until the status bar is the whole line ``wanted``, with either of ``MUTE_STARTING`` for ``{mute}``."""
    lines = {wanted.format(mute=shown) for shown in MUTE_STARTING}
    await wait_for(pilot, lambda: status_line(app) in lines, what=f"status {wanted!r} (now {status_line(app)!r})")


async def test_the_status_bar_reads_as_english_through_start_up_and_a_turn():
    """Each phase and what the status bar says in it, the whole line."""
    engine = GatedEngine(
        # The call runs long enough for a loaded machine's checks to see it running.
        [[TextDelta("counting "), Throughput(12, 42.5), call("sleep", {"seconds": 3})], "done"],
        delay=0.3,
    )
    # Starting until 3 s after its last sign of life (its "starting" line, once it has imported mcp):
    # the three phases of start-up are seen before then; the turn waits that time out in full.
    mute = fixture_config("mute", "--never-answer", init_timeout=3)
    app = make_app(engine, [demo_config(), mute], settings=Settings(on_server_failure="continue"))
    phases = [
        (
            "model loading, a server starting",
            "scripted  ·  loading the model; {mute}  ·  1/2 servers · 6 tools",
        ),
        (
            "a message typed meanwhile",
            "scripted  ·  loading the model; {mute}  ·  1 message waiting  ·  1/2 servers · 6 tools",
        ),
        (
            "the model loaded, a server starting",
            "scripted  ·  {mute}  ·  1 message waiting  ·  1/2 servers · 6 tools",
        ),
        ("generating", "scripted  ·  generating 42.5 tok/s  ·  1/2 servers · 6 tools"),
        (
            "a call awaiting approval",
            "scripted  ·  awaiting approval  ·  13 tokens  ·  1/2 servers · 6 tools",
        ),
        ("a call running", "scripted  ·  running tools  ·  13 tokens  ·  1/2 servers · 6 tools"),
        ("ready", "scripted  ·  ready  ·  11 tokens  ·  1/2 servers · 6 tools"),
        ("leaving", "scripted  ·  shutting down the servers…  ·  11 tokens  ·  0/2 servers · 0 tools"),
    ]
    expected = dict(phases)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.hub.status("demo").state is ServerState.READY, what="the demo server")
        await wait_status(pilot, app, expected["model loading, a server starting"])
        app.query_one(PromptInput).value = "count"
        await pilot.press("enter")
        await wait_status(pilot, app, expected["a message typed meanwhile"])
        engine.loaded.set()
        await wait_status(pilot, app, expected["the model loaded, a server starting"])
        await wait_status(pilot, app, expected["generating"])  # the chat opened at mute's init timeout
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the dialog")
        await wait_status(pilot, app, expected["a call awaiting approval"])
        await pilot.press("y")
        await wait_status(pilot, app, expected["a call running"])
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: app.hub.status("mute").state is ServerState.FAILED, 15, "the mute server to fail")
        await wait_status(pilot, app, expected["ready"])
        await app.shutdown()
        assert status_line(app) == expected["leaving"]


async def test_a_server_that_fails_at_start_up_is_not_shown_as_the_model_failing():
    app = make_app(ScriptedEngine([]), [demo_config(), fixture_config("broken", "--exit-during-init")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert app.fatal_error is None  # the app goes on without it, and says so in the chat
        assert "continuing without broken: the server exited with code 3" in chat_text(app)
        assert status_line(app) == "scripted  ·  ready  ·  1/2 servers · 6 tools"


async def test_a_model_that_fails_to_load_is_named_as_what_failed():
    class Broken(ScriptedEngine):
        async def load(self, on_progress=None) -> None:
            raise RuntimeError("no weights")

    app = make_app(Broken([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert status_line(app).startswith("scripted  ·  failed to load the model")


LONG_SERVER = "fixture-server-with-a-long-name-" + "n" * 170


def long_cells_app():
    """The demo server and a server with a long name offering a tool with a 200-character name; both
    called with long arguments, without asking."""
    servers = [demo_config(), fixture_config(LONG_SERVER, "--long-tool-name", "200", in_process=True)]
    return make_app(ScriptedEngine([]), servers, policy=ApprovalPolicy("auto"))


async def call_long_cells(pilot) -> None:
    app = pilot.app
    await wait_ready(pilot, app)
    for field in app.query(Input):
        field.cursor_blink = False
    long_tool = next(spec for spec in app.hub.tools() if spec.name.startswith("long_"))
    app.engine.replies += [
        [
            call("calculator", {"expression": " + ".join(["1"] * 100)}),
            call(long_tool.model_name, {"text": "y" * 300}, "call_2"),
        ],
        "done",
    ]
    await send(pilot, "go")
    await wait_turn_done(pilot, app)
    await pilot.pause()


def visible_end(table, column_key: str) -> int:
    """The screen column (in the table) where ``column_key`` ends."""
    end = 0
    for column in table.ordered_columns:
        end += column.get_render_width(table)
        if column.key.value == column_key:
            return end
    raise KeyError(column_key)


@pytest.mark.parametrize("size", [(80, 24), (60, 16), (140, 40)])
async def test_the_sidebar_cuts_long_names_with_an_ellipsis_and_keeps_the_state_whole(size):
    app = long_cells_app()
    async with app.run_test(size=size) as pilot:
        await call_long_cells(pilot)
        calls, servers = app.calls_table, app.servers_table
        for table, state_column, _names in (
            (calls, "state", ("call-1", "call-2")),
            (servers, "state", ("demo", LONG_SERVER)),
        ):
            assert visible_end(table, state_column) <= table.scrollable_content_region.width, table.id
        tool_width = calls.columns["tool"].get_render_width(calls)
        for key in ("call-1", "call-2"):  # a narrow sidebar shows a call on two lines: the first is its name
            state = str(calls.get_cell(key, "state")).splitlines()[0]
            assert state == "✓ done"
            tool = str(calls.get_cell(key, "tool")).splitlines()[0]
            assert tool.endswith("⚡") and Text(tool).cell_len < tool_width
        long_tool = str(calls.get_cell("call-2", "tool")).splitlines()[0]
        server, tool = long_tool.split("›")  # the server named on every row, cut first; then the tool's name
        assert server.endswith("…") and "fixture".startswith(server[:-1]) and tool.startswith("long_")
        long_server = str(servers.get_cell(LONG_SERVER, "server"))
        assert long_server.endswith("…") and LONG_SERVER.startswith(long_server[:-1])
        assert str(servers.get_cell(LONG_SERVER, "state")) == "● ready"


async def test_a_wider_terminal_shows_more_of_a_cut_name():
    app = long_cells_app()
    async with app.run_test(size=(60, 16)) as pilot:
        await call_long_cells(pilot)
        narrow = str(app.servers_table.get_cell(LONG_SERVER, "server"))
        await pilot.resize_terminal(140, 40)
        await wait_for(
            pilot,
            lambda: len(str(app.servers_table.get_cell(LONG_SERVER, "server"))) > len(narrow),
            what="the name cut to the wider pane",
        )
        assert str(app.calls_table.get_cell("call-1", "tool")) == "demo›calculator ⚡"


TEXTUAL_NAMES = re.compile(r"question_mark|escape|ctrl\+|shift\+|\benter\b|\btab\b|\bf\d\b")


async def test_f1_and_the_footer_write_keys_as_a_person_does():
    from textual.widgets._footer import FooterKey

    from mcp_chat_tui.ui.screens.detail import TextScreen

    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        footer_keys = {key.key_display for key in app.screen.query(FooterKey)}
        assert {"Ctrl+C", "Esc", "F1", "F2", "Ctrl+B", "Ctrl+P"} <= footer_keys, footer_keys
        assert not any(TEXTUAL_NAMES.search(key) for key in footer_keys), footer_keys
        await pilot.press("f1")
        assert isinstance(app.screen, TextScreen)
        body = app.screen.body.plain
        key_column = [line[2:20].strip() for line in body.splitlines() if line.startswith("  ")]
        for written in (
            "?",
            "Esc",
            "Ctrl+B",
            "Ctrl+C",
            "Ctrl+P",
            "Enter",
            "Tab",
            "Shift+Tab",
            "F1",
            "Up",
            "s, Esc",
            "Esc, q",
        ):
            assert written in key_column, written
        assert not any(TEXTUAL_NAMES.search(keys) for keys in key_column), key_column


def test_key_names_are_written_as_on_the_keyboard():
    from mcp_chat_tui.ui.keys import key_name

    assert [
        key_name(k)
        for k in (
            "question_mark",
            "escape",
            "ctrl+b",
            "enter",
            "tab",
            "shift+tab",
            "f1",
            "T",
            "a",
            "up",
            "pagedown",
            "space",
            "plus",
        )
    ] == ["?", "Esc", "Ctrl+B", "Enter", "Tab", "Shift+Tab", "F1", "T", "a", "Up", "PgDn", "Space", "+"]


async def test_s_in_the_approval_dialog_denies_every_waiting_call_and_stops_the_turn():
    engine = ScriptedEngine(
        [[call("calculator", {"expression": "1+1"}, "c1"), call("current_time", {}, "c2")], "never said"]
    )
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "two calls")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the dialog")
        await pilot.press("s")
        await wait_turn_done(pilot, app)
        assert [r.state for r in app.calls_table.records.values()] == [CallState.DENIED, CallState.DENIED]
        assert engine.replies == ["never said"], "the model must not be asked again"
        assert app.screen is app.screen_stack[0]


def declared_bindings():
    """Every Binding the app's classes declare: (class name, binding)."""
    from textual.binding import Binding

    from mcp_chat_tui.ui.app import ChatApp
    from mcp_chat_tui.ui.screens.approval import ApprovalScreen
    from mcp_chat_tui.ui.screens.conversations import ExportScreen, ResumeScreen
    from mcp_chat_tui.ui.screens.detail import CallDetailScreen, ServerDetailScreen, TextScreen
    from mcp_chat_tui.ui.screens.sign_in import SignInScreen
    from mcp_chat_tui.ui.widgets.sidebar import ListTable, ServerTable, ToolCallTable

    classes = [
        ChatApp,
        PromptInput,
        ToolCallTable,
        ServerTable,
        ListTable,
        ApprovalScreen,
        CallDetailScreen,
        ServerDetailScreen,
        TextScreen,
        ResumeScreen,
        ExportScreen,
        SignInScreen,
    ]
    return [(cls.__name__, b) for cls in classes for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding)]


def test_every_binding_has_an_id_and_a_description():
    bindings = declared_bindings()
    assert len(bindings) > 20
    for owner, binding in bindings:
        assert binding.id and binding.description, f"{owner}: {binding.key}"
    distinct = {id(binding): binding for _, binding in bindings}.values()  # the list keys are shared by three tables
    ids = [binding.id for binding in distinct]
    assert len(ids) == len(set(ids))


def test_every_key_the_readme_names_for_the_approval_dialog_is_bound():
    """The README's approval table against the dialog's bindings, both ways."""
    from mcp_chat_tui.ui.keys import key_name

    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("Before a tool runs you are asked", 1)[1].split("\n## ", 1)[0]
    documented = set()
    for row in re.findall(r"^\| (.+?) \| .+? \|$", section, flags=re.M)[2:]:
        documented |= {k.strip().strip("`") for k in row.split("/")}
    bound = {key_name(k.strip()) for b in ApprovalScreen.BINDINGS for k in b.key.split(",")}
    assert documented == bound


async def test_keys_typed_before_the_panes_exist_go_to_the_prompt(monkeypatch):
    """Keys sent as the app starts (typed at once after the command) arrive before the prompt is
    built: the text and its Enter reach the prompt, and ``?`` is typed, not taken for the key list."""
    from mcp_chat_tui.ui.app import ChatApp

    monkeypatch.setattr(ChatApp, "on_mount", lambda self: None)  # the panes come when the test says
    app = make_app(ScriptedEngine(["hello"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("h", "i", "question_mark", "enter", "n", "e", "x", "t")
        assert not app.built and app.screen is app.screen_stack[0]
        app.call_later(app._build)
        await wait_for(pilot, lambda: app.built, what="the panes")
        await wait_turn_done(pilot, app, left_in_prompt="next")
        assert app.query_one(PromptInput).value == "next"
        assert [m["content"] for m in app.agent.messages if m["role"] == "user"] == ["hi?"]
        assert app.screen is app.screen_stack[0]


async def test_f1_before_the_panes_exist_shows_the_keys_and_the_panes_are_built_behind_it(monkeypatch):
    from mcp_chat_tui.ui.app import ChatApp
    from mcp_chat_tui.ui.screens.detail import TextScreen

    monkeypatch.setattr(ChatApp, "on_mount", lambda self: None)
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, TextScreen)
        app.call_later(app._build)
        await wait_ready(pilot, app)
        assert app.fatal_error is None
        await pilot.press("escape")
        assert app.screen is app.screen_stack[0] and app.focused is app.query_one(PromptInput)
        assert app.servers_table.statuses["demo"].state is ServerState.READY


def send_burst(app, keys: list[tuple[str, str | None]]) -> None:
    """Keys as a terminal delivers them when typed fast or pasted: all queued before the first is
    handled (Pilot's press waits for each key to be handled)."""
    from textual import events

    for key, character in keys:
        event = events.Key(key, character)
        app._driver.send_message(event)


@pytest.mark.parametrize("pane_key", ["f3", "f4"])
async def test_a_pane_key_and_ctrl_b_sent_together_still_leave_no_key_acting_on_the_hidden_pane(pane_key):
    app = make_app(ScriptedEngine([[call("calculator", {"expression": "1+1"})], "2"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await one_approved_call(pilot, app)
        send_burst(app, [(pane_key, None), ("ctrl+b", "\x02"), ("a", "a"), ("r", "r"), ("l", "l")])
        prompt = app.query_one(PromptInput)
        await wait_for(
            pilot, lambda: prompt.value == "arl", what=f"the letters in the prompt (it has {prompt.value!r})"
        )
        await pilot.pause(0.2)
        assert not app.query_one("#sidebar").display and app.focused is prompt
        assert auto_run_tools(app) == set() and app.hub.status("demo").restarts == 0
        assert app.screen is app.screen_stack[0]


@pytest.mark.parametrize("table_id", ["calls", "servers"])
async def test_a_key_that_reaches_a_hidden_table_does_nothing(table_id):
    """Should the focus be on a table as the sidebar is hidden (keys already on their way), its
    keys do not act."""
    app = make_app(ScriptedEngine([[call("calculator", {"expression": "1+1"})], "2"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await one_approved_call(pilot, app)
        table = app.query_one(f"#{table_id}")
        table.focus()
        await pilot.pause()
        app.query_one("#sidebar").display = False  # hidden with the focus left in it
        send_burst(app, [("a", "a"), ("r", "r"), ("l", "l"), ("enter", "\r")])
        await pilot.pause(0.3)
        assert auto_run_tools(app) == set() and app.hub.status("demo").restarts == 0
        assert app.screen is app.screen_stack[0]
