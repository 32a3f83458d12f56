"""A tool listed with an invalid ``x-mcp-header`` cannot be called on 2026-07-28 (the SDK drops it from
the list): it is reported as not supported, with why, as a task-only tool of a server without tasks is,
never silently gone. tests/servers/lenient_server.py, a real MCPServer, through the hub."""

from __future__ import annotations

from mcp_chat_tui.servers import ServerHub, tool_list_notes
from tests.test_result_type import lenient_config


async def test_a_tool_with_a_bad_x_mcp_header_is_listed_as_not_supported_with_why():
    async with ServerHub([lenient_config()]) as hub:
        await hub.start_all()
        status = hub.status("lenient")
        assert status.protocol_version == "2026-07-28" and status.state.usable, status.reason
        assert "lookup" not in [spec.name for spec in hub.tools()]
        assert [tool.name for tool in status.unsupported_tools] == ["lookup"]
        assert tool_list_notes(status) == (
            "1 tool not supported: 'lookup': has an invalid x-mcp-header (property 'region': x-mcp-header "
            "'bad header' is not an RFC 9110 token), and a 2026-07-28 client must not call such a tool: not offered "
            "to the model"
        )
