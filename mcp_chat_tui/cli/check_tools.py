"""``--check-tools``: will this model work with my servers? One generated question per offered tool
(cli/tool_questions.py), each asked in a fresh conversation with every tool offered; the reply is
read with the engine's own events, as a conversation would read it, and nothing is run or saved.

Each tool gets a verdict: ``correct`` (a call to it, with arguments valid against its input
schema), ``invalid arguments``, ``wrong tool`` (a call to another offered tool), ``malformed``
(something meant as a call that the app cannot run: bad JSON, a name no server offers) or
``no call``. The table, then "N of M tools called correctly; …" and what to try where some
failed. Exit 0 when every tool was called correctly, 3 when not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from mcp_chat_tui.cli.check import shown
from mcp_chat_tui.cli.report import ExitCode
from mcp_chat_tui.cli.tool_questions import tool_question
from mcp_chat_tui.core.text import counted
from mcp_chat_tui.core.tools import ToolSpec
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import Stats, TextDelta, ToolCallMalformed, ToolCallProposed
from mcp_chat_tui.engine.generation import ReplyOverrides
from mcp_chat_tui.servers.user_calls import schema_problem

CORRECT, INVALID, WRONG, MALFORMED, NO_CALL = "correct", "invalid arguments", "wrong tool", "malformed", "no call"
VERDICT_STYLE = {CORRECT: "green", INVALID: "yellow", WRONG: "red", MALFORMED: "red", NO_CALL: "red"}
REPLY_TOKENS = 256  # a call is short; a reply that rambles on past this has not made one
TEXT_SHOWN = 80


@dataclass
class ToolCheck:
    """What the model did with one tool's question."""

    spec: ToolSpec
    question: str
    calls: list[ToolCallProposed] = field(default_factory=list)
    malformed: list[ToolCallMalformed] = field(default_factory=list)
    text: str = ""
    seconds: float = 0.0
    stats: Stats | None = None

    @property
    def own_calls(self) -> list[ToolCallProposed]:
        return [call for call in self.calls if call.name == self.spec.model_name]

    @property
    def problem(self) -> str:
        """Why the arguments of its calls to this tool are not valid ("" when one call's are)."""
        problems = [schema_problem(call.arguments, self.spec.input_schema) for call in self.own_calls]
        return "" if "" in problems else (problems[0] if problems else "")

    @property
    def verdict(self) -> str:
        if self.own_calls:
            return INVALID if self.problem else CORRECT
        if self.calls:
            return WRONG
        return MALFORMED if self.malformed else NO_CALL

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.spec.server,
            "tool": self.spec.name,
            "name": self.spec.model_name,
            "question": self.question,
            "verdict": self.verdict,
            "calls": [{"name": call.name, "arguments": call.arguments} for call in self.calls],
            "malformed": [{"raw": bad.raw, "reason": bad.reason} for bad in self.malformed],
            "arguments_problem": self.problem or None,
            "text": self.text,
            "seconds": round(self.seconds, 3),
        }


# ----- asking ----------------------------------------------------------------------------------


def offers_tools(engine: Engine) -> bool:
    """Whether the model is given the tools at all (its template takes them, or they go in text)."""
    return bool(engine.tools_in_text or engine.supports_tools)


async def ask(engine: Engine, spec: ToolSpec, tools: list[ToolSpec], system_prompt: str) -> ToolCheck:
    """One fresh conversation: the system prompt, the tool's question, one reply; nothing runs."""
    check = ToolCheck(spec, tool_question(spec))
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
    messages.append({"role": "user", "content": check.question})
    started = time.perf_counter()
    stream = engine.stream(
        messages,
        [tool.to_openai() for tool in tools],
        known_tools={tool.model_name for tool in tools},
        overrides=ReplyOverrides(max_tokens=REPLY_TOKENS),
    )
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                check.text += event.text
            elif isinstance(event, ToolCallProposed):
                check.calls.append(event)
            elif isinstance(event, ToolCallMalformed):
                check.malformed.append(event)
            elif isinstance(event, Stats):
                check.stats = event
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    check.seconds = time.perf_counter() - started
    return check


async def check_every_tool(
    engine: Engine, tools: list[ToolSpec], system_prompt: str, console: Console
) -> list[ToolCheck]:
    """Ask about each tool in turn, with a progress line ("tool 3 of 12: server/tool…"): a status line
    on a terminal, else one line a tool (a check of a real model takes minutes a tool on a CPU, and
    a log or a pipe would show nothing until the end). ``console`` is stderr's: stdout has the table."""
    checks: list[ToolCheck] = []
    with console.status("") as status:
        for index, spec in enumerate(tools, start=1):
            progress = f"tool {index} of {len(tools)}: {shown(spec.server)}/{shown(spec.model_name)}…"
            if console.is_terminal:
                status.update(progress)
            else:
                console.print(f"[dim]{progress}[/]")
            checks.append(await ask(engine, spec, tools, system_prompt))
    return checks


# ----- what it prints --------------------------------------------------------------------------


def checks_table(checks: list[ToolCheck]) -> Table:
    table = Table(title="Tool calls", title_justify="left")
    table.add_column("tool", no_wrap=True)
    for name in ("call", "right tool", "arguments"):
        table.add_column(name)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("details", overflow="fold")
    for check in checks:
        verdict = check.verdict
        called = "yes" if check.calls else ("malformed" if check.malformed else "no")
        if check.own_calls:
            right = "[green]yes[/]"
        elif check.calls:
            right = f"[red]no: {shown(check.calls[0].name)}[/]"
        else:
            right = "-"
        arguments = "-" if not check.own_calls else ("[green]valid[/]" if not check.problem else "[yellow]invalid[/]")
        table.add_row(
            f"{shown(check.spec.server)}/{shown(check.spec.model_name)}",
            f"[{VERDICT_STYLE[verdict]}]{called}[/]",
            right,
            arguments,
            f"{check.seconds:.1f} s",
            shown(details(check)),
        )
    return table


def details(check: ToolCheck) -> str:
    """What the row needs said: the arguments' problem, why a call was malformed, what was written instead."""
    verdict = check.verdict
    if verdict == INVALID:
        return check.problem
    if verdict == MALFORMED:
        return check.malformed[0].reason
    if verdict == NO_CALL:
        text = " ".join(check.text.split())
        return f"wrote: {text[:TEXT_SHOWN]}{'…' if len(text) > TEXT_SHOWN else ''}" if text else "wrote nothing"
    return ""


def summary_line(checks: list[ToolCheck]) -> str:
    """'N of M tools called correctly; …' with how many failed in each way."""
    correct = sum(check.verdict == CORRECT for check in checks)
    line = f"{correct} of {len(checks)} tools called correctly"
    others = [
        (verdict, sum(check.verdict == verdict for check in checks)) for verdict in (INVALID, WRONG, MALFORMED, NO_CALL)
    ]
    failed = [f"{count} {verdict}" for verdict, count in others if count]
    return f"{line}; {', '.join(failed)}." if failed else f"{line}."


def suggestion(checks: list[ToolCheck], engine: Engine) -> str:
    """What to try when some tools were not called correctly ("" when all were)."""
    correct = sum(check.verdict == CORRECT for check in checks)
    if correct == len(checks):
        return ""
    low = correct < 0.8 * len(checks)
    if engine.tools_in_text:
        other = " (or --tool-prompt template: its chat template takes tools)" if engine.supports_tools else ""
        return (
            f"Try a larger model{other}: with the tools described in text this one misses some."
            if low
            else ("A larger model may call the rest; the approval dialog shows every call before it runs.")
        )
    if low:
        return (
            "Try --tool-prompt text (the tools described in the system prompt; some models follow that better "
            "than their template), and if that scores low too, a larger model."
        )
    return (
        "Try --tool-prompt text, or a larger model, for the rest; the approval dialog shows every call before it runs."
    )


def no_tools_message(model: str) -> tuple[str, str]:
    return (
        f"{model} has no tool support in its chat template, so it is offered no tools.",
        "Try --tool-prompt text: the tools described in the system prompt.",
    )


# ----- the command -----------------------------------------------------------------------------


def run_check_tools(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``mcp-chat-tui MODEL --check-tools [--json]``."""
    from mcp_chat_tui.cli.chat import check_local_flags, demo_model_path
    from mcp_chat_tui.cli.terminal import run_until_signal

    model = args.model or (demo_model_path() if args.demo else None)
    if model is None:
        parser.error("--check-tools needs a model (a Hugging Face repo id, a local folder or a .gguf file), or --demo")
    if args.prompt is not None:
        parser.error("--check-tools asks its own questions: leave out -p")
    check_local_flags(args, parser)
    return asyncio.run(run_until_signal(lambda: check_tools_command(args, model)))


async def check_tools_command(args: argparse.Namespace, model: str) -> int:
    """Load the model and start the servers, ask about every tool, print the table (or ``--json``)."""
    from mcp_chat_tui.cli.chat import _load_and_start, check_start, display_name, make_engine
    from mcp_chat_tui.cli.setup import load_configuration, make_hub, warn_short_secrets
    from mcp_chat_tui.cli.terminal import ask_on_terminal

    console = Console(stderr=args.json, highlight=False)  # with --json, stdout carries the object alone
    settings, mcp_config = await load_configuration(args, ask_input=ask_on_terminal)
    warn_short_secrets(mcp_config.redactor, console)
    engine = make_engine(args, model, settings.model_options(model))
    hub = make_hub(settings, mcp_config)
    name = display_name(model)
    async with hub:
        try:
            await _load_and_start(engine, hub, model, len(mcp_config.enabled()), console)
            check_start(hub, settings, console)
            tools = hub.tools()
            ready = sum(1 for status in hub.statuses if status.state.usable)
            console.print(
                f"[dim]{shown(name)} · {len(tools)} tools from {counted(ready, 'server')} · nothing is run[/]"
            )
            if tools and not offers_tools(engine):
                return _report_no_tools(name, tools, args.json, console)
            system = "\n\n".join(part for part in (settings.system_prompt, hub.instructions_prompt()) if part)
            checks = await check_every_tool(engine, tools, system, Console(stderr=True, highlight=False))
        finally:
            await engine.close()
    return _report(name, checks, engine, args.json, console)


def _report(model: str, checks: list[ToolCheck], engine: Engine, as_json: bool, console: Console) -> int:
    code = ExitCode.ANSWERED if all(check.verdict == CORRECT for check in checks) else ExitCode.INCOMPLETE
    line, advice = summary_line(checks), suggestion(checks, engine)
    if as_json:
        report = {
            "model": model,
            "tool_prompt": "text" if engine.tools_in_text else "template",
            "tools": [check.to_json() for check in checks],
            "correct": sum(check.verdict == CORRECT for check in checks),
            "total": len(checks),
            "summary": line,
            "suggestion": advice or None,
            "exit_code": int(code),
        }
        print(json.dumps(report, ensure_ascii=False), flush=True)
        return code
    if checks:
        console.print(checks_table(checks))
    console.print(f"[{'green' if code == ExitCode.ANSWERED else 'yellow'}]{line}[/]")
    if advice:
        console.print(advice)
    return code


def _report_no_tools(model: str, tools: list[ToolSpec], as_json: bool, console: Console) -> int:
    what, advice = no_tools_message(model)
    if as_json:
        checks = [ToolCheck(spec, tool_question(spec)).to_json() for spec in tools]
        line = f"0 of {len(tools)} tools called correctly; {len(tools)} no call."
        report = {"model": model, "tool_prompt": "template", "tools": checks, "correct": 0, "total": len(tools)}
        print(json.dumps(report | {"summary": line, "suggestion": f"{what} {advice}", "exit_code": 3}), flush=True)
    else:
        console.print(f"[yellow]{shown(what)}[/] {advice}")
    return ExitCode.INCOMPLETE
