"""What servers say while they work, against a real SDK server in both protocol eras: progress,
log messages and their level, roots, instructions, and tool lists that change mid-turn."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import CallProgress
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.notifications import INSTRUCTIONS_CHARS, LOG_LINES_KEPT
from mcp_chat_tui.servers.roots import Roots
from tests.fakes import ScriptedEngine, call
from tests.helpers import REAL_SERVERS, StreamsServer, eventually, in_process_config, server_module

NOTIFY_SERVER = str(Path(__file__).parent / "servers" / "notify_server.py")
ERAS = {"2025-11-25": ["--legacy"], "2026-07-28": []}


def notify_config(name: str = "notify", *flags: str, **overrides: object) -> ServerConfig:
    """tests/servers/notify_server.py with ``flags`` (``--legacy``, ``--instructions TEXT``), in this
    process (a fresh copy of its module at each start; ``--legacy`` through its own 2025-11-25 loop on
    memory streams), or a process of its own with ``MCT_REAL_SERVERS=1``. No test of it is about processes."""
    config = ServerConfig(name=name, type="stdio", command=sys.executable, args=[NOTIFY_SERVER, *flags], **overrides)
    if REAL_SERVERS:
        return config
    return in_process_config(config, lambda: notify_server(*flags))


def notify_server(*flags: str):
    """The notify server's object for ``flags``, from a fresh copy of its module (as a process has)."""
    module = server_module(NOTIFY_SERVER)
    args = module.parse_args(list(flags))
    server = module.build(args)
    if not args.legacy:
        return server
    return StreamsServer(lambda read, write: module.serve_legacy_on(server, read, write))


@pytest.fixture(params=list(ERAS))
def era(request) -> str:
    return request.param


async def started(hub: ServerHub, era: str) -> ServerHub:
    await hub.start_all()
    for status in hub.statuses:
        assert status.state.usable, status.summary()
        assert status.protocol_version == era
    return hub


async def test_progress_reaches_the_caller_and_stays_on_the_result(era):
    async with ServerHub([notify_config("n", *ERAS[era])]) as hub:
        await started(hub, era)
        heard = []
        result = await hub.call_tool("n", "count", {"steps": 3}, on_progress=heard.append)
        assert result.ok, result.for_model()
        # The latest at most once a frame (servers/call_clock.py; read together, only the latest of
        # them: servers/stdio_transport.py), in order, and the last always.
        told = [(p.progress, p.total, p.message) for p in heard]
        assert told[-1] == (3, 3, "step 3")
        assert told == sorted(set(told)) and set(told) <= {(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")}
        assert result.progress == heard[-1]
        assert heard[-1].describe() == "3/3 step 3"
        untotalled = await hub.call_tool("n", "count_without_total", {"steps": 2})
        assert untotalled.progress is not None and untotalled.progress.describe() == "2 item 2"


async def test_log_messages_are_kept_with_level_logger_and_time_and_counted(era):
    async with ServerHub([notify_config("n", *ERAS[era])]) as hub:
        await started(hub, era)
        heard = []
        hub.add_log_listener(lambda server, entry: heard.append((server, entry.level, entry.text)))
        await hub.call_tool("n", "count", {"steps": 2})
        status = hub.status("n")
        assert await eventually(lambda: status.log.total == 3)
        assert [(e.level, e.logger, e.text) for e in status.log.entries] == [
            ("info", "notify.work", "counted 1"),
            ("info", "notify.work", "counted 2"),
            ("warning", "notify.work", "counting is done"),
        ]
        assert status.log.entries[0].time is not None
        assert status.log.problems == 1 and status.log.summary() == "3 log · 1⚠"
        assert heard[-1] == ("n", "warning", "counting is done")


async def test_the_log_level_is_sent_the_way_the_protocol_has_it(era):
    async with ServerHub([notify_config("n", *ERAS[era], log_level="warning")]) as hub:
        await started(hub, era)
        status = hub.status("n")
        assert status.log_level == "warning"
        await hub.call_tool("n", "count", {"steps": 2})
        assert await eventually(lambda: status.log.total == 1)
        assert [e.level for e in status.log.entries] == ["warning"]  # the infos were not sent
        said = await hub.set_log_level("n", "debug")
        if era == "2025-11-25":
            assert "logging/setLevel" in said
            assert (await hub.call_tool("n", "log_level", {})).text == "debug"
        else:
            assert "each request" in said
        await hub.call_tool("n", "count", {"steps": 2})
        assert await eventually(lambda: status.log.total == 4)
        assert [e.level for e in status.log.entries][1:] == ["info", "info", "warning"]


async def test_a_flooding_server_keeps_memory_bounded(era):
    async with ServerHub([notify_config("n", *ERAS[era])]) as hub:
        await started(hub, era)
        messages = LOG_LINES_KEPT + 300
        seen = []
        hub.add_observer(lambda status: seen.append(status.log.total))
        assert (await hub.call_tool("n", "flood", {"messages": messages})).ok
        status = hub.status("n")
        assert await eventually(lambda: status.log.total == messages)
        assert len(status.log.entries) == LOG_LINES_KEPT  # the oldest went, every one is counted
        assert status.log.entries[-1].text.startswith(f"flood {messages - 1} ")
        assert status.log.problems == messages // 2
        assert await eventually(lambda: seen and seen[-1] == messages)
        assert len(seen) < messages / 10  # observers hear of a burst once, not once a message


async def test_log_messages_progress_and_instructions_are_redacted(era, tmp_path):
    redactor = Redactor({"word": "counted", "found": "found it", "key": "sekrit-value-123"})
    server = notify_config("n", *ERAS[era], "--instructions", "The key is sekrit-value-123.")
    async with ServerHub([server], redactor=redactor) as hub:
        await started(hub, era)
        await hub.call_tool("n", "count", {"steps": 1})
        assert await eventually(lambda: hub.status("n").log.total == 2)
        assert hub.status("n").log.entries[0].text == "[redacted: word] 1"
        (tmp_path / "there").touch()
        heard = []
        result = await hub.call_tool("n", "wait_for_file", {"path": str(tmp_path / "there")}, on_progress=heard.append)
        assert heard[-1].message == "[redacted: found]"
        assert {p.message for p in heard} <= {"waiting for the file", "[redacted: found]"}
        assert result.progress is not None and result.progress.message == "[redacted: found]"
        assert "## n\nThe key is [redacted: key]." in hub.instructions_prompt()


async def test_roots_are_the_working_directory_and_the_configured_folders(era, tmp_path):
    shared, own, other = tmp_path / "shared", tmp_path / "own", tmp_path / "other"
    for folder in (shared, own, other):
        folder.mkdir()
    roots = Roots([shared], {"n": [own], "m": [other]})
    async with ServerHub([notify_config("n", *ERAS[era])], roots=roots) as hub:
        await started(hub, era)
        listed = (await hub.call_tool("n", "list_roots", {})).text.splitlines()
        assert listed == [Path.cwd().as_uri(), shared.as_uri(), own.as_uri()]
        added = tmp_path / "added"
        added.mkdir()
        said = await hub.roots_command(f"/roots add {added}")
        assert said is not None and f"added root {added}" in said
        # 2026-07-28 has no client notifications: the server reads the roots when it asks
        told = "1 server was told at once" if era == "2025-11-25" else "every server sees the new roots"
        assert told in said and "roots/list_changed" not in said and "(s)" not in said
        listed = (await hub.call_tool("n", "list_roots", {})).text.splitlines()
        assert listed == [Path.cwd().as_uri(), shared.as_uri(), added.as_uri(), own.as_uri()]
        if era == "2025-11-25":
            assert await eventually_async(lambda: hub.call_tool("n", "roots_changes", {}), "1")
        said = await hub.roots_command(f"/roots remove {added}")
        assert said is not None and said.startswith(f"removed root {added}")
        assert added.as_uri() not in (await hub.call_tool("n", "list_roots", {})).text


async def eventually_async(make_call, expected: str, timeout: float = 5.0) -> bool:
    """Call a tool until its text is ``expected`` (a notification is handled after it is sent)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if (await make_call()).text == expected:
            return True
        await asyncio.sleep(0.05)
    return False


async def test_roots_commands_refuse_bad_paths_and_change_nothing(tmp_path):
    roots = Roots()
    async with ServerHub([], roots=roots) as hub:
        before = list(roots.shared)
        missing = tmp_path / "missing"
        said = await hub.roots_command(f"/roots add {missing}")
        assert said == f"roots unchanged: {missing} is not a folder: a root must be an existing folder"
        said = await hub.roots_command(f"/roots remove {tmp_path}")
        assert said is not None and said.startswith(f"roots unchanged: {tmp_path} is not a shared root")
        assert (await hub.roots_command("/roots frobnicate")).startswith("/roots lists the roots")
        assert await hub.roots_command("/rootsy") is None and await hub.roots_command("hello") is None
        assert roots.shared == before


async def test_instructions_go_into_the_system_prompt_under_each_name_and_capped(era):
    long = "y" * (INSTRUCTIONS_CHARS + 500)
    servers = [
        notify_config("short", *ERAS[era], "--instructions", "Prefer count over flood."),
        notify_config("long", *ERAS[era], "--instructions", long),
        notify_config("quiet", *ERAS[era]),
    ]
    async with ServerHub(servers) as hub:
        await started(hub, era)
        engine = ScriptedEngine(["hello"])
        agent = Agent(engine, hub, ApprovalPolicy("auto"), system_prompt="You are terse.")
        await agent.run_turn("hi", lambda event: None)
        system = engine.prompts[0][0]
        assert system["role"] == "system"
        text = system["content"]
        assert text.startswith("You are terse.\n\n")
        assert "## short\nPrefer count over flood." in text
        assert "y" * INSTRUCTIONS_CHARS + f"… [cut at {INSTRUCTIONS_CHARS} characters]" in text
        assert "y" * (INSTRUCTIONS_CHARS + 1) not in text
        assert "## quiet" not in text


async def test_a_tool_added_during_a_call_is_offered_in_the_next_request_of_the_same_turn(era):
    async with ServerHub([notify_config("n", *ERAS[era])]) as hub:
        await started(hub, era)
        engine = ScriptedEngine(
            [[call("add_tool", {"name": "fresh_tool"})], [call("fresh_tool", {}, "call_2")], "done"]
        )
        agent = Agent(engine, hub, ApprovalPolicy("auto"))
        events = []
        await agent.run_turn("add a tool and use it", events.append)
        offered = [[tool["function"]["name"] for tool in tools or []] for tools in engine.tools_sent]
        assert "fresh_tool" not in offered[0]
        assert "fresh_tool" in offered[1]
        tool_messages = [m for m in agent.messages if m["role"] == "tool"]
        assert [m["content"] for m in tool_messages] == ["added fresh_tool", "I am fresh_tool"]


async def test_the_agent_reports_progress_of_a_running_call(era):
    async with ServerHub([notify_config("n", *ERAS[era])]) as hub:
        await started(hub, era)
        engine = ScriptedEngine([[call("count", {"steps": 2})], "done"])
        events = []
        await Agent(engine, hub, ApprovalPolicy("auto")).run_turn("count", events.append)
        progress = [event.progress.describe() for event in events if isinstance(event, CallProgress)]
        assert progress[-1] == "2/2 step 2" and progress in (["1/2 step 1", "2/2 step 2"], ["2/2 step 2"])


def test_a_log_level_the_sdk_would_refuse_is_asked_for_as_info():
    from mcp_chat_tui.servers.notifications import known_level

    assert [known_level(level) for level in ("debug", "emergency", "verbose", "")] == [
        "debug",
        "emergency",
        "info",
        "info",
    ]
