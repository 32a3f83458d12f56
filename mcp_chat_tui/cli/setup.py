"""Turn the command line into loaded configuration and a server hub."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.text import Text

from mcp_chat_tui.cli.folder_trust import ask_trust_on_terminal
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
from mcp_chat_tui.config.folder_trust import FolderFile, TrustStore, folder_file
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.core.paths import bundled_path, user_log_dir
from mcp_chat_tui.core.redact import Redactor, redact_logs, url_secrets
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.roots import Roots


@dataclass(frozen=True)
class ConfigPlan:
    """What a run will load, found and read before anything is asked or started: the settings, the
    ``mcp.json`` chosen, and for a folder's file its reading (``folder``) and, when it must be asked
    about before its servers start, ``question`` (the same file)."""

    settings: Settings
    path: Path
    source: str
    cwd: Path
    folder: FolderFile | None = None
    question: FolderFile | None = None
    endpoint: str = ""  # ``--endpoint``: its credentials are secrets to hide


FLAG_SETTINGS = {"max_tool_rounds": "max_tool_rounds"}  # flag's dest: the config.toml setting it goes over


def with_flag_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    """config.toml's settings with the flags given over them (``--max-tool-rounds``; the model's
    settings given as flags are cli/chat.py's FLAG_OPTIONS)."""
    given = {key: getattr(args, dest, None) for dest, key in FLAG_SETTINGS.items()}
    return settings.model_copy(update={key: value for key, value in given.items() if value is not None})


def plan_configuration(args: argparse.Namespace) -> ConfigPlan:
    """Settings from config.toml (with the flags over them) and which mcp.json to use; ``--demo``
    always uses the bundled one.

    A folder's mcp.json that would start servers is to be asked about unless it was trusted in this
    version before, or ``--trust-folder`` or ``--yes`` answers for this run.
    """
    if args.config is not None and not Path(args.config).expanduser().exists():
        raise ConfigError(args.config, None, "no such file (given with --config)")
    settings = with_flag_settings(load_settings(settings_path(args.config)), args)
    cwd = Path.cwd()
    if getattr(args, "demo", False) and args.mcp_config is None:
        path, source = bundled_path("mcp.json"), "bundled default (--demo)"
    else:
        path, source = find_mcp_config(args.mcp_config, cwd)
    folder = folder_file(path, source, cwd)
    answered = getattr(args, "trust_folder", False) or getattr(args, "yes", False)
    ask = folder is not None and bool(folder.servers) and not answered and not TrustStore().trusts(folder.fingerprint)
    endpoint = getattr(args, "endpoint", None) or ""
    return ConfigPlan(settings, path, source, cwd, folder, folder if ask else None, endpoint)


def load_planned(
    plan: ConfigPlan, *, trusted: bool = True, ask_input: AskInput | None = None, input_cache: InputCache | None = None
) -> McpConfig:
    """The servers of the plan's mcp.json (none when its question was answered no: ``trusted``).

    From here on the log file has the answers to password inputs redacted, and the credentials in
    ``--endpoint``'s URL (the hub's and the agent's redactor hides them in what is shown too).
    """
    if plan.folder is None:
        mcp_config = load_mcp_config(
            plan.path, source=plan.source, workspace_folder=plan.cwd, ask_input=ask_input, input_cache=input_cache
        )
    elif plan.question is not None and not trusted:
        mcp_config = plan.folder.without_servers()
    else:
        mcp_config = plan.folder.load(ask_input=ask_input, input_cache=input_cache)
    for name, secret in url_secrets(plan.endpoint, "--endpoint").items():
        mcp_config.redactor.add(name, secret)
    redact_logs(mcp_config.redactor)
    return mcp_config


async def load_configuration(
    args: argparse.Namespace, *, ask_input: AskInput | None = None, input_cache: InputCache | None = None
) -> tuple[Settings, McpConfig]:
    """Settings and servers for the console modes: a folder's mcp.json not trusted yet is asked
    about on the terminal first (refused without one), before any of its inputs is asked."""
    plan = plan_configuration(args)
    trusted = True
    if plan.question is not None:
        trusted = await ask_trust_on_terminal(plan.question, Console(stderr=True, highlight=False, soft_wrap=True))
    return plan.settings, load_planned(plan, trusted=trusted, ask_input=ask_input, input_cache=input_cache)


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
        tool_filters={name: tools.tool_filter() for name, tools in settings.server_tools.items()},
    )


def warn_short_secrets(redactor: Redactor, console: Console) -> None:
    """Say once which password answers are too short to be hidden in what servers and the model say."""
    warning = redactor.short_warning()
    if warning:
        console.print(Text(warning, style="yellow"))
