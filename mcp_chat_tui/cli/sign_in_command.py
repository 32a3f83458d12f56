"""Signing in to HTTP servers from a terminal: ``--sign-in NAME``, ``--sign-out NAME``, and the
question ``--plain`` asks at start for a server that needs it.

The authorization URL is printed whole (copy it by hand if you like); the browser is opened only
after the user says yes. Without a terminal nothing is asked: the URL is printed and the
sign-in waits for the browser to come back.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from pathlib import Path

from rich.console import Console
from rich.text import Text

from mcp_chat_tui.cli.typed_lines import is_yes_or_no, terminal_lines
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.core.page_address import check_page_address
from mcp_chat_tui.core.text import visible_controls
from mcp_chat_tui.servers import ServerHub, ServerState
from mcp_chat_tui.servers.oauth import SignInPrompt, SignInRequest


async def ask_line(console: Console, question: str) -> str | None:
    """One line typed on the terminal for ``question`` (None at the end of input): one typed before
    the question was put answers nothing (cli/typed_lines.py). Read on a daemon thread, so a pending
    question never keeps the program from exiting."""
    async with terminal_lines().question(console) as asking:
        return await asking.ask(lambda: console.print(question, end="", markup=False, highlight=False), is_yes_or_no)


def terminal_prompt(console: Console, shown: list[SignInRequest] | None = None) -> SignInPrompt:
    """Shows the authorization URL whole; on a terminal, asks before opening the browser."""

    async def prompt(request: SignInRequest) -> None:
        if shown is not None:
            shown.append(request)
        console.print(Text(visible_controls(f"Sign in to {request.server} at this address:"), style="bold"))
        console.print(request.url, markup=False, highlight=False, soft_wrap=True)
        address = check_page_address(request.url)
        if address.refusal:
            console.print(Text(address.refusal, style="bold red"), soft_wrap=True)
        elif sys.stdin.isatty():
            answer = await ask_line(console, "Open it in your browser? [Y/n] ")
            if answer is not None and answer.strip().lower() in ("", "y", "yes"):
                if not webbrowser.open(address.url):
                    console.print("no browser could be opened here: open the address above yourself")
        console.print(
            Text(f"waiting for the browser to come back to {request.redirect_uri} (Ctrl+C gives up)…", style="dim")
        )

    return prompt


async def offer_sign_in(hub: ServerHub, console: Console) -> None:
    """At start, on a terminal: each server that needs sign-in is offered one."""
    for status in hub.statuses:
        if status.state != ServerState.NEEDS_SIGN_IN:
            continue
        answer = await ask_line(console, visible_controls(f"{status.name} needs sign-in. Sign in now? [Y/n] "))
        if answer is None or answer.strip().lower() not in ("", "y", "yes"):
            continue
        after = await hub.sign_in(status.name, terminal_prompt(console))
        style = "green" if after.state.usable else "red"
        console.print(Text(visible_controls(after.summary()), style=style))
        if hub.token_vault.notice:
            console.print(Text(hub.token_vault.notice, style="yellow"))


def _oauth_server(hub: ServerHub, name: str, mcp_path: Path) -> None:
    """``name`` is a server of mcp.json that signs in with OAuth, or a ``ConfigError`` says why not."""
    names = [status.name for status in hub.statuses]
    if name not in names:
        raise ConfigError(mcp_path, None, f"no server named {name!r} (its servers: {', '.join(names) or 'none'})")
    config = hub.config(name)
    if config.oauth_settings is None:
        why = (
            "it is a stdio server"
            if config.type == "stdio"
            else 'sign-in is off for it ("oauth": false, or an Authorization header)'
        )
        raise ConfigError(mcp_path, None, f"{name} does not sign in with OAuth: {why}")


async def sign_in_command(args: argparse.Namespace, console: Console) -> int:
    """``--sign-in NAME``: start that server with a person to authorize it; 0 once it is ready."""
    from mcp_chat_tui.cli.setup import load_configuration, make_hub
    from mcp_chat_tui.cli.terminal import ask_on_terminal

    settings, mcp_config = await load_configuration(args, ask_input=ask_on_terminal)
    hub = make_hub(settings, mcp_config)
    _oauth_server(hub, args.sign_in, mcp_config.path)
    shown: list[SignInRequest] = []
    async with hub:
        status = await hub.sign_in(args.sign_in, terminal_prompt(console, shown))
        if hub.token_vault.notice:
            console.print(Text(hub.token_vault.notice, style="yellow"))
        if not status.state.usable:
            console.print(Text(visible_controls(f"not signed in: {status.summary()}"), style="red"), soft_wrap=True)
            return 1
        already = "" if shown else " (it was signed in already)"
        console.print(
            Text(
                visible_controls(
                    f"signed in to {status.name}{already}: {len(status.tools)} tools; "
                    f"its tokens are kept in {hub.token_vault.where}"
                ),
                style="green",
            ),
            soft_wrap=True,
        )
        return 0


async def sign_out_command(args: argparse.Namespace, console: Console) -> int:
    """``--sign-out NAME``: forget the tokens and the registered client kept for that server."""
    from mcp_chat_tui.cli.setup import load_configuration, make_hub
    from mcp_chat_tui.cli.terminal import ask_on_terminal

    settings, mcp_config = await load_configuration(args, ask_input=ask_on_terminal)
    hub = make_hub(settings, mcp_config)
    _oauth_server(hub, args.sign_out, mcp_config.path)
    if hub.forget_sign_in(args.sign_out):
        console.print(visible_controls(f"forgot the sign-in of {args.sign_out} (kept in {hub.token_vault.where})"))
    else:
        console.print(visible_controls(f"{args.sign_out} had no sign-in kept"))
    return 0
