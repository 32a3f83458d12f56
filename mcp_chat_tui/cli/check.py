"""``--check-servers``: start every configured server, print one table row each, exit non-zero on failure."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mcp_chat_tui.core.text import counted, visible_controls
from mcp_chat_tui.servers import ServerHub, ServerState, ServerStatus, tool_list_notes

STATE_STYLE = {
    ServerState.READY: "green",
    ServerState.BUSY: "yellow",
    ServerState.STARTING: "yellow",
    ServerState.FAILED: "red",
    ServerState.CRASHED: "red",
    ServerState.STOPPED: "dim",
    ServerState.DISABLED: "dim",
    ServerState.NEEDS_SIGN_IN: "yellow",
}


def status_table(statuses: list[ServerStatus]) -> Table:
    table = Table(title="MCP servers", title_justify="left")
    table.add_column("server", style="bold")
    table.add_column("state")
    table.add_column("transport")
    table.add_column("tools", justify="right")
    table.add_column("started")
    table.add_column("details", overflow="fold")
    for status in statuses:
        style = STATE_STYLE.get(status.state, "")
        started = ""
        if status.started_at is not None:
            started = status.started_at.strftime("%H:%M:%S")
            if status.start_seconds is not None:
                started += f" ({status.start_seconds:.2f} s)"
        if status.reason:
            details = shown(status.reason)
        else:
            details = shown(", ".join(spec.name for spec in status.tools))
            if status.server_name:
                version = f" {status.server_version}" if status.server_version else ""
                details = f"[dim]{shown(status.server_name + version)}:[/] {details}"
        if tool_list_notes(status):
            details += "\n" + shown(tool_list_notes(status))
        tool_count = str(len(status.tools)) if status.state.usable else "-"
        table.add_row(
            shown(status.name), f"[{style}]{status.state.value}[/]", status.transport, tool_count, started, details
        )
    return table


def shown(text: str) -> str:
    """Text from a server or a config, for a markup string: no markup, no escape sequences."""
    return escape(visible_controls(text))


async def check_servers(hub: ServerHub, console: Console) -> int:
    """Start, report, shut down; 0 when every enabled server became ready or needs sign-in (which
    is no fault of the configuration: the user signs in with ``--sign-in NAME``)."""
    with console.status("starting servers…"):
        statuses = await hub.start_all()
    console.print(status_table(statuses))
    refused = sum(len(s.refused_tools) for s in statuses)
    if refused:
        console.print(
            f"[yellow]{counted(refused, 'tool')} refused[/] (named above): those servers must fix them; their other tools work."
        )
    waiting = [s.name for s in statuses if s.state == ServerState.NEEDS_SIGN_IN]
    if waiting:
        commands = ", ".join(f"mcp-chat-tui --sign-in {name}" for name in waiting)
        needs = "needs" if len(waiting) == 1 else "need"
        console.print(f"[yellow]{counted(len(waiting), 'server')} {needs} sign-in[/]: {shown(commands)}")
    failed = [s for s in statuses if s.state in (ServerState.FAILED, ServerState.CRASHED)]
    if failed:
        console.print(
            f"[red]{len(failed)} of {len(statuses)} servers failed.[/] Fix the entries named above in mcp.json."
        )
        return 1
    ready = sum(1 for s in statuses if s.state.usable)
    console.print(f"[green]{counted(ready, 'server')} ready[/], {sum(len(s.tools) for s in statuses)} tools.")
    return 0
