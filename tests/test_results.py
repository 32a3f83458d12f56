"""Results the way they were sent: images, audio, structured content, annotations, task-only tools.

Against tests/servers/results_server.py, a real MCPServer process."""

from __future__ import annotations

import base64
import json
import stat
import sys
from datetime import datetime
from pathlib import Path

import mcp_types
import pytest
from mcp import Client

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.content import MAX_MEDIA_BYTES
from mcp_chat_tui.core.media_info import ImageProblem, media_line, prepare_image, save_media
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub, protocol_notes, tool_list_notes
from mcp_chat_tui.servers.listing import list_all_tools
from mcp_chat_tui.servers.results import convert_result
from mcp_chat_tui.servers.tasks import server_runs_tasks, set_apart_task_tools
from mcp_chat_tui.servers.transports import stdio_transport
from tests.helpers import REAL_SERVERS, in_process_config, server_module

RESULTS_SERVER = str(Path(__file__).parent / "servers" / "results_server.py")


def results_config(name: str = "results", *flags: str) -> ServerConfig:
    """tests/servers/results_server.py: in this process (a fresh copy of its module at each start);
    a process of its own with ``--legacy-only`` (which changes the SDK's runner for the whole process)
    or ``MCT_REAL_SERVERS=1``. No test of it is about processes."""
    config = ServerConfig(name=name, type="stdio", command=sys.executable, args=[RESULTS_SERVER, *flags])
    if "--legacy-only" in flags or REAL_SERVERS:
        return config
    return in_process_config(config, lambda: server_module(RESULTS_SERVER).build())


@pytest.fixture(params=["2026-07-28", "2025-11-25"])
async def hub(request):
    """The server on each protocol: 2026-07-28, and 2025-11-25 (as servers that speak only it)."""
    flags = ("--legacy-only",) if request.param == "2025-11-25" else ()
    async with ServerHub([results_config("results", *flags)]) as hub:
        await hub.start_all()
        status = hub.status("results")
        assert status.state.usable, status.reason
        assert status.protocol_version == request.param
        yield hub


async def test_an_image_is_one_line_for_the_model_and_its_bytes_for_the_screen(hub):
    result = await hub.call_tool("results", "picture")
    assert result.ok
    assert result.for_model() == "a red and blue flag\n[image image/png, about 87 bytes]"
    image = result.parts[1]
    assert image.kind == "image" and image.mime_type == "image/png"
    assert prepare_image(image.data).size == (16, 8)
    assert media_line(image) == "▣ image image/png, 86 B, 16×8 px"


@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        ("not_image", "not shown: the bytes are not an image this app can read"),
        ("truncated", "not shown: the image is damaged or cut short"),
        ("huge", "not shown: the image has too many pixels to draw"),
        ("not_base64", "its data is not valid base64"),
    ],
)
async def test_bad_image_bytes_give_a_clear_line(hub, kind, problem):
    result = await hub.call_tool("results", "bad_image", {"kind": kind})
    assert result.ok, result.failure
    assert result.for_model().startswith(f"bad image: {kind}\n[image image/png, about ")
    part = result.parts[1]
    shown = media_line(part)
    if part.data is not None:
        with pytest.raises(ImageProblem) as caught:
            prepare_image(part.data)
        shown = f"not shown: {caught.value}"
    assert shown.startswith(problem) or problem in shown


def test_a_50_mb_image_is_described_and_its_bytes_not_kept():
    """50 MB as sent: the model gets the line, the screen a line saying why it is not drawn (no decoding)."""
    encoded = base64.b64encode(b"\0" * (50 * 1024 * 1024)).decode("ascii")
    raw = mcp_types.CallToolResult(content=[mcp_types.ImageContent(data=encoded, mime_type="image/png")])
    result = convert_result(raw, "s", "t", {}, datetime.now(), 100_000)
    part = result.parts[0]
    assert part.data is None
    assert result.for_model() == f"[image image/png, about {len(encoded) * 3 // 4} bytes]"
    assert media_line(part) == "▣ image image/png, 50.0 MB: not kept: 50.0 MB is more than the 8.0 MB limit"


async def test_audio_shows_its_type_and_length_and_saves_to_a_new_file(hub, tmp_path):
    result = await hub.call_tool("results", "sound")
    audio = result.parts[0]
    assert result.for_model().startswith("[audio audio/wav, about ")
    assert media_line(audio) == "♪ audio audio/wav, 0.5 s"
    first = save_media(audio, tmp_path, "call_1-1")
    second = save_media(audio, tmp_path, "call_1-1")
    assert first.name == "call_1-1.wav" and second.name == "call_1-1-2.wav"
    assert first.read_bytes() == second.read_bytes() == audio.data
    assert stat.S_IMODE(first.stat().st_mode) == 0o600


async def test_structured_content_that_matches_its_output_schema_is_kept(hub):
    result = await hub.call_tool("results", "weather", {"city": "Oslo"})
    assert result.ok
    assert result.structured == {"city": "Oslo", "celsius": 21.5}


async def test_a_result_that_breaks_its_output_schema_is_a_protocol_problem_of_the_server(hub):
    """The SDK's client checks the schema and refuses the result; the hub says so once, as the
    server's protocol problem (the call fails with why, the server stays usable)."""
    result = await hub.call_tool("results", "bad_weather", {"city": "Oslo"})
    assert result.failure is not None and result.failure.kind is FailureKind.PROTOCOL_ERROR
    assert "does not match the tool's output schema" in result.failure.message
    assert "'warm' is not of type 'number'" in result.failure.message
    assert "\n" not in result.failure.message
    status = hub.status("results")
    assert status.state.usable
    assert status.protocol_problem_count == 1
    assert protocol_notes(status).startswith("1 protocol problem in calls; the last: bad_weather: ")
    assert (await hub.call_tool("results", "weather", {"city": "Oslo"})).ok


async def test_content_meant_only_for_the_user_is_not_sent_to_the_model(hub):
    result = await hub.call_tool("results", "annotated")
    assert result.for_model() == "for the model: 42\nfor both"
    assert "SECRET-NOTE" not in result.for_model()
    user_only = result.parts[1]
    assert user_only.text == "for the user only: SECRET-NOTE"
    assert user_only.annotations_line() == "audience: user · not sent to the model"
    assert result.parts[2].annotations_line() == "audience: user, assistant · priority: 0.9"


async def test_a_tool_that_requires_a_task_is_not_offered_on_2025_11_25():
    """On the 2025-11-25 protocol the server says render_movie must run as a task, but it declares no
    task support for tool calls (capabilities.tasks), so no client may ask it for one: it is set
    apart with why; the optional one stays (called normally)."""
    config = results_config()
    async with Client(stdio_transport(config, sys.stderr), mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        listing = await list_all_tools(client, refresh=False, max_pages=5)
        assert not server_runs_tasks(client)
        unsupported = set_apart_task_tools(listing, server_runs_tasks(client))
    names = [tool.name for tool in listing.tools]
    assert "render_movie" not in names and "maybe_task" in names
    assert [tool.name for tool in unsupported] == ["render_movie"]
    assert 'execution.taskSupport is "required"' in unsupported[0].describe()


async def test_the_hub_never_offers_a_tool_it_could_only_call_to_fail(hub):
    """2025-11-25: the task-only tool of a server that declares no task support is listed as
    unsupported with why and not offered; 2026-07-28 has no tasks in the protocol (the server
    cannot ask for one), so there it is an ordinary tool."""
    status = hub.status("results")
    offered = [spec.name for spec in hub.tools()]
    assert "maybe_task" in offered
    if status.protocol_version == "2025-11-25":
        assert "render_movie" not in offered
        assert tool_list_notes(status) == (
            "1 tool not supported: 'render_movie': needs to run as a task (execution.taskSupport is "
            '"required"), but its server does not declare task support for tool calls '
            "(capabilities.tasks.requests.tools.call): not offered to the model"
        )
    else:
        assert "render_movie" in offered and not status.unsupported_tools
        assert (await hub.call_tool("results", "render_movie")).ok


def test_media_over_the_limit_per_block_is_not_kept():
    data = b"\1" * (MAX_MEDIA_BYTES + 3)
    raw = mcp_types.CallToolResult(
        content=[mcp_types.AudioContent(data=base64.b64encode(data).decode(), mime_type="audio/mpeg")]
    )
    part = convert_result(raw, "s", "t", {}, datetime.now(), 100).parts[0]
    assert part.data is None and part.note.startswith("not kept: 8.0 MB is more than")


def results_servers(folder: Path) -> Path:
    config = folder / "servers.json"
    config.write_text(json.dumps({"servers": {"results": {"command": sys.executable, "args": [RESULTS_SERVER]}}}))
    return config


@pytest.mark.parametrize("mode", [("-p", "show me"), ("--plain",)])
def test_the_console_prints_a_line_for_each_image_and_audio(tmp_path, isolated_user_dirs, mode):
    from tests.cli_in_process import servers_in_memory
    from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
    from tests.test_oneshot import run_cli

    script = [
        tool_reply("picture", {}),
        tool_reply("sound", {}),
        tool_reply("bad_image", {"kind": "not_image"}),
        "three results",
    ]
    in_memory = servers_in_memory({(RESULTS_SERVER,): lambda: server_module(RESULTS_SERVER).build()})
    with in_memory, ScriptedEndpoint(script) as endpoint:  # the CLI and the server in this process
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(results_servers(tmp_path)),
            "--yes",
            *mode,
            cwd=tmp_path,
            dirs=isolated_user_dirs,
            stdin="show me\n" if mode == ("--plain",) else None,
        )
    output = result.stdout + result.stderr
    assert "three results" in output, output
    assert "▣ image image/png, 86 B, 16×8 px" in output
    assert "♪ audio audio/wav, 0.5 s" in output
    assert "▣ image image/png, 33 B" in output


def test_saving_never_writes_outside_the_folder_whatever_the_call_id(tmp_path):
    from mcp_chat_tui.core.content import ContentPart

    part = ContentPart("audio", mime_type="audio/wav", size=3, data=b"abc")
    saved = save_media(part, tmp_path, "../../etc/passwd")
    assert saved.parent == tmp_path and saved.name == "__.._etc_passwd.wav"


def test_an_image_resource_keeps_its_bytes_for_the_screen():
    from mcp_chat_tui.servers.results import resource_part
    from tests.servers.results_server import small_png

    blob = mcp_types.BlobResourceContents(
        uri="file:///flag.png", mime_type="image/png", blob=base64.b64encode(small_png()).decode()
    )
    part = resource_part(blob, "[binary resource file:///flag.png, image/png]")
    assert part.kind == "image" and prepare_image(part.data).size == (16, 8)
