"""The server hub: runs MCP servers through the official SDK. No UI imports here.

The names below are what the front ends (``ui/``, ``cli/``) show and steer; ``ui/`` imports nothing
else from here (an import-linter contract in pyproject.toml).
"""

from mcp_chat_tui.servers.catalog import CatalogError
from mcp_chat_tui.servers.catalog_items import PromptInfo, ResourceInfo
from mcp_chat_tui.servers.commands import PromptCommand, command_text, parse_command
from mcp_chat_tui.servers.elicit_form import FormField, form_fields
from mcp_chat_tui.servers.hub import ServerHub
from mcp_chat_tui.servers.notifications import LogEntry, level_rank, next_level
from mcp_chat_tui.servers.oauth import SignInRequest
from mcp_chat_tui.servers.request_ties import withdrawal
from mcp_chat_tui.servers.sdk_import import begin_sdk_import, import_sdk
from mcp_chat_tui.servers.state import ServerState, ServerStatus, ToolUsage, protocol_notes, tool_list_notes
from mcp_chat_tui.servers.user_calls import CallCommandError, call_attachment, call_yourself, parse_call, schema_problem

__all__ = [
    "CatalogError",
    "FormField",
    "form_fields",
    "LogEntry",
    "PromptCommand",
    "PromptInfo",
    "ResourceInfo",
    "ServerHub",
    "ServerState",
    "ServerStatus",
    "SignInRequest",
    "ToolUsage",
    "CallCommandError",
    "call_attachment",
    "call_yourself",
    "command_text",
    "begin_sdk_import",
    "import_sdk",
    "level_rank",
    "next_level",
    "parse_call",
    "parse_command",
    "protocol_notes",
    "schema_problem",
    "tool_list_notes",
    "withdrawal",
]
