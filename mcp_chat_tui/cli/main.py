"""Entry point of ``mcp-chat-tui``: parse the command line, load configuration, run the chosen mode."""

from __future__ import annotations

import asyncio
import getpass
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from mcp_chat_tui.cli.args import build_parser
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.paths import user_log_dir

SIGTERM_EXIT = 128 + signal.SIGTERM


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(SIGTERM_EXIT)


def exit_on_sigterm() -> None:
    """Outside the event loop's own handling (start-up, reading a transcript, the last clean-up),
    SIGTERM ends the program at once with 143, running ``finally`` blocks on the way (a lock is
    released, a server stopped), as Ctrl+C's ``KeyboardInterrupt`` does with 130."""
    signal.signal(signal.SIGTERM, _terminated)


def setup_logging() -> Path | None:
    """Send library logs (the SDK's included) to a file, never over the screen."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    try:
        log_dir = user_log_dir()
        log_dir.mkdir(parents=True, exist_ok=True)
        path = log_dir / "mcp-chat-tui.log"
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        path, handler = None, logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


def ask_on_terminal(spec: object) -> str:
    """Ask for one ``${input:...}`` value on the terminal (passwords without echo)."""
    description = getattr(spec, "description", "") or getattr(spec, "id", "value")
    default = getattr(spec, "default", None)
    prompt = f"{description}" + (f" [{default}]" if default and not getattr(spec, "password", False) else "") + ": "
    if not sys.stdin.isatty():
        if default is not None:
            return default
        raise UserFacingError(f"mcp.json input {getattr(spec, 'id', '?')!r} needs a value and there is no terminal to ask")
    value = getpass.getpass(prompt) if getattr(spec, "password", False) else input(prompt)
    return value or (default or "")


async def run_until_signal(work: Callable[[], Awaitable[int]]) -> int:
    """Run ``work``; SIGTERM cancels it so every ``finally`` (server shutdown) runs, then exits 143."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    terminated = False

    def on_sigterm() -> None:
        nonlocal terminated
        terminated = True
        if task is not None:
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    try:
        return await work()
    except asyncio.CancelledError:
        if terminated:
            return SIGTERM_EXIT
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        exit_on_sigterm()  # asyncio put the default back, which would end the process without clean-up


async def _check_servers(args) -> int:
    from mcp_chat_tui.cli.setup import load_configuration, make_hub, warn_short_secrets
    from mcp_chat_tui.cli.check import check_servers

    console = Console()
    settings, mcp_config = load_configuration(args, ask_input=ask_on_terminal)
    warn_short_secrets(mcp_config.redactor, console)
    console.print(f"mcp.json: [bold]{mcp_config.path}[/] ({mcp_config.source})")
    hub = make_hub(settings, mcp_config)
    async with hub:
        return await check_servers(hub, console)


def main(argv: list[str] | None = None) -> int:
    exit_on_sigterm()
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging()
    err = Console(stderr=True)
    try:
        if args.check_servers:
            return asyncio.run(run_until_signal(lambda: _check_servers(args)))
        from mcp_chat_tui.cli.chat import run_chat

        return run_chat(args, parser)
    except UserFacingError as exc:
        err.print(f"[bold red]mcp-chat-tui:[/] {escape(str(exc))}", highlight=False)
        if args.json and args.prompt is not None:
            from mcp_chat_tui.cli.report import failure_json

            print(failure_json(args.prompt, str(exc), exc.exit_code), flush=True)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
