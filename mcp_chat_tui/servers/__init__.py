"""The server hub: runs MCP servers through the official SDK. No UI imports here."""

from mcp_chat_tui.servers.hub import ServerHub
from mcp_chat_tui.servers.state import ServerState, ServerStatus, ToolUsage, protocol_notes, tool_list_notes

__all__ = ["ServerHub", "ServerState", "ServerStatus", "ToolUsage", "protocol_notes", "tool_list_notes"]
