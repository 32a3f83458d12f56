"""The plain console's printer: each agent event as literal text, and approvals asked at the keyboard.

Everything a server or the model sends is printed as literal text (``rich.text.Text``),
so markup and terminal escape sequences in it cannot style or move the screen.
"""

from __future__ import annotations

import asyncio
import json
import sys

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from mcp_chat_tui.agent.asking_requests import describe_answered
from mcp_chat_tui.agent.budget import cut_label, near_limit, usage_label
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
    CallRunUnsaved,
    CallStarted,
    CallTask,
    GenerationStats,
    MalformedCall,
    Notice,
    ResultCut,
    ServerRequestAnswered,
    StartNotSaved,
    SummariesEnded,
    SummaryFailed,
    SummaryStarted,
    SummaryWritten,
    TurnFinished,
    UnsavedChoice,
)
from mcp_chat_tui.agent.figures import TurnFigures
from mcp_chat_tui.agent.turn import not_sent_line, repeat_reason, run_unsaved_line
from mcp_chat_tui.cli.typed_lines import LineReader, Question
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.media_info import media_line
from mcp_chat_tui.core.text import pretty_json, visible_controls
from mcp_chat_tui.core.tools import ToolSpec

RESULT_LINES_SHOWN = 20
APPROVAL_KEYS = {
    "y": ApprovalDecision(ApprovalChoice.ALLOW_ONCE),
    "a": ApprovalDecision(ApprovalChoice.ALLOW_PENDING),
    "t": ApprovalDecision(ApprovalChoice.ALWAYS_TOOL),
    "T": ApprovalDecision(ApprovalChoice.ALWAYS_TOOL, save=True),
    "n": ApprovalDecision(ApprovalChoice.DENY),
    "s": ApprovalDecision(ApprovalChoice.DENY_ALL),
}


UNSAVED_KEYS = {"r": UnsavedChoice.RETRY, "u": UnsavedChoice.RUN_UNSAVED, "n": UnsavedChoice.DONT_RUN}
APPROVAL_QUESTION = (
    "[bold]y[/] once · [bold]a[/] all waiting · [bold]t[/] always this tool · "
    "[bold]T[/] always and save · [bold]n[/] no · [bold]e[/] edit the arguments · [bold]s[/] deny all and stop: "
)
EDIT_QUESTION = "the arguments as one line of JSON (Enter alone: back to the question): "
EDIT_KEY = "e"
UNSAVED_QUESTION = "[bold]r[/] try saving again · [bold]u[/] run it unsaved · [bold]n[/] don't run: "


def approval_key(line: str) -> ApprovalDecision | None:
    """What a line answers the approval question (``T`` saves; other letters in either case)."""
    return APPROVAL_KEYS.get(line.strip()) or APPROVAL_KEYS.get(line.strip().lower())


def _approval_answer(line: str) -> bool:
    return approval_key(line) is not None or line.strip().lower() == EDIT_KEY


def literal(value: object, style: str = "") -> Text:
    """Untrusted text shown as itself: no markup, control characters written out as escapes."""
    return Text(visible_controls(str(value)), style=style)


def pretty_arguments(arguments: dict) -> str:
    return visible_controls(pretty_json(arguments))


class PlainConsole:
    """Prints agent events and answers approvals from the keyboard (or denies them when it cannot ask)."""

    def __init__(
        self, console: Console, reader: LineReader | None, *, auto_yes: bool = False, one_shot: bool = False
    ) -> None:
        """``one_shot`` (``-p``): a call whose start cannot be saved is never run, nobody is asked."""
        self.console = console
        self.reader = reader
        self.auto_yes = auto_yes
        self.one_shot = one_shot
        self._in_text = False
        self._in_thinking = False
        self._pending: list[asyncio.Task[None]] = []
        self._last_stats: GenerationStats | None = None
        self._figures = TurnFigures()  # the turn's generations so far
        self._allowed_by: dict[str, str] = {}  # call id -> who or which rule allowed it

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, AssistantText):
            self._end_thinking()
            self._in_text = True
            self.console.print(literal(event.text), end="", highlight=False)
        elif isinstance(event, AssistantThinking):
            self._print_thinking(event)
        elif isinstance(event, CallDecided):
            self._allowed_by[event.call.id] = event.allowed_by
        elif isinstance(event, CallStarted):
            self._break_line()
            self._print_call_started(event)
        elif isinstance(event, (CallProgress, CallTask)):
            self._break_line()
            self._print_running(event)
        elif isinstance(event, CallFinished):
            self._break_line()
            self.console.print(self._finished_panel(event))
        elif isinstance(event, MalformedCall):
            self._break_line()
            body = Group(literal(f"malformed tool call ({event.reason})", "bold red"), literal(event.raw))
            self.console.print(Panel(body, border_style="red", expand=False))
        elif isinstance(event, (ApprovalNeeded, StartNotSaved)):
            self._break_line()
            question = self._approve(event) if isinstance(event, ApprovalNeeded) else self._ask_unsaved(event)
            self._pending.append(asyncio.ensure_future(question))
        elif isinstance(event, CallRunUnsaved):
            self.console.print(literal(run_unsaved_line(event), "bold yellow"), soft_wrap=True)
        elif isinstance(event, Notice):
            self._break_line()
            self.console.print(literal(event.text, "yellow"))
        elif isinstance(event, ServerRequestAnswered):
            self._break_line()
            self.console.print(literal(describe_answered(event), "dim"), soft_wrap=True)
        elif isinstance(event, GenerationStats):
            self._last_stats = event
            self._figures.add(event.stats)
        elif isinstance(event, ResultCut):
            self._break_line()
            self.console.print(
                literal(f"  ✂ {event.call.shown_tool}: {cut_label(event.kept_tokens, event.total_tokens)}", "yellow")
            )
        elif isinstance(event, TurnFinished):
            self._break_line()
            self._print_turn_finished(event)
        elif isinstance(event, (SummaryStarted, SummaryWritten, SummaryFailed, SummariesEnded)):
            self._break_line()
            self._print_summary(event)

    def _print_running(self, event: CallProgress | CallTask) -> None:
        """A running call's progress (``⋯``) or its task's status (``⧗``, with the task's id)."""
        if isinstance(event, CallProgress):
            line = f"  ⋯ {event.call.shown_tool} {event.progress.describe()}"
        else:
            line = f"  ⧗ {event.call.shown_tool} {event.task.describe()} [{event.task.task_id}]"
        self.console.print(literal(line, "cyan"), highlight=False, soft_wrap=True)

    def _print_summary(self, event: SummaryStarted | SummaryWritten | SummaryFailed | SummariesEnded) -> None:
        """Summarising as it goes: each summary written, a failure (the full text stays), a stop."""
        if isinstance(event, SummaryStarted):
            self.console.print(literal(f"📝 summarising exchange {event.exchange + 1}…", "dim"), soft_wrap=True)
        elif isinstance(event, SummaryWritten):
            self.console.print(literal(f"📝 exchange {event.exchange + 1}: {event.text}", "dim"), soft_wrap=True)
        elif isinstance(event, SummaryFailed):
            self.console.print(
                literal(
                    f"exchange {event.exchange + 1} was not summarised: {event.error}; its full text stays in the prompt",
                    "red",
                ),
                soft_wrap=True,
            )
        elif event.stopped:
            self.console.print(literal("summarising stopped: the exchanges not summarised stay in full", "yellow"))

    def _print_thinking(self, event: AssistantThinking) -> None:
        if not self._in_thinking:
            self._break_line()
            self.console.print(Text("thinking: ", style="dim italic"), end="")
            self._in_thinking = True
        self.console.print(literal(event.text, "dim italic"), end="", highlight=False)

    def _print_call_started(self, event: CallStarted) -> None:
        """The call's time, tool, server, who allowed it, and its arguments."""
        call = event.call
        title = Text.assemble(
            (f"{event.started_at:%H:%M:%S} ", "dim"),
            ("→ ", "cyan"),
            (visible_controls(call.shown_tool), "bold cyan"),
            (
                f"  [{visible_controls(call.server)}" + (f" › {visible_controls(call.tool)}]" if call.title else "]"),
                "dim",
            ),
        )
        allowed_by = self._allowed_by.pop(call.id, "")
        if allowed_by:
            title.append(f"  allowed by {visible_controls(allowed_by)}", "dim")
        self.console.print(title)
        self.console.print(Text(pretty_arguments(call.arguments), style="dim"), highlight=False)

    def _print_turn_finished(self, event: TurnFinished) -> None:
        """How the turn ended (an error, stopped, ended without an answer) and the figures of the whole
        turn (agent/figures.py), with the context the last reply took."""
        if event.error:
            self.console.print(literal(f"error: {event.error}", "bold red"))
        elif event.end.value == "stopped":
            self.console.print(Text("[stopped]", style="yellow"))
        elif event.note:
            self.console.print(literal(f"[{event.note}]", "bold yellow"))
        report, self._last_stats = self._last_stats, None
        figures, self._figures = self._figures, TurnFigures()
        if report is not None:
            line = Text(figures.line() + ", context ", style="dim")
            usage = usage_label(report.context_used, report.context_length)
            if near_limit(report.context_used, report.context_length):
                line.append(f"⚠ {usage}", style="bold yellow")
            else:
                line.append(usage, style="dim")
            self.console.print(line)

    def _finished_panel(self, event: CallFinished) -> Panel:
        glyph, colour = event.status.glyph, event.status.style
        text = event.result.for_model() if event.result is not None else event.content_for_model
        if event.repeat_of:  # what the model was given is the earlier call's result, shown above
            text = repeat_reason(event.repeat_of)
        lines = text.splitlines() or [""]
        shown = "\n".join(lines[:RESULT_LINES_SHOWN])
        if len(lines) > RESULT_LINES_SHOWN:
            shown += f"\n… {len(lines) - RESULT_LINES_SHOWN} more lines"
        media = [part for part in event.result.parts if part.is_media] if event.result is not None else []
        if media:  # each image and audio in a line of its own (the full-screen app draws images)
            shown += "\n" + "\n".join(media_line(part) for part in media)
        decided_by = self._allowed_by.pop(event.call.id, "")
        if event.status is CallState.DENIED and decided_by.startswith("config.toml"):
            shown = f"not run: {decided_by}\n{shown}"  # a rule said no, nobody was asked
        malformed = event.status is CallState.MALFORMED  # titled for what it shows: no tool, no status word
        name = "malformed call" if malformed else event.call.shown_tool
        said = ": what the model was told" if malformed else f" {event.status.label}"
        title = Text.assemble((f"{glyph} ", colour), (visible_controls(name), "bold"), (said, colour))
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
            (visible_controls(call.shown_tool), "bold cyan"),
            (f" ({visible_controls(call.tool)})" if call.title else "", "dim"),
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
        async with self.reader.question(self.console) as question:  # a line typed before it is not its answer
            while not event.decision.done():
                answer = await question.ask(lambda: self.console.print(APPROVAL_QUESTION, end=""), _approval_answer)
                if answer is None:
                    event.decision.set_result(ApprovalDecision(ApprovalChoice.DENY_ALL))
                    return
                if answer.strip().lower() == EDIT_KEY and spec is not None:
                    decision = await self._edited(question, spec, call.arguments)
                else:
                    decision = approval_key(answer)
                if decision is not None and not event.decision.done():
                    event.decision.set_result(decision)

    async def _edited(self, question: Question, spec: ToolSpec, arguments: dict) -> ApprovalDecision | None:
        """``e``: new arguments typed as JSON, checked against the tool's schema; the call then runs
        once with them (None: back to the approval question)."""
        from mcp_chat_tui.servers.user_calls import schema_problem

        self.console.print(literal(json.dumps(arguments, ensure_ascii=False), "dim"))
        while True:
            line = await question.ask(lambda: self.console.print(EDIT_QUESTION, end=""))
            if line is None or not line.strip():
                return None
            try:
                edited = json.loads(line)
            except json.JSONDecodeError as exc:
                self.console.print(literal(f"not JSON: {exc.msg} (column {exc.colno})", "red"))
                continue
            problem = "the arguments are a JSON object" if not isinstance(edited, dict) else ""
            problem = problem or schema_problem(edited, spec.input_schema)
            if not problem:
                return ApprovalDecision(ApprovalChoice.ALLOW_ONCE, arguments=edited)
            self.console.print(literal(f"the tool's schema refuses them: {problem}", "red"))

    async def _ask_unsaved(self, event: StartNotSaved) -> None:
        """A call whose start could not be saved: run only on a ``u`` typed for this question at a terminal."""
        self.console.print(literal(not_sent_line(event), "bold red"), soft_wrap=True)
        if self.one_shot or self.reader is None or not sys.stdin.isatty():
            why = "-p never runs a call unsaved" if self.one_shot else "no terminal to ask"
            self.console.print(literal(f"not run ({why})", "yellow"), soft_wrap=True)
            event.decision.set_result(UnsavedChoice.DONT_RUN)
            return
        async with self.reader.question(self.console) as question:
            while not event.decision.done():
                answer = await question.ask(
                    lambda: self.console.print(UNSAVED_QUESTION, end=""),
                    lambda line: line.strip().lower() in UNSAVED_KEYS,
                )
                choice = UNSAVED_KEYS.get(answer.strip().lower()) if answer is not None else UnsavedChoice.DONT_RUN
                if choice is None:
                    self.console.print(literal("(r, u or n)", "dim"))
                elif not event.decision.done():
                    event.decision.set_result(choice)

    def _end_thinking(self) -> None:
        if self._in_thinking:
            self.console.print()
            self._in_thinking = False

    def _break_line(self) -> None:
        self._end_thinking()
        if self._in_text:
            self.console.print()
            self._in_text = False
