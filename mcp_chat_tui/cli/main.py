"""Entry point of ``mcp-chat-tui``: parse the command line, load configuration, run the chosen mode."""

from __future__ import annotations

import atexit
import os
import sys
from typing import TYPE_CHECKING

from mcp_chat_tui.core.collector import pause_collector, resume_collector, resume_collector_later

if TYPE_CHECKING:  # the rest is imported by ``main``, after ``run`` has paused the collector
    import argparse
    import threading
    from pathlib import Path


def setup_logging() -> Path | None:
    """Send library logs (the SDK's included) to a file, never over the screen."""
    import io
    import logging

    from mcp_chat_tui.core.files import open_append
    from mcp_chat_tui.core.paths import user_log_dir

    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    try:
        log_dir = user_log_dir()
        log_dir.mkdir(parents=True, exist_ok=True)
        path = log_dir / "mcp-chat-tui.log"  # never through a link planted at its name; any text, lone surrogates too
        stream = io.TextIOWrapper(open_append(path), encoding="utf-8", errors="backslashreplace", write_through=True)
        handler: logging.Handler = logging.StreamHandler(stream)
    except OSError:
        path, handler = None, logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


async def _check_servers(args) -> int:
    from rich.console import Console

    from mcp_chat_tui.cli.check import check_servers
    from mcp_chat_tui.cli.setup import load_configuration, make_hub, warn_short_secrets
    from mcp_chat_tui.cli.terminal import ask_on_terminal

    console = Console()
    settings, mcp_config = await load_configuration(args, ask_input=ask_on_terminal)
    warn_short_secrets(mcp_config.redactor, console)
    console.print(f"mcp.json: [bold]{mcp_config.path}[/] ({mcp_config.source})")
    hub = make_hub(settings, mcp_config)
    async with hub:
        return await check_servers(hub, console)


def tolerant_output() -> None:
    """Standard output and error write any text: a lone surrogate (which an endpoint or a server can
    send, and UTF-8 cannot hold) is written as ``\\udXXX`` instead of raising in the middle of a run."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _probe_terminal_for_images(args: argparse.Namespace) -> threading.Thread | None:
    """For the full-screen app, ask the terminal how it draws images while the app's modules are
    imported (ui/widgets/media.py); ``--plain`` and ``-p`` draw none."""
    if args.plain or args.prompt is not None:
        return None
    from mcp_chat_tui.ui.widgets.media import probe_terminal_for_images

    return probe_terminal_for_images()


def full_screen(args: argparse.Namespace) -> bool:
    """Whether ``args`` start the full-screen app (not a check, a search, sign-in, ``--plain`` or ``-p``)."""
    return not (
        args.check_servers or args.check_tools or args.search is not None or args.sign_in or args.sign_out
    ) and not (args.plain or args.prompt is not None)


def run_mode(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run what ``args`` ask for: a check, a search, sign-in, or a conversation (the app, ``--plain``, ``-p``)."""
    import asyncio

    from mcp_chat_tui.cli.terminal import run_until_signal

    if args.check_servers:
        return asyncio.run(run_until_signal(lambda: _check_servers(args)))
    if args.check_tools:
        from mcp_chat_tui.cli.check_tools import run_check_tools

        return run_check_tools(args, parser)
    if args.search is not None:
        from mcp_chat_tui.cli.search import run_search

        return run_search(args.search, as_json=args.json)
    if args.sign_in or args.sign_out:
        from rich.console import Console

        from mcp_chat_tui.cli.sign_in_command import sign_in_command, sign_out_command

        command = sign_out_command if args.sign_out else sign_in_command
        return asyncio.run(run_until_signal(lambda: command(args, Console(highlight=False))))
    probe = _probe_terminal_for_images(args)
    try:
        from mcp_chat_tui.cli.chat import run_chat

        return run_chat(args, parser)
    finally:
        if probe is not None:  # not left while it holds the terminal in its own mode (0.1 s a question),
            probe.join(0.5)  # nor held past the second SIGTERM and Ctrl+C have to end the app


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.markup import escape

    from mcp_chat_tui.cli.args import blas_setting, build_parser
    from mcp_chat_tui.cli.terminal import exit_on_sigterm
    from mcp_chat_tui.core.errors import UserFacingError
    from mcp_chat_tui.engine.blas import load_blas

    exit_on_sigterm()
    tolerant_output()
    load_blas(blas_setting(argv))  # before anything imports mlx.core: it binds its BLAS then
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.search is not None:  # run's pause is for a start that imports the SDK (core/collector.py)
        resume_collector()
    elif not full_screen(args):  # resumed when -p or --plain has started (cli/chat.py), or at the limit
        resume_collector_later()
    setup_logging()
    err = Console(stderr=True, soft_wrap=True)
    try:
        return run_mode(args, parser)
    except UserFacingError as exc:
        err.print(f"[bold red]mcp-chat-tui:[/] {escape(str(exc))}", highlight=False)
        if args.json and args.prompt is not None:
            from mcp_chat_tui.cli.report import failure_json, is_terminal
            from mcp_chat_tui.core.text import json_for_terminal

            failure = failure_json(args.prompt, str(exc), exc.exit_code)
            print(json_for_terminal(failure) if is_terminal(sys.stdout) else failure, flush=True)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    finally:
        resume_collector()  # the app resumed it when ready; a start that failed earlier did not


def run() -> None:
    """The ``mcp-chat-tui`` command: ``main``, then a quick exit.

    By the time ``main`` returns, everything the app owns is closed: servers stopped, the
    conversation saved, locks released, the terminal restored (its own threads are daemons). What
    is left is the interpreter's teardown of its modules, about 0.6 s of CPU on a small machine,
    which would spend most of the second Ctrl+C and SIGTERM have to end the app. So the exit
    handlers run (the log is flushed), then the process ends without that teardown.
    """
    pause_collector()  # until the app, -p or --plain has started (core/collector.py); main resumes it for --search
    try:
        code = main()
    except SystemExit as exc:  # argparse's errors, SIGTERM outside the event loop
        if not isinstance(exc.code, int | None):
            raise  # a message to print: the ordinary exit does that
        code = exc.code or 0
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
