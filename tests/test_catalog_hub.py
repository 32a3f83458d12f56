"""The hub's prompts and resources against real SDK servers, in both protocol eras."""

from __future__ import annotations

import json

import pytest

from mcp_chat_tui.config import load_mcp_config
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.catalog import CatalogError
from mcp_chat_tui.servers.commands import CommandError, parse_command
from tests.helpers import call_by_model_name, catalog_config, eventually

ERAS = pytest.mark.parametrize("flags", [(), ("--legacy",)], ids=["2026-07-28", "2025-11-25"])


@ERAS
async def test_prompts_resources_and_templates_are_listed(flags):
    async with ServerHub([catalog_config("docs", *flags)]) as hub:
        await hub.start_all()
        assert hub.status("docs").protocol_version == ("2025-11-25" if flags else "2026-07-28")
        review = next(p for p in hub.prompts() if p.name == "review")
        assert review.command == "/docs:review" and review.description == "Review a piece of code"
        assert [(a.name, a.required) for a in review.arguments] == [("language", True), ("focus", False)]
        assert [(r.name, r.uri, r.mime_type) for r in hub.resources()] == [
            ("today", "notes://today", "text/plain"),
            ("readme", "docs://readme", "text/markdown"),
            ("config", "data://config", "application/json"),
            ("pixel", "images://pixel", "image/png"),
        ]
        [weather] = hub.resource_templates()
        assert weather.template == "weather://{city}" and weather.variables == ["city"]
        assert weather.expand({"city": "san jose"}) == "weather://san%20jose"
        assert hub.status("docs").catalog_problems == []


async def test_a_broken_prompt_list_is_reported_and_the_server_stays_usable():
    async with ServerHub([catalog_config("docs", "--broken-prompts")]) as hub:
        await hub.start_all()
        status = hub.status("docs")
        assert status.state.usable and hub.prompts() == [] and len(hub.resources()) == 4
        assert status.catalog_problems == ["listing its prompts failed: the prompt store is down"]


@ERAS
async def test_a_prompt_is_got_with_its_embedded_resource_and_image_attached(flags):
    async with ServerHub([catalog_config("docs", *flags)]) as hub:
        await hub.start_all()
        command = parse_command("/summarise", hub.prompts())
        text, attachments = await hub.get_prompt(command.prompt, command.arguments)
        assert text == "Summarise these notes."
        prompt, notes, pixel = attachments
        assert (prompt.kind, prompt.server, prompt.name) == ("prompt", "docs", "summarise")
        assert (notes.kind, notes.uri, notes.text) == ("resource", "notes://today", "buy milk")
        assert (pixel.kind, pixel.mime_type, pixel.size) == ("image", "image/png", 70)
        assert pixel.text == "[binary contents: image/png, 70 B; not shown to the model]"


@ERAS
async def test_argument_values_complete_through_the_server(flags):
    async with ServerHub([catalog_config("docs", *flags)]) as hub:
        await hub.start_all()
        review = next(p for p in hub.prompts() if p.name == "review")
        assert await hub.complete_argument("docs", review, "language", "p", {}) == ["python", "perl", "php"]
        [weather] = hub.resource_templates()
        assert await hub.complete_argument("docs", weather, "city", "pe", {}) == ["perth"]


@ERAS
async def test_resources_are_read_text_and_binary(flags):
    async with ServerHub([catalog_config("docs", *flags)]) as hub:
        await hub.start_all()
        [config] = await hub.read_resource("docs", "data://config")
        assert json.loads(config.text) == {"theme": "dark", "size": 3} and not config.binary
        [pixel] = await hub.read_resource("docs", "images://pixel")
        assert pixel.binary and pixel.size == 70
        [weather] = await hub.read_resource("docs", "weather://oslo")
        assert weather.text == "sunny in oslo"
        with pytest.raises(CatalogError, match="reading nothing://here from docs failed"):
            await hub.read_resource("docs", "nothing://here")
        with pytest.raises(CatalogError, match="no server named 'nope'"):
            await hub.read_resource("nope", "data://config")


@ERAS
async def test_list_changed_refreshes_prompts_and_resources(flags):
    async with ServerHub([catalog_config("docs", *flags)]) as hub:
        await hub.start_all()
        await hub.call_tool("docs", "add_note", {"uri": "notes://later", "text": "call home"})
        assert await eventually(lambda: any(r.uri == "notes://later" for r in hub.resources()))
        await hub.call_tool("docs", "add_prompt", {"name": "fresh"})
        assert await eventually(lambda: any(p.name == "fresh" for p in hub.prompts()))


@ERAS
async def test_list_resources_right_after_a_change_sees_the_new_list(flags):
    """The model's next list_resources in the same turn sees what list_changed announced, as its
    next request sees a changed tool list (no waiting in the test: the hub waits for the reading)."""
    async with ServerHub([catalog_config("docs", *flags)]) as hub:
        await hub.start_all()
        added = await hub.call_tool("docs", "add_note", {"uri": "notes://later", "text": "call home"})
        assert added.ok, added.failure
        listing = await call_by_model_name(hub, "list_resources", {})
        assert listing.ok and "notes://later" in [entry.get("uri") for entry in json.loads(listing.text)]


@ERAS
async def test_a_subscribed_resource_reports_its_updates(flags):
    async with ServerHub([catalog_config("docs", *flags)]) as hub:
        await hub.start_all()
        heard = []
        hub.add_observer(lambda status: heard.append(dict(status.resource_updates)))
        assert await hub.subscribe_resource("docs", "notes://today")
        await hub.call_tool("docs", "edit_note", {"text": "buy bread"})
        assert await eventually(lambda: hub.status("docs").resource_updates.get("notes://today") == 1)
        assert {"notes://today": 1} in heard
        [notes] = await hub.read_resource("docs", "notes://today")
        assert notes.text == "buy bread"


async def test_a_resource_is_unsubscribed_when_its_last_holder_lets_go_2025_11_25():
    async with ServerHub([catalog_config("docs", "--legacy")]) as hub:
        await hub.start_all()
        assert await hub.subscribe_resource("docs", "notes://today")
        assert await hub.subscribe_resource("docs", "notes://today")  # a second holder: one subscription
        await hub.unsubscribe_resource("docs", "notes://today")
        assert "notes://today" in hub.status("docs").subscribed
        await hub.unsubscribe_resource("docs", "notes://today")
        assert "notes://today" not in hub.status("docs").subscribed
        tail = hub.status("docs").stderr_tail
        assert await eventually(lambda: "catalog: unsubscribed from notes://today" in tail), list(tail)
        assert [line for line in tail if "subscribed" in line] == [
            "catalog: subscribed to notes://today",
            "catalog: unsubscribed from notes://today",
        ]


async def test_a_resource_unsubscribed_on_2026_07_28_is_left_out_of_the_listen_stream():
    """The stream is opened again without it: its update no longer comes, while a later change of the
    resource list (on the same stream, so after the update would have been) does."""
    async with ServerHub([catalog_config("docs")]) as hub:
        await hub.start_all()
        assert await hub.subscribe_resource("docs", "notes://today")
        await hub.unsubscribe_resource("docs", "notes://today")
        assert hub.status("docs").subscribed == {}
        await hub.call_tool("docs", "edit_note", {"text": "buy bread"})
        await hub.call_tool("docs", "add_note", {"uri": "notes://later", "text": "call home"})
        assert await eventually(lambda: any(r.uri == "notes://later" for r in hub.resources()))
        assert hub.status("docs").resource_updates.get("notes://today") is None


async def test_built_in_resource_tools_come_with_resources_only():
    async with ServerHub([catalog_config("docs"), catalog_config("bare", "--no-resources")]) as hub:
        await hub.start_all()
        names = [spec.model_name for spec in hub.tools()]
        assert names.count("list_resources") == 1 and names.count("read_resource") == 1
        assert hub.find_tool("read_resource").server == "(app)"
        result = await call_by_model_name(hub, "read_resource", {"server": "docs", "uri": "docs://readme"})
        assert result.ok and result.text.startswith("# Catalog")
        wrong = await call_by_model_name(hub, "read_resource", {"server": "docs"})
        assert wrong.is_error and 'needs "server" and "uri"' in wrong.text
        await hub.stop("docs")
        assert "read_resource" not in [spec.model_name for spec in hub.tools()]


def test_mcp_json_cannot_name_a_server_as_the_built_in_tools(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"servers": {"(app)": {"command": "x"}}}))
    with pytest.raises(ConfigError, match="'\\(app\\)' names the app's own tools; give this server another name"):
        load_mcp_config(config, workspace_folder=tmp_path)


async def test_commands_name_near_prompts_and_refuse_bad_arguments():
    async with ServerHub([catalog_config("docs"), catalog_config("more")]) as hub:
        await hub.start_all()
        with pytest.raises(CommandError, match="several servers: say which, /docs:review, /more:review"):
            parse_command("/review language=c", hub.prompts())
        with pytest.raises(CommandError, match="did you mean /docs:greet"):
            parse_command("/docs:gret", hub.prompts())
        with pytest.raises(CommandError, match="has no argument 'lang'; its arguments: focus, language"):
            parse_command("/docs:review lang=c", hub.prompts())
        with pytest.raises(CommandError, match="close the quotes"):
            parse_command('/docs:review language="c', hub.prompts())
        command = parse_command('/more:review language=c focus="memory use"', hub.prompts())
        assert command.prompt.server == "more" and command.arguments == {"language": "c", "focus": "memory use"}


async def test_a_broken_list_is_noted_where_refused_tools_are():
    from mcp_chat_tui.servers import tool_list_notes

    async with ServerHub([catalog_config("docs", "--broken-prompts")]) as hub:
        await hub.start_all()
        assert tool_list_notes(hub.status("docs")) == "listing its prompts failed: the prompt store is down"


async def test_every_page_of_a_list_is_read_up_to_the_bound(monkeypatch):
    from mcp_chat_tui.servers import catalog

    async with ServerHub([catalog_config("docs", "--page-size", "1")]) as hub:
        await hub.start_all()
        assert [r.name for r in hub.resources()] == ["today", "readme", "config", "pixel"]
    monkeypatch.setattr(catalog, "MAX_CATALOG_PAGES", 2)
    async with ServerHub([catalog_config("docs", "--page-size", "1")]) as hub:
        await hub.start_all()
        assert [r.name for r in hub.resources()] == ["today", "readme"]
        assert hub.status("docs").catalog_problems == ["its resources list has more than 2 pages: only those were read"]
