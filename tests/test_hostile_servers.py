"""Servers that send what the SDK refuses, or that lie: real SDK server processes (tests/servers/hostile_server.py)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.tools import ToolSpec, unique_model_names
from mcp_chat_tui.servers import ServerHub, ServerState
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.helpers import REAL_SERVERS, call_by_model_name, eventually, in_process_config, server_module

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

HOSTILE_SERVER = str(Path(__file__).parent / "servers" / "hostile_server.py")
VALID_TOOLS = {"echo", "whoami", "flood_changes", "grow", "listings_served"}


# A process's: what hostile_server.py writes to stdout before (or instead of) serving, or how it serves;
# and long, paged tool lists, where the server's work runs beside the client's on the other core
# (in memory both share one thread, and a busy machine passed the init timeout).
PROCESS_FLAGS = {"--banner", "--garbage", "--then-hang", "--http", "--marker", "--extra-tools", "--page-size"}


def hostile_config(name: str, *flags: str, **overrides: object) -> ServerConfig:
    """A stdio server running tests/servers/hostile_server.py with the given flags: in this process
    (a fresh copy of its module at each start) for its lies about tools, which a client hears the
    same on any transport; a process of its own for the noise on stdout and long tool lists
    (``PROCESS_FLAGS``) and with ``MCT_REAL_SERVERS=1``."""
    config = ServerConfig(name=name, type="stdio", command=sys.executable, args=[HOSTILE_SERVER, *flags], **overrides)
    if REAL_SERVERS or PROCESS_FLAGS & set(flags):
        return config

    def build():
        module = server_module(HOSTILE_SERVER)
        return module.build(module.parse_args(list(flags)))

    return in_process_config(config, build)


def hostile_entry(*flags: str) -> dict:
    return {"type": "stdio", "command": sys.executable, "args": [HOSTILE_SERVER, *flags]}


# ----- tools the SDK refuses --------------------------------------------------------------------


def assert_bad_tools_refused(refused) -> None:
    by_name = {item.name: item.problem for item in refused}
    assert by_name.keys() == {"string_schema", "list_schema", None, "[bold]no_schema[/]"}, by_name
    assert "inputSchema.type" in by_name["string_schema"] and "'object'" in by_name["string_schema"]
    assert "inputSchema" in by_name["list_schema"] and "['not', 'an', 'object']" in by_name["list_schema"]
    assert by_name[None] == "name is missing"
    assert by_name["[bold]no_schema[/]"] == "inputSchema is missing"


async def test_invalid_tools_are_refused_with_why_and_the_server_keeps_its_valid_tools():
    hub = ServerHub([hostile_config("liar", "--bad-tools")])
    async with hub:
        await hub.start_all()
        status = hub.status("liar")
        assert status.state == ServerState.READY, status.summary()
        assert {spec.name for spec in status.tools} == VALID_TOOLS
        assert_bad_tools_refused(status.refused_tools)
        assert {spec.name for spec in hub.tools()} == VALID_TOOLS
        assert (await hub.call_tool("liar", "echo", {"text": "still here"})).text == "still here"


async def test_a_page_read_tool_by_tool_takes_its_cache_hint_as_the_sdk_does():
    """A negative ttlMs is floored to 0, as the SDK's own request path does (the page read again
    after the SDK refused it for its bad tools went round that path, and so lost every tool)."""
    hub = ServerHub([hostile_config("liar", "--bad-tools", "--ttl-ms", "-5")])
    async with hub:
        await hub.start_all()
        status = hub.status("liar")
        assert status.state == ServerState.READY, status.summary()
        assert {spec.name for spec in status.tools} == VALID_TOOLS
        assert_bad_tools_refused(status.refused_tools)


async def test_invalid_tools_are_refused_over_streamable_http_too():
    from tests.helpers import free_port, start_http_server

    port = free_port()
    process = start_http_server([HOSTILE_SERVER, "--bad-tools", "--page-size", "3", "--http", str(port)], port)
    try:
        hub = ServerHub([ServerConfig(name="web", type="http", url=f"http://127.0.0.1:{port}/mcp")])
        async with hub:
            await hub.start_all()
            status = hub.status("web")
            assert status.state == ServerState.READY, status.summary()
            assert {spec.name for spec in status.tools} == VALID_TOOLS
            assert_bad_tools_refused(status.refused_tools)
            assert (await hub.call_tool("web", "echo", {"text": "over http"})).text == "over http"
    finally:
        process.kill()
        process.wait()


async def test_invalid_tools_on_a_later_page_leave_every_page_read():
    hub = ServerHub([hostile_config("paged", "--bad-tools", "--extra-tools", "150", "--page-size", "40")])
    async with hub:
        await hub.start_all()
        status = hub.status("paged")
        assert status.state == ServerState.READY, status.summary()
        names = [spec.name for spec in status.tools]
        assert len(names) == len(set(names)) == len(VALID_TOOLS) + 150
        assert {"extra_0", "extra_149"} <= set(names)
        assert_bad_tools_refused(status.refused_tools)


async def test_a_tool_list_change_reads_the_list_the_same_way():
    hub = ServerHub([hostile_config("grower", "--bad-tools", "--page-size", "3")])
    async with hub:
        await hub.start_all()
        assert (await hub.call_tool("grower", "grow", {"name": "sprout"})).ok
        assert await eventually(lambda: hub.find_tool("sprout") is not None, 10), hub.status("grower").summary()
        status = hub.status("grower")
        assert status.state == ServerState.READY
        assert_bad_tools_refused(status.refused_tools)
        assert (await call_by_model_name(hub, "sprout")).text == "I am sprout"


def test_check_servers_lists_each_refused_tool_with_why(tmp_path, isolated_user_dirs):
    from tests.test_cli import run_cli, write_mcp_json

    config = write_mcp_json(tmp_path / "servers.json", {"liar": hostile_entry("--bad-tools", "--odd-names")})
    result = run_cli("--check-servers", "--mcp-config", str(config), cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stdout + result.stderr
    out = " ".join(result.stdout.split())
    assert "ready" in out and "echo" in out
    assert "refused 4 invalid tools" in out
    assert "'string_schema': inputSchema.type" in out
    assert "(a tool without a name): name is missing" in out
    assert "'[bold]no_schema[/]': inputSchema is missing" in out
    assert "4 tools refused" in out
    assert "\x1b" not in result.stdout and "\\x1b[2J\\x1b[31mred" in out and "[bold]x[/]" in out


async def test_the_server_panel_shows_refused_tools_literally():
    from textual.widgets import Static

    from mcp_chat_tui.ui.screens.detail import ServerDetailScreen
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

    app = make_app(ScriptedEngine([]), [hostile_config("liar", "--bad-tools")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        table = app.servers_table
        await wait_for(pilot, lambda: "liar" in table.statuses, what="the liar row")
        row = [str(cell) for cell in table.get_row("liar")]
        assert row[0].endswith("ready") and "+4✗" in row[3] and "4 tools refused" in row[5]
        await pilot.press("f4")
        reason = app.query_one("#server-reason", Static)
        await wait_for(pilot, lambda: reason.display, what="the reason area")
        shown = str(reason.render())
        assert "refused 4 invalid tools" in shown
        assert "'[bold]no_schema[/]': inputSchema is missing" in shown
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ServerDetailScreen), what="the server's detail")
        notes = str(app.screen.query_one("#server-tool-notes", Static).render())
        assert notes.startswith("refused 4 invalid tools: 'string_schema': inputSchema.type")


# ----- names model APIs refuse --------------------------------------------------------------------

MODEL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ODD = "[bold]x[/]"


def test_every_model_name_is_valid_unique_and_the_same_whatever_the_order():
    names = ["[bold]x[/]", "my tool", "my.tool", "héllo", "t" * 70, "!!!", "", "my_tool", "echo", "a" * 64]
    specs = [ToolSpec("odd", name) for name in names] + [ToolSpec("odd.2", name) for name in names]
    exposed = {(s.server, s.name): s.model_name for s in unique_model_names(specs)}
    assert all(MODEL_NAME.match(name) for name in exposed.values()), exposed
    assert len(set(exposed.values())) == len(specs)
    assert exposed == {(s.server, s.name): s.model_name for s in unique_model_names(list(reversed(specs)))}
    assert exposed[("odd", "héllo")].startswith("hello_") and exposed[("odd", "[bold]x[/]")].startswith("bold_x_")
    # A cleaned name never takes the place of a tool whose own name is valid, nor of another cleaned one.
    alone = {
        s.name: s.model_name
        for s in unique_model_names([ToolSpec("odd", n) for n in ("my.tool", "my_tool", "my tool")])
    }
    assert alone["my_tool"] == "my_tool" and len(set(alone.values())) == 3
    assert {s.model_name for s in unique_model_names([ToolSpec("odd", "a" * 64)])} == {"a" * 64}


async def model_names_of(config: ServerConfig) -> dict[str, str]:
    """The name the model is given for each tool of one server, from a hub of this test process."""
    hub = ServerHub([config])
    async with hub:
        await hub.start_all()
        return {spec.name: spec.model_name for spec in hub.tools()}


async def test_odd_tool_names_reach_the_model_clean_and_the_call_reaches_the_real_tool(tmp_path, isolated_user_dirs):
    from mcp_chat_tui.transcript import parse, read_transcript_text
    from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
    from tests.test_oneshot import run_cli, saved_conversations

    names = await model_names_of(hostile_config("odd", "--odd-names"))
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"servers": {"odd": hostile_entry("--odd-names")}}))
    with ScriptedEndpoint([tool_reply(names[ODD], {}), "done."]) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(config),
            "-p",
            "go",
            "--yes",
            "--json",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert result.returncode == 0, result.stderr
    offered = [tool["function"]["name"] for tool in endpoint.requests[0]["tools"]]
    assert all(MODEL_NAME.match(name) for name in offered), offered
    assert sorted(offered) == sorted(names.values()) and len(set(offered)) == len(offered)
    assert "odd: " not in result.stderr  # nothing was refused: no note
    [call] = json.loads(result.stdout)["calls"]
    assert (call["server"], call["tool"], call["result"]) == ("odd", ODD, f"I am {ODD}")
    assert endpoint.requests[1]["messages"][-1]["name"] == names[ODD]
    [saved] = saved_conversations(isolated_user_dirs)
    [proposal] = parse(read_transcript_text(saved)).exchanges[0].steps[0].proposals
    assert proposal.name == names[ODD] and (proposal.result.server, proposal.result.tool) == ("odd", ODD)
    assert (proposal.server, proposal.tool) == ("odd", ODD)


async def test_a_saved_call_under_a_cleaned_name_shows_the_real_tool_name_when_loaded(tmp_path):
    from mcp_chat_tui.transcript import Exchange, Proposal, Step, ToolResult, Transcript, render
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, wait_ready

    wire = {"id": "call_1", "type": "function", "function": {"name": "bold_x_4b0ead86", "arguments": "{}"}}
    result = ToolResult("bold_x_4b0ead86", "call_1", "done", f"I am {ODD}", "odd", 0.01, tool=ODD)
    path = tmp_path / "done.md"
    path.write_text(
        render(
            Transcript(
                [
                    Exchange(
                        "go",
                        "scripted",
                        [Step(proposals=[Proposal(wire, "yo", result, server="odd", tool=ODD)]), Step(text="done.")],
                    )
                ]
            )
        )
    )
    assert parse_file(path).exchanges[0].steps[0].proposals[0].result.tool == ODD
    app = make_app(
        ScriptedEngine([]), [hostile_config("odd", "--odd-names")], transcript_file=path, transcript=parse_file(path)
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        [record] = app.calls_table.records.values()
        assert str(app.calls_table.get_cell(record.key, "tool")) == f"odd›{ODD}"


async def test_a_resumed_call_maps_back_to_the_real_tool_and_shows_its_name_literally(tmp_path):
    from mcp_chat_tui.transcript import Exchange, Proposal, Step, Transcript, render
    from mcp_chat_tui.ui.screens.approval import ApprovalScreen
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, dialog_armed, make_app, wait_for, wait_turn_done

    config = hostile_config("odd", "--odd-names")
    names = await model_names_of(config)  # another run: the names must be the same in the app's run
    wire = {"id": "call_1", "type": "function", "function": {"name": names[ODD], "arguments": "{}"}}
    path = tmp_path / "open.md"
    path.write_text(render(Transcript([Exchange("go", "scripted", [Step(proposals=[Proposal(wire)])])])))
    app = make_app(ScriptedEngine(["done."]), [config], transcript_file=path, transcript=parse_file(path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot, lambda: dialog_armed(app, ApprovalScreen) and app.screen.is_mounted, what="the reopened dialog"
        )
        assert ODD in screen_text(app.screen)
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        [record] = app.calls_table.records.values()
        assert (record.server, record.tool) == ("odd", ODD)
        assert str(app.calls_table.get_cell(record.key, "tool")) == f"odd›{ODD}"
    assert app.hub.status("odd").usage[ODD].calls == 1


def parse_file(path: Path):
    from mcp_chat_tui.transcript import parse, read_transcript_text

    return parse(read_transcript_text(path))


def screen_text(screen) -> str:
    """Every Static of a screen, as the plain text it shows."""
    from textual.widgets import Static

    return "\n".join(str(widget.render()) for widget in screen.query(Static))


# ----- what is not JSON-RPC on stdout -------------------------------------------------------------

STDOUT_RULE = "a stdio server must write only JSON-RPC messages to stdout (logs go to stderr)"


async def test_bytes_that_are_not_utf8_on_stdout_are_noted_and_the_server_still_starts():
    hub = ServerHub([hostile_config("binary", "--garbage")], init_timeout=30)
    async with hub:
        await hub.start_all()
        status = hub.status("binary")
        assert status.state == ServerState.READY, status.summary()
        assert any("not an MCP message: '\ufffdPNG\\r'" in line for line in status.stderr_tail), list(
            status.stderr_tail
        )
        assert (await hub.call_tool("binary", "echo", {"text": "clean"})).text == "clean"


async def test_thousands_of_lines_of_stdout_noise_are_noted_without_telling_observers_each():
    hub = ServerHub([hostile_config("chatty", "--banner", "noise line\\n" * 3000)], init_timeout=60)
    heard = []
    hub.add_observer(lambda status: heard.append(status.state))
    async with hub:
        await hub.start_all()
        status = hub.status("chatty")
        assert status.state == ServerState.READY, status.summary()
        assert (
            list(status.stderr_tail)[-1]
            == "[mcp-chat-tui] ignored output on stdout that is not an MCP message: 'noise line'"
        )
        assert len(heard) <= 3, f"observers were told {len(heard)} times"


async def test_a_server_that_sends_only_garbage_fails_naming_what_it_sent():
    hub = ServerHub(
        [
            hostile_config("mute", "--garbage", "--then-hang"),
            hostile_config("banner", "--banner", "Welcome to ACME MCP\\n", "--then-hang"),
        ],
        # Waited in full, counted from their last sign of life (their noise, their start's CPU: one more
        # second once the timeout has passed; servers/starting.py); 5 s showed the same in 5 s.
        init_timeout=1,
    )
    async with hub:
        await hub.start_all()
        binary, banner = hub.status("mute"), hub.status("banner")
        assert binary.state == banner.state == ServerState.FAILED
        assert binary.reason == (
            f"no answer to initialize within 1 s; its stdout had '\ufffdPNG\\r', which is not JSON-RPC: {STDOUT_RULE}"
        )
        assert "its stdout had 'Welcome to ACME MCP'" in banner.reason and STDOUT_RULE in banner.reason


async def test_a_banner_glued_to_the_first_answer_fails_at_once_naming_the_banner():
    # No newline after the banner: the server's first answer is lost with it, so waiting is useless.
    hub = ServerHub([hostile_config("glued", "--banner", "\\x1b[2Jready>")], init_timeout=120)
    async with hub:
        await hub.start_all()
        status = hub.status("glued")
        assert status.state == ServerState.FAILED
        assert status.reason == (
            f"its stdout had '\\x1b[2Jready>' before a JSON-RPC message on the same line, "
            f"so the message was lost: {STDOUT_RULE}"
        )
        assert "\x1b" not in status.reason


# ----- neighbours: markup, floods --------------------------------------------------------------------


async def test_the_command_palette_shows_server_names_and_reasons_as_themselves():
    from textual.command import CommandPalette

    from mcp_chat_tui.config import Settings
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

    servers = [hostile_config("odd", "--odd-names"), hostile_config("glued", "--banner", "[link=http://e]y[/link]")]
    app = make_app(ScriptedEngine([]), servers, settings=Settings(on_server_failure="continue"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert app.hub.status("glued").state == ServerState.FAILED
        for query, wanted in (("bold", f"Toggle auto-run: odd › {ODD}"), ("restart glued", "[link=http://e]y[/link]")):
            app.action_command_palette()
            await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
            await pilot.press(*query)
            await wait_for(pilot, lambda: wanted in palette_options(app.screen), what=f"{wanted!r} in the palette")
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette), what="the palette to close")


def palette_options(palette) -> str:
    from textual.widgets import OptionList

    options = palette.query_one(OptionList)
    return "\n".join(str(options.get_option_at_index(i).prompt) for i in range(options.option_count))


async def test_a_flood_of_tool_list_changes_is_read_a_bounded_number_of_times_and_the_last_is_kept():
    # 505 tools in pages of 125: five pages, as a long list has; each reading in full is what a flood
    # without coalescing would repeat (2,000 tools in pages of 500 showed the same, four times slower).
    hub = ServerHub([hostile_config("flood", "--extra-tools", "500", "--page-size", "125")], init_timeout=60)
    async with hub:
        await hub.start_all()
        assert (await hub.call_tool("flood", "flood_changes", {"count": 100})).text == "sent 100"
        assert (await hub.call_tool("flood", "grow", {"name": "sprout"})).ok
        assert await eventually(lambda: hub.find_tool("sprout") is not None, 60), "the last change was lost"
        readings = int((await hub.call_tool("flood", "listings_served", {})).text)
        # Each change is sent twice (notification and subscription): 200 readings of 5 pages each
        # without coalescing, the last of them only after the ones before.
        assert readings <= 5, f"the tool list was read {readings} times for one burst of changes"


async def test_an_app_with_2000_tools_stays_responsive_through_a_flood_of_changes():
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, wait_for

    # Listing 2,000 tools takes the server seconds on a loaded machine: more than the default 10 s to start.
    many = hostile_config("many", "--extra-tools", "2000", "--page-size", "500", init_timeout=60)
    app = make_app(ScriptedEngine([]), [many])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready.is_set() or app.fatal_error is not None, 70, "start-up")
        assert app.hub.status("many").state is not ServerState.FAILED, app.hub.status("many").reason
        total = len(VALID_TOOLS) + 2000
        assert len(app.hub.tools()) == total
        await wait_for(
            pilot, lambda: str(app.servers_table.get_cell("many", "tools")).startswith(str(total)), what="the count"
        )
        assert (await app.hub.call_tool("many", "flood_changes", {"count": 200})).ok
        assert (await app.hub.call_tool("many", "grow", {"name": "sprout"})).ok
        await wait_for(pilot, lambda: app.hub.find_tool("sprout") is not None, 60, what="the last change")
        await wait_for(
            pilot,
            lambda: str(app.servers_table.get_cell("many", "tools")).startswith(str(total + 1)),
            what="the new count",
        )
        await pilot.press("f4")
        assert app.focused is app.servers_table


async def test_a_tool_list_longer_than_the_pages_read_says_so():
    from mcp_chat_tui.servers import tool_list_notes
    from mcp_chat_tui.servers.hub import MAX_TOOL_PAGES

    hub = ServerHub([hostile_config("endless", "--extra-tools", str(2 * MAX_TOOL_PAGES + 50), "--page-size", "2")])
    async with hub:
        await hub.start_all()
        status = hub.status("endless")
        assert status.state == ServerState.READY and len(status.tools) == 2 * MAX_TOOL_PAGES, status.reason
        assert tool_list_notes(status) == (f"its tool list has more than {MAX_TOOL_PAGES} pages: only those were read")


async def test_markup_and_escapes_in_a_tool_description_are_shown_as_themselves():
    from mcp_chat_tui.agent import ApprovalPolicy
    from mcp_chat_tui.ui.screens.approval import ApprovalScreen
    from mcp_chat_tui.ui.screens.detail import ServerDetailScreen
    from tests.fakes import ScriptedEngine, call
    from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

    app = make_app(
        ScriptedEngine([[call("whoami", {})], "ok"]),
        [hostile_config("marked", "--markup")],
        policy=ApprovalPolicy("ask"),
    )
    shown = "[red]red[/red] \\x1b[31mansi\\x1b[0m [link=http://evil]click[/link]"
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "who?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen) and app.screen.is_mounted, what="the dialog")
        assert shown in screen_text(app.screen) and "\x1b" not in screen_text(app.screen)
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="the dialog to close")
        await wait_turn_done(pilot, app)
        await pilot.press("f4", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ServerDetailScreen), what="the detail")
        table = app.screen.query_one("#server-tools")
        assert str(table.get_cell("whoami", "description")) == shown


def test_a_one_shot_run_names_the_refused_tools_on_stderr(tmp_path, isolated_user_dirs):
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import run_cli

    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"servers": {"liar": hostile_entry("--bad-tools")}}))
    with ScriptedEndpoint(["fine."]) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(config),
            "-p",
            "hi",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fine.\n"
    assert "liar: refused 4 invalid tools: 'string_schema': inputSchema.type" in " ".join(result.stderr.split())
    assert sorted(tool["function"]["name"] for tool in endpoint.requests[0]["tools"]) == sorted(VALID_TOOLS)


async def test_the_restart_notice_shows_a_server_name_as_itself():
    """Was: "restarting NAME…" was read as markup, so a name with ``[b]…[/b]`` came out bold and
    without its brackets (mcp.json's names are any text)."""
    from textual.widgets._toast import Toast

    from tests.fakes import ScriptedEngine
    from tests.helpers import demo_config
    from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

    name = "[b]odd[/b]"
    app = make_app(ScriptedEngine([]), [demo_config(name)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        app.server_controls.restart(name)
        await wait_for(pilot, lambda: len(app._notifications) == 2, what="the restart's two notices")
        shown = [Toast(notification).render().plain for notification in app._notifications]
        assert f"restarting {name}…" in shown and f"{name}: ready" in shown, shown


async def test_notices_about_a_server_show_its_reason_and_tool_names_as_themselves():
    from textual.widgets._toast import Toast

    from mcp_chat_tui.config import Settings
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

    servers = [hostile_config("odd", "--odd-names"), hostile_config("glued", "--banner", "[link=http://e]y[/link]")]
    app = make_app(ScriptedEngine([]), servers, settings=Settings(on_server_failure="continue"))

    def toasts() -> str:
        """Each notification as its toast draws it."""
        return "\n".join(Toast(notification).render().plain for notification in app._notifications)

    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        app.server_controls.toggle_tool_auto_run("odd", ODD)
        await wait_for(pilot, lambda: f"odd › {ODD}: runs without asking" in toasts(), what="the auto-run notice")
        app.server_controls.restart("glued")
        await wait_for(
            pilot,
            lambda: "glued: failed its stdout had '[link=http://e]y[/link]'" in toasts(),
            what="the restart notice",
        )
        assert app.return_code is None and app._exception is None
