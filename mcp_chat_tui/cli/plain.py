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
from rich.text import Text

from mcp_chat_tui.agent import Agent
from mcp_chat_tui.agent.budget import cut_label
from mcp_chat_tui.agent.client_requests import describe_answered
from mcp_chat_tui.agent.events import AgentEvent
from mcp_chat_tui.agent.summaries import is_compact_command
from mcp_chat_tui.cli.client_requests import install_console_requests
from mcp_chat_tui.cli.input_text import NotUtf8Line
from mcp_chat_tui.cli.plain_console import PlainConsole, literal
from mcp_chat_tui.cli.prompt_commands import command_turn, print_attachments
from mcp_chat_tui.cli.report import ExitCode, OneShotReport
from mcp_chat_tui.cli.typed_lines import LineReader, terminal_lines
from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.text import pretty_json
from mcp_chat_tui.engine.cache_file import keep_cache_beside
from mcp_chat_tui.servers.commands import is_command
from mcp_chat_tui.servers.hub import ServerHub
from mcp_chat_tui.transcript import (
    AutoSaver,
    Exchange,
    Transcript,
    TranscriptRecorder,
    new_transcript_path,
    save_problem,
    to_openai_messages,
)
from mcp_chat_tui.transcript.store import RETRY_INTERVAL
from mcp_chat_tui.ui.recording import RecordingSink, pending_calls, tee

PROMPT = "prompt -> "
EXIT_WORDS = {"bye", "quit"}


def print_loaded(console: Console, transcript: Transcript) -> None:
    """A resumed conversation, compactly: prompts, answers, one line per call, how a reply ended early."""
    goes_on = transcript.exchanges[-1] if transcript.turn_goes_on() else None  # its reply continues now
    for exchange in transcript.exchanges:
        console.print(literal(PROMPT + exchange.user, "bold"))
        print_attachments(console, exchange.attachments)
        for step in exchange.steps:
            if step.text:
                console.print(literal(step.text))
            for proposal in step.proposals:
                status = (
                    proposal.result.status
                    if proposal.result
                    else (
                        "interrupted" if proposal.interrupted else "waiting" if proposal.awaiting_choice else "approved"
                    )
                )
                progress = proposal.result.progress if proposal.result else None
                if progress is not None:
                    status += f" (last progress {progress.describe()})"
                cut = proposal.result.cut if proposal.result else None
                if cut is not None:
                    status += f" (✂ {cut_label(cut.kept_tokens, cut.total_tokens)})"
                console.print(literal(f"  ⚙ {proposal.name} {pretty_json(proposal.arguments)} → {status}", "dim"))
            for request in step.requests:
                console.print(literal(f"  {describe_answered(request)}", "dim"))
        if exchange is not goes_on and (note := end_note(exchange)):
            console.print(literal(note, "yellow"))
    console.print(literal(f"— resumed: {len(transcript.exchanges)} exchange(s) —", "dim"))


def end_note(exchange: Exchange) -> str:
    """How a loaded reply ended when it did not simply answer ("" when it did)."""
    if exchange.cut_short:
        return "[cut short: the app ended before this reply was finished]"
    if exchange.end == "error":
        return f"[error: {exchange.error}]" if exchange.error else "[error]"
    return "[stopped]" if exchange.end == "stopped" else ""


def reporting_saver(path: Path, loop: asyncio.AbstractEventLoop) -> AutoSaver:
    """An ``AutoSaver`` for ``path`` that says on stderr, in one line, when saving fails and when it
    works again (it retries on its own)."""
    stderr = Console(stderr=True, highlight=False, soft_wrap=True)

    def changed(error: Exception | None) -> None:
        if error is not None:
            line = Text(f"{save_problem(path, error)}; retrying every {RETRY_INTERVAL:.0f} s", style="bold red")
        else:
            line = Text(f"saved {path} again", style="green")
        try:
            loop.call_soon_threadsafe(partial(stderr.print, line, soft_wrap=True))
        except RuntimeError:  # the loop is closed: say it from here
            stderr.print(line, soft_wrap=True)

    return AutoSaver(path, on_change=changed)


def unsaved(recorder: TranscriptRecorder | None) -> str | None:
    """After ``recorder.close()``: why events of the conversation were not saved (None: all saved)."""
    problem = recorder.saver.unsaved if recorder is not None and recorder.saver is not None else None
    return None if problem is None else f"{problem}: the last changes of this conversation are not saved"


async def run_plain(
    agent: Agent,
    console: Console,
    *,
    one_prompt: str | None = None,
    auto_yes: bool = False,
    recorder: TranscriptRecorder | None = None,
    transcript_file: Path | None = None,
    model_label: str = "model",
    report: OneShotReport | None = None,
    save: bool = True,
    catalog: ServerHub | None = None,
) -> int:
    """The ``prompt ->`` loop (or one turn with ``-p``), saving the conversation as it goes (unless not
    ``save``); returns the exit code. With ``-p`` the ``report`` holds the answer back for stdout and
    decides the exit code (cli/report.py). Events that could not be saved make it 1, said on stderr."""
    if one_prompt is not None and report is None:
        report = OneShotReport(one_prompt, model_label)
    try:
        code = await _converse(
            agent,
            console,
            one_prompt=one_prompt,
            auto_yes=auto_yes,
            recorder=recorder,
            transcript_file=transcript_file,
            model_label=model_label,
            report=report,
            save=save,
            catalog=catalog,
        )
    finally:
        problem = unsaved(recorder)  # the recorder is closed by now
        if problem is not None:
            Console(stderr=True, highlight=False, soft_wrap=True).print(Text(problem, style="bold red"), soft_wrap=True)
    if problem is None:
        return code
    if report is not None:
        report.save_error = report.save_error or problem
    return int(ExitCode.FAILURE)


async def _converse(
    agent: Agent,
    console: Console,
    *,
    one_prompt: str | None,
    auto_yes: bool,
    recorder: TranscriptRecorder | None,
    transcript_file: Path | None,
    model_label: str,
    report: OneShotReport | None,
    save: bool,
    catalog: ServerHub | None = None,
) -> int:
    """``run_plain``'s loop: the resumed conversation's open calls, then the prompts; the recorder is
    closed on the way out."""
    asking = one_prompt is None or sys.stdin.isatty()  # prompts to read, or a terminal to ask questions on
    reader = terminal_lines(keeps_prompts=one_prompt is None) if asking else None  # typed ahead: a prompt
    sink = _console_sink(agent, console, reader, recorder, report, model_label=model_label, auto_yes=auto_yes)
    try:
        if recorder is not None and recorder.transcript.exchanges:
            if save:
                _save_to(agent, recorder, transcript_file or new_transcript_path(recorder.transcript.exchanges[0].user))
            else:
                keep_cache_beside(agent.engine, transcript_file, save=False)  # a resumed file's cache is still read
            await _resume(agent, console, recorder, sink)
        prompts = [one_prompt] if one_prompt is not None else None
        while True:
            if prompts is not None:
                prompt = prompts.pop(0) if prompts else None
            else:
                assert reader is not None
                prompt = await _read_prompt(agent, console, reader)
            if prompt is None:
                return 0
            if is_compact_command(prompt):
                await _compact(agent, console, sink)
                continue
            turn = await _expand_command(catalog, console, reader, prompt, one_shot=one_prompt is not None)
            if turn is None:
                continue
            prompt, attachments = turn
            if recorder is not None and recorder.saver is None and save:
                _save_to(agent, recorder, transcript_file or new_transcript_path(prompt))
            await agent.run_turn(prompt, sink, attachments)
            if report is not None:
                return _one_shot_exit(report, recorder)
            await agent.write_summaries(sink)  # of the exchange that leaves the window at the next prompt
    finally:
        if recorder is not None:
            recorder.close()


def _save_to(agent: Agent, recorder: TranscriptRecorder, path: Path) -> None:
    """Save the conversation to ``path`` from now on, and the model's KV cache beside it."""
    recorder.saver = reporting_saver(path, asyncio.get_running_loop())
    keep_cache_beside(agent.engine, path)


def _console_sink(
    agent: Agent,
    console: Console,
    reader: LineReader | None,
    recorder: TranscriptRecorder | None,
    report: OneShotReport | None,
    *,
    model_label: str,
    auto_yes: bool,
) -> Callable[[AgentEvent], None]:
    """Where the agent's events go: the console (through the ``-p`` report) and the transcript; the
    servers' requests are answered at the console too."""
    printer = PlainConsole(console, reader, auto_yes=auto_yes, one_shot=report is not None)
    sink: Callable[[AgentEvent], None] = report.watch(printer) if report is not None else printer
    if recorder is not None:
        recording = RecordingSink(recorder, model_label, agent.engine)
        recording.guard_starts(agent)  # a call's start is on disk before it goes out
        sink = tee(recording, sink)
    install_console_requests(agent, console, reader, sink, auto_yes=auto_yes)
    return sink


async def _resume(
    agent: Agent, console: Console, recorder: TranscriptRecorder, sink: Callable[[AgentEvent], None]
) -> None:
    """Show the resumed conversation, give it to the model, and continue its calls that were left open."""
    print_loaded(console, recorder.transcript)
    transcript = recorder.transcript
    agent.load_messages(to_openai_messages(transcript), transcript.summaries(), transcript.cuts_for_model())
    agent.fit_loaded_results(sink)  # cut now are said here (✂); the file's own cuts are in the lines above
    if transcript.turn_goes_on():  # calls left open, or results the model did not answer yet
        pending = pending_calls(transcript.pending_proposals(), agent.tools.find_tool)
        recorder.reply_goes_on()
        await agent.continue_turn(pending, sink, transcript.pending_feedback())
    await agent.write_summaries(sink)  # the ones the file lacks, for the exchanges outside the window


async def _compact(agent: Agent, console: Console, sink: Callable[[AgentEvent], None]) -> None:
    """``/compact``: every exchange but the last gets its summary now and leaves the window."""
    if len(agent.turns) < 2:
        console.print(literal("nothing to compact: /compact summarises every exchange but the last", "yellow"))
        return
    await agent.write_summaries(sink, compact=True)
    console.print(literal(f"📝 {agent.summaries_in_use} exchange(s) sent as their summary", "dim"))


async def _read_prompt(agent: Agent, console: Console, reader: LineReader) -> str | None:
    """The next prompt typed at ``prompt ->`` (empty lines are skipped, roots commands answered here);
    None at the end of input or an exit word. A line typed before ``prompt ->`` was shown (passed over
    by a question) is shown after it: the terminal showed it where it was typed."""
    while True:
        console.print(PROMPT, end="", style="bold", highlight=False)
        shown_at = time.monotonic()
        typed = await reader.read_typed()
        line = typed.text
        if line is None:
            console.print()
            return None
        if reader.guarded and typed.at < shown_at:
            console.print(literal(line), highlight=False, soft_wrap=True)
        if isinstance(line, NotUtf8Line):
            console.print(literal(f"not sent: {line.problem}", "yellow"), soft_wrap=True)
            continue
        prompt = agent.redactor.text(line.strip())
        if not prompt:
            continue
        if prompt.lower() in EXIT_WORDS:
            return None
        roots_command = getattr(agent.tools, "roots_command", None)
        said = await roots_command(prompt) if roots_command is not None else None
        if said is None:
            return prompt
        console.print(literal(said, "dim"), soft_wrap=True)


async def _expand_command(
    catalog: ServerHub | None, console: Console, reader: LineReader | None, prompt: str, *, one_shot: bool
) -> tuple[str, list[Attachment]] | None:
    """The turn to run for ``prompt``: a ``/command`` made into a server prompt's turn, any other text
    as it is; None when the command failed (said here; with ``-p`` it is raised)."""
    if catalog is None or not is_command(prompt):
        return prompt, []
    try:
        return await command_turn(catalog, console, None if one_shot else reader, prompt)
    except UserFacingError as exc:
        if one_shot:
            raise
        console.print(literal(str(exc), "red"))
        return None


def _one_shot_exit(report: OneShotReport, recorder: TranscriptRecorder | None) -> int:
    """After the one turn of ``-p``: where the transcript went, whether it was saved, and the exit code."""
    saver = recorder.saver if recorder is not None else None
    report.transcript = str(saver.path) if saver else None
    if saver is not None and not saver.flush():
        report.save_error = saver.unsaved
    return int(report.exit_code)
