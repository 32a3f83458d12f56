"""The plain console interface (document 002 as written): a ``prompt ->`` line, streamed answers, every call shown.

Everything a server or the model sends is printed as literal text (``rich.text.Text``),
so markup and terminal escape sequences in it cannot style or move the screen. This module runs
the conversation; ``plain_console.py`` prints its events and asks for approvals.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from mcp_chat_tui.agent.asking_requests import describe_answered
from mcp_chat_tui.agent.budget import cut_label
from mcp_chat_tui.agent.events import AgentEvent
from mcp_chat_tui.cli.input_text import NotUtf8Line
from mcp_chat_tui.cli.model_commands import model_command
from mcp_chat_tui.cli.plain_console import PlainConsole, literal
from mcp_chat_tui.cli.prompt_commands import command_turn, print_attachments
from mcp_chat_tui.cli.report import ExitCode, OneShotReport
from mcp_chat_tui.cli.request_prompts import install_console_requests
from mcp_chat_tui.cli.typed_lines import LineReader, terminal_lines
from mcp_chat_tui.conversation import (
    NOTHING_TO_COMPACT,
    RETRY_LINE,
    Conversation,
    ModelSwitcher,
    Route,
    Routed,
    route_line,
    switched_line,
)
from mcp_chat_tui.conversation.conversation import SaveReport
from mcp_chat_tui.conversation.recording import tee
from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.local_files import FileNotAttached, files_named
from mcp_chat_tui.core.text import counted, pretty_json
from mcp_chat_tui.servers.hub import ServerHub
from mcp_chat_tui.servers.user_calls import call_attachment, call_yourself
from mcp_chat_tui.transcript import Exchange, Proposal, Transcript
from mcp_chat_tui.transcript.store import RETRY_INTERVAL

PROMPT = "prompt -> "


def print_loaded(console: Console, transcript: Transcript) -> None:
    """A resumed conversation, compactly: prompts, answers, one line per call, how a reply ended early."""
    goes_on = transcript.exchanges[-1] if transcript.turn_goes_on() else None  # its reply continues now
    switches = transcript.model_switches()
    for index, exchange in enumerate(transcript.exchanges):
        if index in switches:
            console.print(literal(f"— {switched_line(switches[index])} —", "dim"))
        console.print(literal(PROMPT + exchange.user, "bold"))
        print_attachments(console, exchange.attachments)
        for step in exchange.steps:
            if step.thought:  # as the live reply printed it
                console.print(literal(f"thinking: {step.thought}", "dim italic"))
            if step.text:
                console.print(literal(step.text))
            for proposal in step.proposals:
                console.print(literal(loaded_call_line(proposal), "dim"))
            for request in step.requests:
                console.print(literal(f"  {describe_answered(request)}", "dim"))
        if exchange is not goes_on and (note := end_note(exchange)):
            console.print(literal(note, "yellow"))
    console.print(literal(f"— resumed: {counted(len(transcript.exchanges), 'exchange')} —", "dim"))


def loaded_call_line(proposal: Proposal) -> str:
    """One call of a loaded conversation: its tool, the model's arguments (and the ones it ran with
    when you edited them), how it ended."""
    if proposal.result:
        status = proposal.result.status
    else:
        status = "interrupted" if proposal.interrupted else "waiting" if proposal.awaiting_choice else "approved"
    progress = proposal.result.progress if proposal.result else None
    if progress is not None:
        status += f" (last progress {progress.describe()})"
    cut = proposal.result.cut if proposal.result else None
    if cut is not None:
        status += f" (✂ {cut_label(cut.kept_tokens, cut.total_tokens)})"
    edited = f", ran with {pretty_json(proposal.ran_with)} (edited by you)" if proposal.ran_with is not None else ""
    return f"  ⚙ {proposal.name} {pretty_json(proposal.arguments)}{edited} → {status}"


def end_note(exchange: Exchange) -> str:
    """How a loaded reply ended when it did not simply answer ("" when it did)."""
    if exchange.cut_short:
        return "[cut short: the app ended before this reply was finished]"
    if exchange.end == "error":
        return f"[error: {exchange.error}]" if exchange.error else "[error]"
    return "[stopped]" if exchange.end == "stopped" else ""


def report_saving(loop: asyncio.AbstractEventLoop) -> SaveReport:
    """Say on stderr, in one line, when saving a conversation fails and when it works again (the
    saver retries on its own); called on the saver's thread."""
    stderr = Console(stderr=True, highlight=False, soft_wrap=True)

    def changed(path: Path, problem: str | None) -> None:
        if problem is not None:
            line = Text(f"{problem}; retrying every {RETRY_INTERVAL:.0f} s", style="bold red")
        else:
            line = Text(f"saved {path} again", style="green")
        try:
            loop.call_soon_threadsafe(partial(stderr.print, line, soft_wrap=True))
        except RuntimeError:  # the loop is closed: say it from here
            stderr.print(line, soft_wrap=True)

    return changed


async def run_plain(
    conversation: Conversation,
    console: Console,
    *,
    one_prompt: str | None = None,
    auto_yes: bool = False,
    model_label: str = "model",
    report: OneShotReport | None = None,
    catalog: ServerHub | None = None,
    models: ModelSwitcher | None = None,
) -> int:
    """The ``prompt ->`` loop (or one turn with ``-p``) of ``conversation``; returns the exit code.
    With ``-p`` the ``report`` holds the answer back for stdout and decides the exit code
    (cli/report.py). Events that could not be saved make it 1, said on stderr."""
    if one_prompt is not None and report is None:
        report = OneShotReport(one_prompt, model_label)
    if conversation.on_save_change is None:
        conversation.on_save_change = report_saving(asyncio.get_running_loop())
    problem = None
    try:
        code = await _converse(
            conversation,
            console,
            one_prompt=one_prompt,
            auto_yes=auto_yes,
            report=report,
            catalog=catalog,
            models=models,
        )
    finally:
        problem = conversation.close()
        if problem is not None:
            Console(stderr=True, highlight=False, soft_wrap=True).print(Text(problem, style="bold red"), soft_wrap=True)
    if problem is None:
        return code
    if report is not None:
        report.save_error = report.save_error or problem
    return int(ExitCode.FAILURE)


async def _converse(
    conversation: Conversation,
    console: Console,
    *,
    one_prompt: str | None,
    auto_yes: bool,
    report: OneShotReport | None,
    catalog: ServerHub | None = None,
    models: ModelSwitcher | None = None,
) -> int:
    """``run_plain``'s loop: the resumed conversation's open calls, then the prompts."""
    asking = one_prompt is None or sys.stdin.isatty()  # prompts to read, or a terminal to ask questions on
    reader = terminal_lines(keeps_prompts=one_prompt is None) if asking else None  # typed ahead: a prompt
    agent = conversation.agent
    sink = _console_sink(conversation, console, reader, report, auto_yes=auto_yes)
    if conversation.transcript.exchanges:
        _start_saving(conversation)
        await _resume(conversation, console, sink)
    prompts = [one_prompt] if one_prompt is not None else None
    called: list[Attachment] = []  # the user's own /call results, for the next message
    while True:
        if prompts == []:
            return 0
        routed = await _next_line(conversation, console, reader, prompts)
        if routed.route is Route.LEAVE:
            return 0
        if routed.route is Route.COMPACT:
            await _compact(conversation, console, sink)
            continue
        if routed.route is Route.RETRY:
            if await _retry(conversation, console, sink) and report is not None:
                return _one_shot_exit(report, conversation)
            continue
        if routed.route is Route.CALL:
            called += await _call_yourself(catalog, console, routed.text, one_shot=one_prompt is not None)
            continue
        if routed.route is Route.MODEL:
            await model_command(models, console, routed.text)
            continue
        turn = await _expand_command(catalog, console, reader, routed, one_shot=one_prompt is not None)
        if turn is None:
            continue
        prompt, attachments = turn
        attachments, called = [*called, *attachments], []
        if not conversation.saving:
            _start_saving(conversation, prompt)
        await agent.run_turn(prompt, sink, attachments)
        if report is not None:
            return _one_shot_exit(report, conversation)
        await conversation.write_summaries(sink)  # of the exchange that leaves the window at the next prompt


async def _next_line(
    conversation: Conversation, console: Console, reader: LineReader | None, prompts: list[str] | None
) -> Routed:
    """The next line, routed: the next of ``prompts`` (``-p``), else one read from the terminal."""
    if prompts is not None:
        return await route_line(prompts.pop(0), conversation.agent.redactor, typed=False)
    assert reader is not None
    return await _read_prompt(conversation, console, reader)


def _start_saving(conversation: Conversation, first_prompt: str = "") -> None:
    """Save the conversation from now on (said on stderr when another mcp-chat-tui has its file)."""
    problem = conversation.start_saving(first_prompt)
    if problem is not None:
        Console(stderr=True, highlight=False, soft_wrap=True).print(Text(problem, style="bold red"), soft_wrap=True)


def _console_sink(
    conversation: Conversation,
    console: Console,
    reader: LineReader | None,
    report: OneShotReport | None,
    *,
    auto_yes: bool,
) -> Callable[[AgentEvent], None]:
    """Where the agent's events go: the transcript first, then the console (through the ``-p``
    report); the servers' requests are answered at the console too."""
    printer = PlainConsole(console, reader, auto_yes=auto_yes, one_shot=report is not None)
    shown: Callable[[AgentEvent], None] = report.watch(printer) if report is not None else printer
    sink = tee(conversation.record, shown)
    install_console_requests(conversation.agent, console, reader, sink, auto_yes=auto_yes)
    return sink


async def _resume(conversation: Conversation, console: Console, sink: Callable[[AgentEvent], None]) -> None:
    """Show the resumed conversation, give it to the model, and continue its calls that were left open."""
    print_loaded(console, conversation.transcript)
    # Results cut now are said in the sink (✂); the file's own cuts are in the lines above.
    if conversation.give_to_agent(sink):  # calls left open, or results the model did not answer yet
        await conversation.continue_open_turn(sink)
    await conversation.write_summaries(sink)  # the ones the file lacks, for the exchanges outside the window


async def _compact(conversation: Conversation, console: Console, sink: Callable[[AgentEvent], None]) -> None:
    """``/compact``: every exchange but the last gets its summary now and leaves the window."""
    if not conversation.can_compact:
        console.print(literal(NOTHING_TO_COMPACT, "yellow"))
        return
    await conversation.write_summaries(sink, compact=True)
    console.print(literal(summary_line(conversation.agent.summaries_in_use), "dim"))


async def _retry(conversation: Conversation, console: Console, sink: Callable[[AgentEvent], None]) -> bool:
    """``/retry``: the last reply is discarded (its calls are not undone) and the model asked again;
    False when it cannot be now (said why)."""
    problem = conversation.retry_problem()
    if problem is not None:
        console.print(literal(problem, "yellow"))
        return False
    console.print(literal(RETRY_LINE, "dim"))
    await conversation.retry(sink)
    return True


async def _read_prompt(conversation: Conversation, console: Console, reader: LineReader) -> Routed:
    """The next line typed at ``prompt ->``, routed (empty lines are skipped, roots commands answered
    here); ``Route.LEAVE`` at the end of input or an exit word. A line typed before ``prompt ->`` was
    shown (passed over by a question) is shown after it: the terminal showed it where it was typed."""
    agent = conversation.agent
    roots_command = getattr(agent.tools, "roots_command", None)
    while True:
        console.print(PROMPT, end="", style="bold", highlight=False)
        shown_at = time.monotonic()
        typed = await reader.read_typed()
        line = typed.text
        if line is None:
            console.print()
            return Routed(Route.LEAVE, "")
        if reader.guarded and typed.at < shown_at:
            console.print(literal(line), highlight=False, soft_wrap=True)
        if isinstance(line, NotUtf8Line):
            console.print(literal(f"not sent: {line.problem}", "yellow"), soft_wrap=True)
            continue
        routed = await route_line(line, agent.redactor, roots_command)
        if routed.route is Route.ROOTS:
            console.print(literal(routed.said, "dim"), soft_wrap=True)
        elif routed.route is not Route.NOTHING:
            return routed


async def _expand_command(
    catalog: ServerHub | None, console: Console, reader: LineReader | None, routed: Routed, *, one_shot: bool
) -> tuple[str, list[Attachment]] | None:
    """The turn to run for ``routed``: a ``/command`` made into a server prompt's turn, any other text
    as it is with the files it names with ``@PATH``; None when the command failed or a file cannot be
    attached (said here; with ``-p`` it is raised)."""
    if catalog is None or routed.route is not Route.COMMAND:
        files = await _files_named(catalog, console, routed.text, one_shot=one_shot)
        return None if files is None else (routed.text, files)
    try:
        return await command_turn(catalog, console, None if one_shot else reader, routed.text)
    except UserFacingError as exc:
        if one_shot:
            raise
        console.print(literal(str(exc), "red"))
        return None


async def _files_named(
    catalog: ServerHub | None, console: Console, prompt: str, *, one_shot: bool
) -> list[Attachment] | None:
    """The files ``prompt`` names with ``@PATH``, attached (listed under it); None when one cannot be
    (said why: the prompt is not sent; with ``-p`` it is raised)."""
    roots = catalog.roots.shared if catalog is not None else []
    files, problems = await asyncio.to_thread(files_named, prompt, Path.cwd(), roots)
    if problems:
        said = "not sent: " + "; ".join(problems)
        if one_shot:
            raise FileNotAttached(said)
        console.print(literal(said, "red"), soft_wrap=True)
        return None
    print_attachments(console, files)
    return files


async def _call_yourself(catalog: ServerHub | None, console: Console, text: str, *, one_shot: bool) -> list[Attachment]:
    """``/call server:tool key=value``: run it (no approval: the user is the one calling), print the
    result; it goes with the next message (none with ``-p``, which has no next message)."""
    if catalog is None:
        console.print(literal("no servers: nothing to call", "red"))
        return []
    try:
        spec, arguments, result = await call_yourself(catalog, text)
    except UserFacingError as exc:
        if one_shot:
            raise
        console.print(literal(str(exc), "red"))
        return []
    attachment = call_attachment(spec, arguments, result.for_model(), result.ok)
    console.print(Panel(literal(attachment.text), title=literal(attachment.label()), title_align="left", expand=False))
    if not one_shot:
        console.print(literal("(goes with your next message)", "dim"))
    return [attachment]


def _one_shot_exit(report: OneShotReport, conversation: Conversation) -> int:
    """After the one turn of ``-p``: where the transcript went, whether it was saved, and the exit code."""
    report.transcript = str(conversation.path) if conversation.saving else None
    problem = conversation.flush()
    if problem is not None:
        report.save_error = problem
    return int(report.exit_code)


def summary_line(exchanges: int) -> str:
    """How many exchanges the model was sent as their one-line summaries."""
    return f"📝 {counted(exchanges, 'exchange')} sent as {'its' if exchanges == 1 else 'their'} summary"
