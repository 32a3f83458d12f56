"""The plain console interface (document 002 as written): a ``prompt ->`` line, streamed answers, every call shown.

Everything a server or the model sends is printed as literal text (``rich.text.Text``),
so markup and terminal escape sequences in it cannot style or move the screen.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from mcp_chat_tui.agent import Agent
from mcp_chat_tui.agent.client_requests import describe_answered
from mcp_chat_tui.agent.events import (
    AgentEvent,
    ApprovalChoice,
    ApprovalDecision,
    ApprovalNeeded,
    AssistantText,
    AssistantThinking,
    CallDecided,
    CallFinished,
    CallProgress,
    CallStarted,
    CallStatus,
    GenerationStats,
    MalformedCall,
    Notice,
    ServerRequestAnswered,
    TurnFinished,
)
from mcp_chat_tui.cli.client_requests import install_console_requests
from mcp_chat_tui.cli.prompt_commands import command_turn, print_attachments
from mcp_chat_tui.cli.report import ExitCode, OneShotReport
from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.text import pretty_json, visible_controls
from mcp_chat_tui.engine.events import Stats
from mcp_chat_tui.servers.commands import is_command
from mcp_chat_tui.servers.hub import ServerHub
from mcp_chat_tui.servers.notifications import LogEntry
from mcp_chat_tui.transcript import (
    AutoSaver,
    Transcript,
    TranscriptRecorder,
    new_transcript_path,
    save_problem,
    to_openai_messages,
)
from mcp_chat_tui.transcript.store import RETRY_INTERVAL
from mcp_chat_tui.ui.media_info import media_line
from mcp_chat_tui.ui.recording import RecordingSink, pending_calls, tee

PROMPT = "prompt -> "
EXIT_WORDS = {"bye", "quit"}
RESULT_LINES_SHOWN = 20
APPROVAL_KEYS = {
    "y": ApprovalDecision(ApprovalChoice.ALLOW_ONCE),
    "a": ApprovalDecision(ApprovalChoice.ALLOW_PENDING),
    "t": ApprovalDecision(ApprovalChoice.ALWAYS_TOOL),
    "T": ApprovalDecision(ApprovalChoice.ALWAYS_TOOL, save=True),
    "n": ApprovalDecision(ApprovalChoice.DENY),
    "s": ApprovalDecision(ApprovalChoice.DENY_ALL),
}
STATUS_STYLE = {
    CallStatus.DONE: ("✓", "green"),
    CallStatus.ERROR: ("✗", "red"),
    CallStatus.TIMEOUT: ("⏱", "red"),
    CallStatus.DENIED: ("⊘", "yellow"),
    CallStatus.MALFORMED: ("?", "red"),
    CallStatus.CANCELLED: ("■", "yellow"),
    CallStatus.INTERRUPTED: ("↯", "red"),
}


class LineReader:
    """Reads stdin lines on a daemon thread, so a pending read never keeps the app from exiting."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        threading.Thread(target=self._pump, name="stdin", daemon=True).start()

    def _pump(self) -> None:
        for line in sys.stdin:
            self._loop.call_soon_threadsafe(self._lines.put_nowait, line.rstrip("\n"))
        self._loop.call_soon_threadsafe(self._lines.put_nowait, None)

    async def read(self) -> str | None:
        """The next line, or None at end of input."""
        return await self._lines.get()


def literal(value: object, style: str = "") -> Text:
    """Untrusted text shown as itself: no markup, control characters written out as escapes."""
    return Text(visible_controls(str(value)), style=style)


def pretty_arguments(arguments: dict) -> str:
    return visible_controls(pretty_json(arguments))


class PlainConsole:
    """Prints agent events and answers approvals from the keyboard (or denies them when it cannot ask)."""

    def __init__(self, console: Console, reader: LineReader | None, *, auto_yes: bool = False) -> None:
        self.console = console
        self.reader = reader
        self.auto_yes = auto_yes
        self._in_text = False
        self._in_thinking = False
        self._pending: list[asyncio.Task[None]] = []
        self._last_stats: Stats | None = None
        self._allowed_by: dict[str, str] = {}  # call id -> who or which rule allowed it

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, AssistantText):
            self._end_thinking()
            self._in_text = True
            self.console.print(literal(event.text), end="", highlight=False)
        elif isinstance(event, AssistantThinking):
            if not self._in_thinking:
                self._break_line()
                self.console.print(Text("thinking: ", style="dim italic"), end="")
                self._in_thinking = True
            self.console.print(literal(event.text, "dim italic"), end="", highlight=False)
        elif isinstance(event, CallDecided):
            self._allowed_by[event.call.id] = event.allowed_by
        elif isinstance(event, CallStarted):
            self._break_line()
            call = event.call
            title = Text.assemble(
                (f"{event.started_at:%H:%M:%S} ", "dim"),
                ("→ ", "cyan"),
                (visible_controls(call.tool), "bold cyan"),
                (f"  [{visible_controls(call.server)}]", "dim"),
            )
            allowed_by = self._allowed_by.pop(call.id, "")
            if allowed_by:
                title.append(f"  allowed by {visible_controls(allowed_by)}", "dim")
            self.console.print(title)
            self.console.print(Text(pretty_arguments(call.arguments), style="dim"), highlight=False)
        elif isinstance(event, CallProgress):
            self._break_line()
            self.console.print(
                literal(f"  ⋯ {event.call.tool} {event.progress.describe()}", "cyan"), highlight=False, soft_wrap=True
            )
        elif isinstance(event, CallFinished):
            self._break_line()
            self.console.print(self._finished_panel(event))
        elif isinstance(event, MalformedCall):
            self._break_line()
            body = Group(literal(f"malformed tool call ({event.reason})", "bold red"), literal(event.raw))
            self.console.print(Panel(body, border_style="red", expand=False))
        elif isinstance(event, ApprovalNeeded):
            self._break_line()
            self._pending.append(asyncio.ensure_future(self._approve(event)))
        elif isinstance(event, Notice):
            self._break_line()
            self.console.print(literal(event.text, "yellow"))
        elif isinstance(event, ServerRequestAnswered):
            self._break_line()
            self.console.print(literal(describe_answered(event), "dim"), soft_wrap=True)
        elif isinstance(event, GenerationStats):
            self._last_stats = event.stats
        elif isinstance(event, TurnFinished):
            self._break_line()
            if event.error:
                self.console.print(literal(f"error: {event.error}", "bold red"))
            elif event.end.value == "stopped":
                self.console.print(Text("[stopped]", style="yellow"))
            stats, self._last_stats = self._last_stats, None
            if stats is not None:
                self.console.print(
                    Text(
                        f"{stats.generated_tokens} tokens, {stats.tokens_per_second:.1f} tok/s, "
                        f"prefilled {stats.prefilled_tokens} of {stats.prompt_tokens} prompt tokens",
                        style="dim",
                    )
                )

    def _finished_panel(self, event: CallFinished) -> Panel:
        glyph, colour = STATUS_STYLE[event.status]
        text = event.result.for_model() if event.result is not None else event.content_for_model
        lines = text.splitlines() or [""]
        shown = "\n".join(lines[:RESULT_LINES_SHOWN])
        if len(lines) > RESULT_LINES_SHOWN:
            shown += f"\n… {len(lines) - RESULT_LINES_SHOWN} more lines"
        media = [part for part in event.result.parts if part.is_media] if event.result is not None else []
        if media:  # each image and audio in a line of its own (the full-screen app draws images)
            shown += "\n" + "\n".join(media_line(part) for part in media)
        title = Text.assemble(
            (f"{glyph} ", colour), (visible_controls(event.call.tool), "bold"), (f" {event.status.value}", colour)
        )
        took = f"{event.duration:.2f} s" if event.duration is not None else None
        return Panel(
            literal(shown),
            title=title,
            title_align="left",
            subtitle=took,
            subtitle_align="right",
            border_style=colour,
            expand=False,
        )

    async def _approve(self, event: ApprovalNeeded) -> None:
        call = event.call
        spec = call.spec
        header = Text.assemble(
            ("Run ", "bold"),
            (visible_controls(call.tool), "bold cyan"),
            (" on ", "bold"),
            (visible_controls(call.server), "bold"),
            (f"? ({event.waiting} waiting)" if event.waiting > 1 else "?", "bold"),
        )
        parts: list = [header]
        if event.recorded is not None:
            parts.append(literal(event.recorded.describe(), "bold yellow"))
        if event.why:
            parts.append(literal(f"asking: {event.why}", "dim"))
        if spec is not None and spec.description:
            parts.append(literal(spec.description))
        if spec is not None and spec.destructive:
            parts.append(Text("the server marks this tool destructive", style="bold red"))
        parts.append(Text(pretty_arguments(call.arguments)))
        self.console.print(Panel(Group(*parts), border_style="yellow", expand=False))
        interrupted = event.recorded is not None and event.recorded.interrupted
        if interrupted and (self.auto_yes or self.reader is None or not sys.stdin.isatty()):
            why = "--yes never runs an interrupted call again" if self.auto_yes else "no terminal to ask"
            self.console.print(Text(f"not run again ({why}): left as interrupted", style="yellow"))
            event.decision.set_result(ApprovalDecision(ApprovalChoice.DENY))
            return
        if self.auto_yes:
            event.decision.set_result(ApprovalDecision(ApprovalChoice.ALLOW_ONCE))
            return
        if self.reader is None or not sys.stdin.isatty():
            self.console.print(Text("no terminal to ask: call denied (use --yes to allow calls)", style="yellow"))
            event.decision.set_result(ApprovalDecision(ApprovalChoice.DENY))
            return
        while not event.decision.done():
            self.console.print(
                "[bold]y[/] once · [bold]a[/] all waiting · [bold]t[/] always this tool · "
                "[bold]T[/] always and save · [bold]n[/] no · [bold]s[/] deny all and stop: ",
                end="",
            )
            answer = await self.reader.read()
            if answer is None:
                event.decision.set_result(ApprovalDecision(ApprovalChoice.DENY_ALL))
                return
            decision = APPROVAL_KEYS.get(answer.strip()) or APPROVAL_KEYS.get(answer.strip().lower())
            if decision is not None and not event.decision.done():
                event.decision.set_result(decision)

    def _end_thinking(self) -> None:
        if self._in_thinking:
            self.console.print()
            self._in_thinking = False

    def _break_line(self) -> None:
        self._end_thinking()
        if self._in_text:
            self.console.print()
            self._in_text = False


def log_printer(stderr: Console) -> Callable[[str, LogEntry], None]:
    """A hub log listener that prints each warning (or worse) on ``stderr``, after its server's name."""

    def show(server: str, entry: LogEntry) -> None:
        if entry.at_least_warning:
            logger = f" [{entry.logger}]" if entry.logger else ""
            stderr.print(literal(f"{server}: {entry.level}{logger}: {entry.text}", "yellow"), soft_wrap=True)

    return show


def print_loaded(console: Console, transcript: Transcript) -> None:
    """A resumed conversation, compactly: prompts, answers, one line per call."""
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
                console.print(literal(f"  ⚙ {proposal.name} {pretty_json(proposal.arguments)} → {status}", "dim"))
            for request in step.requests:
                console.print(literal(f"  {describe_answered(request)}", "dim"))
    console.print(literal(f"— resumed: {len(transcript.exchanges)} exchange(s) —", "dim"))


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
    loop = asyncio.get_running_loop()
    reader = LineReader(loop) if one_prompt is None or sys.stdin.isatty() else None
    printer = PlainConsole(console, reader, auto_yes=auto_yes)
    sink: Callable[[AgentEvent], None] = report.watch(printer) if report is not None else printer
    if recorder is not None:
        sink = tee(RecordingSink(recorder, model_label), sink)
        agent.checkpoint = recorder.persisted  # a call's start is on disk before it goes out
    install_console_requests(agent, console, reader, sink, auto_yes=auto_yes)
    try:
        if recorder is not None and recorder.transcript.exchanges:
            if save:
                recorder.saver = reporting_saver(
                    transcript_file or new_transcript_path(recorder.transcript.exchanges[0].user), loop
                )
            print_loaded(console, recorder.transcript)
            agent.load_messages(to_openai_messages(recorder.transcript))
            pending = pending_calls(recorder.transcript.pending_proposals(), agent.tools.find_tool)
            if pending:
                await agent.continue_turn(pending, sink)
        prompts = [one_prompt] if one_prompt is not None else None
        while True:
            if prompts is not None:
                if not prompts:
                    return 0
                prompt = prompts.pop(0)
            else:
                console.print(PROMPT, end="", style="bold", highlight=False)
                assert reader is not None
                line = await reader.read()
                if line is None:
                    console.print()
                    return 0
                prompt = agent.redactor.text(line.strip())
                if not prompt:
                    continue
                if prompt.lower() in EXIT_WORDS:
                    return 0
                roots_command = getattr(agent.tools, "roots_command", None)
                said = await roots_command(prompt) if roots_command is not None else None
                if said is not None:
                    console.print(literal(said, "dim"), soft_wrap=True)
                    continue
            attachments: list[Attachment] = []
            if catalog is not None and is_command(prompt):
                try:
                    prompt, attachments = await command_turn(
                        catalog, console, reader if one_prompt is None else None, prompt
                    )
                except UserFacingError as exc:
                    if one_prompt is not None:
                        raise
                    console.print(literal(str(exc), "red"))
                    continue
            if recorder is not None and recorder.saver is None and save:
                recorder.saver = reporting_saver(transcript_file or new_transcript_path(prompt), loop)
            await agent.run_turn(prompt, sink, attachments)
            if report is not None:
                report.transcript = str(recorder.saver.path) if recorder is not None and recorder.saver else None
                if recorder is not None and recorder.saver is not None and not recorder.saver.flush():
                    report.save_error = recorder.saver.unsaved
                return int(report.exit_code)
    finally:
        if recorder is not None:
            recorder.close()
