"""Turn the command line into loaded configuration and a server hub."""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp_chat_tui.config import (
    AskInput,
    InputCache,
    McpConfig,
    Settings,
    find_mcp_config,
    load_mcp_config,
    load_settings,
    settings_path,
)
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.core.paths import bundled_path, user_log_dir
from mcp_chat_tui.servers import ServerHub


def load_configuration(
    args: argparse.Namespace, *, ask_input: AskInput | None = None, input_cache: InputCache | None = None
) -> tuple[Settings, McpConfig]:
    """Settings from config.toml and servers from mcp.json; ``--demo`` always uses the bundled mcp.json."""
    if args.config is not None and not Path(args.config).expanduser().exists():
        raise ConfigError(args.config, None, "no such file (given with --config)")
    settings = load_settings(settings_path(args.config))
    cwd = Path.cwd()
    if getattr(args, "demo", False) and args.mcp_config is None:
        path, source = bundled_path("mcp.json"), "bundled default (--demo)"
    else:
        path, source = find_mcp_config(args.mcp_config, cwd)
    mcp_config = load_mcp_config(
        path, source=source, workspace_folder=cwd, ask_input=ask_input, input_cache=input_cache
    )
    return settings, mcp_config


def make_hub(settings: Settings, mcp_config: McpConfig) -> ServerHub:
    """A hub for every server in the file (disabled ones are listed, not started)."""
    return ServerHub(
        mcp_config.servers.values(),
        init_timeout=settings.init_timeout,
        tool_timeout=settings.tool_timeout,
        log_dir=user_log_dir() / "servers",
    )
