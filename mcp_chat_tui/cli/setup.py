"""Turn the command line into loaded configuration and a server hub."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.text import Text

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
from mcp_chat_tui.core.redact import Redactor, redact_logs, url_secrets
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.roots import Roots


def load_configuration(
    args: argparse.Namespace, *, ask_input: AskInput | None = None, input_cache: InputCache | None = None
) -> tuple[Settings, McpConfig]:
    """Settings from config.toml and servers from mcp.json; ``--demo`` always uses the bundled mcp.json.

    From here on the log file has the answers to password inputs redacted, and the credentials in
    ``--endpoint``'s URL (the hub's and the agent's redactor hides them in what is shown too).
    """
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
    for name, secret in url_secrets(getattr(args, "endpoint", None) or "", "--endpoint").items():
        mcp_config.redactor.add(name, secret)
    redact_logs(mcp_config.redactor)
    return settings, mcp_config


def make_hub(settings: Settings, mcp_config: McpConfig) -> ServerHub:
    """A hub for every server in the file (disabled ones are listed, not started); whatever the
    servers say comes out of it with the answers to password inputs redacted."""
    return ServerHub(
        mcp_config.servers.values(),
        init_timeout=settings.init_timeout,
        tool_timeout=settings.tool_timeout,
        log_dir=user_log_dir() / "servers",
        redactor=mcp_config.redactor,
        sampling_per_minute=settings.sampling_per_minute,
        roots=Roots(
            [Path(path).expanduser() for path in settings.roots],
            {name: [Path(path).expanduser() for path in paths] for name, paths in settings.server_roots.items()},
        ),
    )


def warn_short_secrets(redactor: Redactor, console: Console) -> None:
    """Say once which password answers are too short to be hidden in what servers and the model say."""
    warning = redactor.short_warning()
    if warning:
        console.print(Text(warning, style="yellow"))
