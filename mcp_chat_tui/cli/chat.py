"""Start a conversation: configuration, the engine and the servers (loaded together), then the interface."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.cli.check import status_table
from mcp_chat_tui.cli.input_text import argument_problem, utf8_problem
from mcp_chat_tui.cli.log_lines import print_warnings
from mcp_chat_tui.cli.model_commands import one_shot_problem
from mcp_chat_tui.cli.report import ExitCode, OneShotReport
from mcp_chat_tui.cli.setup import load_configuration, load_planned, make_hub, plan_configuration, warn_short_secrets
from mcp_chat_tui.cli.terminal import SIGTERM_EXIT, ask_on_terminal, exit_on_sigterm, run_until_signal
from mcp_chat_tui.cli.typed_lines import terminal_lines
from mcp_chat_tui.config import McpConfig, ModelOptions, Settings, save_setting, settings_path
from mcp_chat_tui.config.settings import approval_value
from mcp_chat_tui.conversation import Conversation, ModelSwitcher, chat_agent, held_for_the_run, read_if_present
from mcp_chat_tui.conversation.models import EngineMaker
from mcp_chat_tui.core.collector import resume_collector
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.paths import bundled_path, demo_model_path
from mcp_chat_tui.core.paths import model_display_name as display_name
from mcp_chat_tui.core.server_identity import SavedRule
from mcp_chat_tui.core.text import counted, visible_controls
from mcp_chat_tui.demo import try_asking_line
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.generation import CONFIG, FLAG
from mcp_chat_tui.engine.model_list import ENDPOINT, ModelChoice
from mcp_chat_tui.servers import ServerHub, ServerState, tool_list_notes
from mcp_chat_tui.transcript import Transcript

if TYPE_CHECKING:
    from mcp_chat_tui.engine.settings import EngineSettings


def make_engine(args: argparse.Namespace, model: str, options: ModelOptions | None = None) -> Engine:
    """The engine: a remote endpoint's with ``--endpoint``, else MLX's, with ``options`` (config.toml's)
    and the flags over them."""
    settings = engine_settings(options or ModelOptions(), flag_options(args))
    if args.endpoint:
        from mcp_chat_tui.engine.remote import OpenAIEngine

        return OpenAIEngine(args.endpoint, model, api_key_env=args.api_key_env, settings=settings)
    from mcp_chat_tui.engine.llama_engine import LLAMA_CPP, choose_engine

    engine, note = choose_engine(getattr(args, "engine", "auto"), model)
    if note:
        print(f"mcp-chat-tui: {note}", file=sys.stderr)
    if engine == LLAMA_CPP:
        from mcp_chat_tui.engine.llama_engine import LlamaCppEngine

        return LlamaCppEngine(model, settings)
    from mcp_chat_tui.engine.mlx_engine import MlxEngine

    return MlxEngine(model, settings)


def engine_maker(args: argparse.Namespace, settings: Settings) -> EngineMaker:
    """How ``/model`` builds the engine of the model chosen: the endpoint's for a model it serves, else
    a local one; with config.toml's settings for that model and this run's flags over them."""

    def make(choice: ModelChoice) -> Engine:
        options = settings.model_options(choice.name)
        if choice.kind == ENDPOINT:
            return make_engine(args, choice.load, options)
        return make_engine(argparse.Namespace(**{**vars(args), "endpoint": None}), choice.load, options)

    return make


def model_switcher(
    args: argparse.Namespace, settings: Settings, conversation: Conversation, model: str
) -> ModelSwitcher:
    """``/model``'s lister and switcher for ``conversation``: the local ``model`` the run began with (to
    switch back to), config.toml's models, the endpoint's."""
    endpoint = conversation.agent.engine if args.endpoint else None
    named = [*([] if args.endpoint else [model]), *settings.named_models()]
    return ModelSwitcher(conversation, engine_maker(args, settings), named, endpoint)


FLAG_OPTIONS = {
    "temp": "temperature",
    "max_tokens": "max_tokens",
    "seed": "seed",
    "tool_prompt": "tool_prompt",
    "thinking": "thinking",
    "kv_bits": "kv_bits",
    "kv_group_size": "kv_group_size",
    "draft_model": "draft_model",
    "num_draft_tokens": "num_draft_tokens",
    "context_length": "context_length",
}  # flag's dest: its model setting (config.toml's other settings given as flags: cli/setup.py FLAG_SETTINGS)


def flag_options(args: argparse.Namespace) -> ModelOptions:
    """The model settings given as flags (``--temp``, ``--tool-prompt``, ``--kv-bits``, ...); they go over
    config.toml's."""
    given = {key: getattr(args, dest, None) for dest, key in FLAG_OPTIONS.items()}
    return ModelOptions(**{key: value for key, value in given.items() if value is not None})


def engine_settings(options: ModelOptions, flags: ModelOptions | None = None) -> EngineSettings:
    """The engine's settings: ``flags`` over config.toml's ``options`` (a key set in neither keeps the
    engine's default), each set value's source named for the model detail."""
    from mcp_chat_tui.engine.settings import EngineSettings

    flags = flags or ModelOptions()
    given = flags.over(options).model_dump(exclude_none=True)
    flagged = flags.model_dump(exclude_none=True)
    sources = {key: FLAG if key in flagged else CONFIG for key in given}
    return EngineSettings(**given, sources=sources)


LOCAL_ONLY_FLAGS = ("kv_bits", "kv_group_size", "draft_model", "num_draft_tokens")  # flags: --kv-bits ...


def check_local_flags(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """The KV cache and draft model flags are for a local model: with ``--endpoint`` they are bad input."""
    given = ["--" + key.replace("_", "-") for key in LOCAL_ONLY_FLAGS if getattr(args, key, None) is not None]
    if args.endpoint and given:
        parser.error(f"{', '.join(given)}: for a local model, not with --endpoint (the server decides)")


def make_policy(args: argparse.Namespace, settings: Settings, mcp_config: McpConfig, hub: ServerHub) -> ApprovalPolicy:
    """The approval policy of config.toml and ``--yes``. ``trusted_servers`` are the servers whose
    read-only marks auto-readonly believes; the bundled mcp.json's demo server (``--demo``) is
    trusted too: it ships with the app and its tools only read. A saved choice names the server it
    was saved for (the hub's configuration of that name) and applies to it alone."""
    path = settings_path(args.config)

    def persist(server: str, tool: str, rule: SavedRule) -> None:
        save_setting(path, ("approvals", server, tool), approval_value(rule))

    trusted = set(settings.trusted_servers)
    if mcp_config.path == bundled_path("mcp.json"):
        trusted |= set(mcp_config.servers)
    return ApprovalPolicy(
        settings.approval,
        saved=dict(settings.approval_rules()),
        on_save=persist,
        trusted=trusted,
        yes=args.yes,
        identity_of=hub.identity,
    )


def check_start(hub: ServerHub, settings: Settings, console: Console) -> None:
    """Document 002: a server that cannot start is fatal, unless config.toml says to continue."""
    failed = [
        s for s in hub.statuses if s.state in (ServerState.FAILED, ServerState.CRASHED, ServerState.NEEDS_SIGN_IN)
    ]
    if not failed:
        return
    console.print(status_table(hub.statuses))
    names = ", ".join(s.name for s in failed)
    if settings.on_server_failure == "exit":
        signing = [s.name for s in failed if s.state == ServerState.NEEDS_SIGN_IN]
        what = (
            f"MCP {'server needs' if len(signing) == 1 else 'servers need'} sign-in: {', '.join(signing)} "
            f"(run {', '.join(f'mcp-chat-tui --sign-in {name}' for name in signing)})"
            if len(signing) == len(failed)
            else f"MCP {'server' if len(failed) == 1 else 'servers'} failed to start: {names}. Fix mcp.json"
        )
        error = UserFacingError(f'{what}, or set on_server_failure = "continue" in config.toml to chat without them.')
        if len(signing) == len(failed):
            error.exit_code = ExitCode.NEEDS_SIGN_IN
        raise error
    console.print(f"[yellow]continuing without: {names}[/]")


async def _console_configuration(args: argparse.Namespace) -> tuple[Settings, McpConfig]:
    """Settings and servers for ``--plain`` and ``-p``, asked about on the terminal (a line typed ahead
    of a question there is a prompt, unless ``-p``); ``-p``'s prompt with the secrets given hidden."""
    terminal_lines(keeps_prompts=args.prompt is None)
    settings, mcp_config = await load_configuration(args, ask_input=ask_on_terminal)
    if args.prompt is not None:  # as the conversation, the report and a failure's JSON will show it
        args.prompt = mcp_config.redactor.text(args.prompt)
    return settings, mcp_config


async def _chat(args: argparse.Namespace, model: str, loaded: Transcript | None) -> int:
    """``--plain`` and ``-p``. With ``-p`` everything but the answer (or ``--json``'s object) goes to stderr."""
    from mcp_chat_tui.cli.plain import run_plain

    one_shot = args.prompt is not None
    console = Console(highlight=False, stderr=one_shot)
    settings, mcp_config = await _console_configuration(args)
    warn_short_secrets(mcp_config.redactor, console)
    engine = make_engine(args, model, settings.model_options(model))
    hub = make_hub(settings, mcp_config)
    print_warnings(hub, Console(stderr=True, highlight=False, soft_wrap=True))
    async with hub:
        try:
            await _load_and_start(engine, hub, model, len(mcp_config.enabled()), console)
            resume_collector()  # paused by the command while it started (core/collector.py)
            if sys.stdin.isatty():  # without a terminal nobody can sign in: check_start says what to run
                from mcp_chat_tui.cli.sign_in_command import offer_sign_in

                await offer_sign_in(hub, console)
            check_start(hub, settings, console)
            _print_ready(hub, model, mcp_config, console, one_shot=one_shot)
            _print_generation(engine, console)
            agent = chat_agent(engine, hub, make_policy(args, settings, mcp_config, hub), settings)
            conversation = Conversation(
                agent, display_name(model), transcript=loaded, path=args.transcript, save=not args.no_save
            )
            report = OneShotReport(args.prompt, display_name(model)) if one_shot else None
            code = await run_plain(
                conversation,
                console,
                one_prompt=args.prompt,
                auto_yes=args.yes,
                model_label=display_name(model),
                report=report,
                catalog=hub,
                models=model_switcher(args, settings, conversation, model),
            )
            if report is not None:
                report.write(sys.stdout, as_json=args.json)
            return code
        finally:
            await engine.close()


def _print_generation(engine: Engine, console: Console) -> None:
    """The generation settings not at their default, with where each came from (none: nothing printed)."""
    generation = engine.generation
    if generation is not None and generation.summary():
        console.print(Text(f"generation: {generation.summary()}", style="dim"), soft_wrap=True)


async def _load_and_start(engine: Engine, hub: ServerHub, model: str, server_count: int, console: Console) -> None:
    """Load the model and start the servers at once, with a status line that follows the download."""
    with console.status(f"loading {model} and starting {counted(server_count, 'server')}…") as status:

        def on_progress(progress) -> None:
            if progress.stage in ("download", "convert") and progress.bytes_total:
                verb = "downloading" if progress.stage == "download" else "converting (once)"
                status.update(f"{verb} {model}: {progress.bytes_done / 1e6:.1f} of {progress.bytes_total / 1e6:.1f} MB")
            elif progress.message:
                status.update(progress.message)

        await asyncio.gather(engine.load(on_progress), hub.start_all())
    if engine.speed_hint:  # a real model on a CPU without a fast BLAS: how to get one, once
        print(engine.speed_hint, file=sys.stderr)


def _print_ready(hub: ServerHub, model: str, mcp_config: McpConfig, console: Console, *, one_shot: bool) -> None:
    """The line that says what is ready (model, tools, servers), where mcp.json came from, and each
    ready server's tool-list notes."""
    ready = [s for s in hub.statuses if s.state.usable]
    leave = "" if one_shot else " · type bye or quit to leave"
    console.print(
        Text(
            f"{display_name(model)} · {len(hub.tools())} tools from {counted(len(ready), 'server')}{leave}",
            style="dim",
        )
    )
    console.print(Text(f"mcp.json: {mcp_config.path} ({mcp_config.source})", style="dim"))
    if model == demo_model_path() and not one_shot:
        console.print(Text(try_asking_line(), style="dim"))
    for status in ready:
        if tool_list_notes(status):
            console.print(Text(visible_controls(f"{status.name}: {tool_list_notes(status)}"), style="yellow"))


async def _tui(args: argparse.Namespace, model: str, loaded: Transcript | None) -> int:
    """The full-screen app; SIGTERM and SIGINT (``kill -INT``: Ctrl+C itself is a key here) leave it the
    same way Ctrl+C does (servers shut down first), with 143 and 130."""
    from mcp_chat_tui.ui.app import ChatApp
    from mcp_chat_tui.ui.widgets.media import image_support

    image_support()  # the terminal asked how it draws images (cli/main.py's probe) before anything else reads it
    plan = plan_configuration(args)  # a folder's mcp.json not trusted yet: the app asks before it starts anything
    settings, mcp_config = plan.settings, load_planned(plan, trusted=plan.question is None, ask_input=ask_on_terminal)
    hub = make_hub(settings, mcp_config)
    app = ChatApp(
        engine=make_engine(args, model, settings.model_options(model)),
        hub=hub,
        policy=make_policy(args, settings, mcp_config, hub),
        settings=settings,
        settings_file=settings_path(args.config),
        model_label=display_name(model),
        transcript_file=args.transcript,
        transcript=loaded,
        open_resume=args.resume,
        autosave=not args.no_save,
        folder_to_trust=plan.question,
    )
    app.model_controls.switcher = model_switcher(args, settings, app.conversation, model)
    loop = asyncio.get_running_loop()
    for signum, code in ((signal.SIGTERM, SIGTERM_EXIT), (signal.SIGINT, ExitCode.INTERRUPTED)):
        loop.add_signal_handler(signum, lambda code=code: asyncio.ensure_future(app.action_quit(return_code=code)))
    try:
        await app.run_async()
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        loop.remove_signal_handler(signal.SIGINT)  # Python's own again: KeyboardInterrupt, 130
        exit_on_sigterm()
        await app.shutdown()
    if app.unsaved:
        Console(stderr=True, soft_wrap=True).print(f"[bold red]mcp-chat-tui:[/] {escape(app.unsaved)}", highlight=False)
    if app.fatal_error:
        Console(stderr=True, soft_wrap=True).print(
            f"[bold red]mcp-chat-tui:[/] {escape(app.fatal_error)}", highlight=False
        )
        return ExitCode.FAILURE
    return app.return_code or (ExitCode.FAILURE if app.unsaved else 0)


def read_prompt(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """``-p -`` reads the prompt from stdin (for pipes); an empty prompt, ``/model`` or ``--json`` without
    ``-p`` is bad input."""
    if args.json and args.prompt is None:
        parser.error("--json goes with -p PROMPT")
    if args.prompt == "-":
        data = sys.stdin.buffer.read()
        if (problem := utf8_problem(data, "the prompt on stdin")) is not None:
            parser.error(problem)
        args.prompt = data.decode("utf-8").strip()
    elif args.prompt is not None and (problem := argument_problem(args.prompt, "the prompt given with -p")):
        parser.error(problem)
    if args.prompt is not None and not args.prompt.strip():
        parser.error("the prompt given with -p is empty")
    if args.prompt is not None and (problem := one_shot_problem(args.prompt)):
        parser.error(problem)


def run_chat(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    model = args.model or (demo_model_path() if args.demo else None)
    if model is None:
        parser.error("give a model (a Hugging Face repo id or a local folder), or --demo for the bundled toy model")
    read_prompt(args, parser)
    check_local_flags(args, parser)
    with held_for_the_run(args.transcript, save=not args.no_save):
        loaded = read_if_present(args.transcript)  # before the event loop: Ctrl+C and SIGTERM stop a long read at once
        if args.plain or args.prompt is not None:
            return asyncio.run(run_until_signal(lambda: _chat(args, model, loaded)))
        return asyncio.run(_tui(args, model, loaded))
