"""The configuration layer: ``mcp.json`` (which MCP servers to run) and ``config.toml`` (settings).

Every problem in either file surfaces as one ``ConfigError`` naming the file, the place and what
was expected. No Textual here: the UI asks for ``${input:...}`` values through a callback, or
through ``pending_inputs`` and an ``InputCache``.
"""

from mcp_chat_tui.config.envfile import read_env_file
from mcp_chat_tui.config.mcp_json import find_mcp_config, load_mcp_config, pending_inputs
from mcp_chat_tui.config.mcp_models import McpConfig, ServerConfig, Transport
from mcp_chat_tui.config.model_options import ModelOptions
from mcp_chat_tui.config.settings import (
    SETTINGS_ENV_VAR,
    Approval,
    Settings,
    ToolApproval,
    load_settings,
    remove_setting,
    save_setting,
    settings_path,
)
from mcp_chat_tui.config.variables import AskInput, InputCache, InputSpec

__all__ = [
    "SETTINGS_ENV_VAR",
    "Approval",
    "AskInput",
    "InputCache",
    "InputSpec",
    "McpConfig",
    "ModelOptions",
    "ServerConfig",
    "Settings",
    "ToolApproval",
    "Transport",
    "find_mcp_config",
    "load_mcp_config",
    "load_settings",
    "pending_inputs",
    "read_env_file",
    "remove_setting",
    "save_setting",
    "settings_path",
]
