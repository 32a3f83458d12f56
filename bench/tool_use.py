"""Does a model's tool use work through the app? Questions over the demo server and the official
time, filesystem and everything servers, each asked through the real CLI (``-p --json --yes
--no-save``, one process per question), judged from what the app reports.

Run: ``.venv/bin/python bench/tool_use.py MODEL [--refservers DIR] [--only NAME] [--questions N]``
(``MODEL``: what the app takes, a folder, a repo id, a ``.gguf`` file, or ``demo`` for the bundled
toy model). Per question it prints one line: the tool wanted and the tools the model wrote calls
to, how many of those naming an offered tool the app ran, whether the right tool was called with
valid arguments (the tool's input schema and what the question asked), whether the answer used
the result, calls run again with the same arguments, replies with special-token text, decode and
prefill tok/s. The calls the model wrote are found by the bench's own detector
(bench/tool_use_score.py) in the replies' text and the malformed calls' raw text, not by the
app's parser. The last line is one JSON object of the figures (bench/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tool_use_questions import FILES, Question, all_questions, prompt_in  # noqa: E402
from tool_use_score import OfferedTool, QuestionScore, score, summary  # noqa: E402

SERVER_FLAGS = ("time", "filesystem", "everything")
PACKAGES = {
    "time": "uvx mcp-server-time --local-timezone UTC",
    "filesystem": "npx -y @modelcontextprotocol/server-filesystem",
    "everything": "npx -y @modelcontextprotocol/server-everything",
}
REFSERVER_PATHS = {  # under --refservers DIR: the same servers installed there
    "time": "{dir}/timeenv/bin/mcp-server-time --local-timezone UTC",
    "filesystem": "node {dir}/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    "everything": "node {dir}/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
}


@dataclass
class Setup:
    """Where a run happens: the app's command, the servers' commands, the scratch folders."""

    app: list[str]
    model_flags: list[str]
    servers: dict[str, list[str]]  # name -> command line (the filesystem server's folder added later)
    folder: Path  # the filesystem server's root and the app's working folder
    scratch: Path  # mcp.json files and an empty config.toml
    env: dict[str, str]
    app_flags: list[str] = field(default_factory=list)
    offered: dict[tuple[str, ...], list[OfferedTool]] = field(default_factory=dict)

    def server_entry(self, name: str) -> dict:
        command = self.servers[name] + ([str(self.folder)] if name == "filesystem" else [])
        return {"command": command[0], "args": command[1:], "initTimeout": 180}


def server_commands(options: argparse.Namespace) -> dict[str, list[str]]:
    """Each server's command: its flag, else its place under ``--refservers``, else npx/uvx."""
    commands = {"demo": [sys.executable, "-m", "mcp_chat_tui.demo.server"]}
    for name in SERVER_FLAGS:
        given = getattr(options, name)
        if given is None and options.refservers is not None:
            given = REFSERVER_PATHS[name].format(dir=options.refservers)
        commands[name] = shlex.split(given or PACKAGES[name])
    return commands


def reset_files(folder: Path) -> None:
    """The scratch folder holds exactly ``FILES`` (a question that wrote or moved files is undone)."""
    for child in folder.iterdir():
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    for relative, text in FILES.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# ----- the tools each question offers ----------------------------------------------------------


async def list_offered(setup: Setup, servers: tuple[str, ...]) -> list[OfferedTool]:
    """The tools the model is offered with ``servers``, by the names it sees (as the app names them)."""
    from mcp import Client, StdioServerParameters

    from mcp_chat_tui.core.tools import ToolSpec, unique_model_names
    from mcp_chat_tui.servers.tasks import needs_task

    specs: list[ToolSpec] = []
    for name in servers:
        entry = setup.server_entry(name)
        params = StdioServerParameters(command=entry["command"], args=entry["args"], cwd=str(setup.folder))
        async with Client(params) as client:  # a server's start-up lines go to stderr
            tools = (await client.list_tools()).tools
        specs += [
            ToolSpec(server=name, name=t.name, description=t.description or "", input_schema=t.input_schema)
            for t in tools
            if not needs_task(t)
        ]
    return [OfferedTool(s.model_name, s.server, s.name, s.input_schema) for s in unique_model_names(specs)]


def offered_for(setup: Setup, servers: tuple[str, ...]) -> list[OfferedTool]:
    if servers not in setup.offered:
        setup.offered[servers] = asyncio.run(list_offered(setup, servers))
    return setup.offered[servers]


# ----- one question ----------------------------------------------------------------------------


@dataclass
class Run:
    report: dict | None
    failure: str
    seconds: float
    stderr: str


def ask(setup: Setup, question: Question, servers: tuple[str, ...], timeout: float) -> Run:
    """One ``-p --json`` run of the app for ``question`` with ``servers`` configured."""
    reset_files(setup.folder)
    config = setup.scratch / f"mcp-{'-'.join(servers)}.json"
    config.write_text(json.dumps({"servers": {name: setup.server_entry(name) for name in servers}}))
    command = [
        *setup.app,
        *setup.model_flags,
        "--mcp-config",
        str(config),
        "--config",
        str(setup.scratch / "config.toml"),
        *setup.app_flags,
        "--yes",
        "--no-save",
        "--json",
        "-p",
        prompt_in(question, str(setup.folder)),
    ]
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=setup.folder,
        env=setup.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a timeout ends the app and its servers together
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            stdout, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
        return Run(None, f"timeout after {timeout:g} s", time.monotonic() - started, stderr)
    seconds = time.monotonic() - started
    try:
        return Run(json.loads(stdout.strip().splitlines()[-1]), "", seconds, stderr)
    except (ValueError, IndexError):
        tail = stderr.strip().splitlines()[-1:] or [f"exit {process.returncode}"]
        return Run(None, f"no JSON report ({tail[0][:120]})", seconds, stderr)


def runs(names: list[str]) -> list[tuple[str, int]]:
    """Each name with how many times it comes in a row (``a, a, b``: ``a`` twice, then ``b``)."""
    counted: list[tuple[str, int]] = []
    for name in names:
        if counted and counted[-1][0] == name:
            counted[-1] = (name, counted[-1][1] + 1)
        else:
            counted.append((name, 1))
    return counted


def line(result: QuestionScore, seconds: float) -> str:
    """The question's line (``-`` where a figure is unknown)."""

    def mark(flag: bool) -> str:
        return "yes" if flag else "no"

    written = ",".join(f"{name}×{count}" if count > 1 else name for name, count in runs(result.written)) or "-"
    rates = [f"{rate:.1f}" if rate is not None else "-" for rate in (result.decode_tps, result.prefill_tps)]
    figures = (
        f"{result.name:<19} wanted {result.wanted:<36} wrote {written:<28} caught {result.caught_offered}/"
        f"{result.written_offered} run {result.run_offered} right {mark(result.right_tool):<3} args {mark(result.args_valid):<3} "
        f"used {mark(result.used_result):<3} repeats {result.repeats} leaked {result.leaked} "
        f"tok/s {rates[0]}/{rates[1]} {seconds:.0f}s"
    )
    return figures + (f" [{result.failure}]" if result.failure else f" end {result.end}")


# ----- the run ---------------------------------------------------------------------------------


def chosen(options: argparse.Namespace) -> list[Question]:
    """The questions ``--only`` names (question names, or server names for all of theirs), the first
    ``--questions N`` of them."""
    questions = all_questions()
    if options.only:
        wanted = {name for given in options.only for name in given.split(",")}
        unknown = wanted - {q.name for q in questions} - {q.server for q in questions}
        if unknown:
            raise SystemExit(f"--only: no question or server named {', '.join(sorted(unknown))}")
        questions = [q for q in questions if q.name in wanted or q.server in wanted]
    return questions[: options.questions] if options.questions else questions


def make_setup(options: argparse.Namespace, folder: Path, scratch: Path) -> Setup:
    env = dict(os.environ)
    if options.cache_dir:
        env["MCP_CHAT_TUI_CACHE_DIR"] = str(options.cache_dir)
    model_flags = ["--demo"] if options.model == "demo" else [options.model]
    if options.max_tokens:
        model_flags += ["--max-tokens", str(options.max_tokens)]
    (scratch / "config.toml").write_text("", encoding="utf-8")  # the user's own settings stay out
    return Setup(
        shlex.split(options.app) if options.app else [sys.executable, "-m", "mcp_chat_tui.cli.main"],
        model_flags,
        server_commands(options),
        folder,
        scratch,
        env,
        app_flags=list(options.app_flag or []),
    )


def run(options: argparse.Namespace) -> list[tuple[QuestionScore, dict]]:
    """Ask every chosen question; print each one's line as it ends; returns the scores and records."""
    questions = chosen(options)
    all_servers = tuple(dict.fromkeys(s for q in all_questions() for s in q.servers))
    folder = Path(tempfile.mkdtemp(prefix="tool-use-"))
    scratch = Path(tempfile.mkdtemp(prefix="tool-use-config-"))
    setup = make_setup(options, folder, scratch)
    results = []
    try:
        for question in questions:
            servers = all_servers if options.all_servers else question.servers
            offered = offered_for(setup, servers)
            asked = ask(setup, question, servers, options.timeout)
            result = score(question, asked.report, offered, str(folder), asked.failure)
            print(line(result, asked.seconds), flush=True)
            record = {
                "model": options.model,
                "question": question.name,
                "folder": str(folder),
                "servers": list(servers),
                "offered": [tool.__dict__ for tool in offered],
                "report": asked.report,
                "failure": asked.failure,
                "stderr_tail": asked.stderr[-2000:] if asked.failure else "",  # what the app said before it
                "seconds": round(asked.seconds, 1),
            }
            results.append((result, record))
            if options.record is not None:
                with options.record.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(record, ensure_ascii=False) + "\n")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def rescore(path: Path) -> list[QuestionScore]:
    """Score the records of an earlier run (``--record``) again, without running anything."""
    questions = {q.name: q for q in all_questions()}
    scores = []
    for text in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(text)
        offered = [OfferedTool(**tool) for tool in record["offered"]]
        question = questions[record["question"]]
        result = score(question, record["report"], offered, record["folder"], record["failure"])
        print(line(result, record.get("seconds", 0)), flush=True)
        scores.append(result)
    return scores


def parse_options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", help="the model as the app takes it; 'demo' for the bundled toy model")
    parser.add_argument(
        "--refservers", type=Path, help="a folder where the time, filesystem and everything servers are installed"
    )
    for name in SERVER_FLAGS:
        parser.add_argument(
            f"--{name}", metavar="COMMAND", help=f"the {name} server's command (default: {PACKAGES[name]})"
        )
    parser.add_argument(
        "--only", action="append", metavar="NAME", help="only these questions or servers (comma-separated, repeatable)"
    )
    parser.add_argument("--questions", type=int, metavar="N", help="only the first N questions (after --only)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds a question may take (default 900)")
    parser.add_argument("--max-tokens", type=int, default=512, help="the app's --max-tokens (0: the app's default)")
    parser.add_argument("--all-servers", action="store_true", help="offer every server's tools in every question")
    parser.add_argument(
        "--cache-dir",
        default=os.environ.get("MCP_CHAT_TUI_CACHE_DIR"),
        help="the app's cache folder (default: $MCP_CHAT_TUI_CACHE_DIR)",
    )
    parser.add_argument("--app", help="the app's command (default: this Python with -m mcp_chat_tui.cli.main)")
    parser.add_argument(
        "--app-flag",
        action="append",
        metavar="FLAG",
        help="another flag for the app, e.g. --app-flag=--tool-prompt=text",
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="append each question's report and scoring input to FILE (JSON lines)",
    )
    parser.add_argument(
        "--rescore", type=Path, metavar="FILE", help="score the records in FILE again instead of running"
    )
    options = parser.parse_args(argv)
    if options.model is None and options.rescore is None:
        parser.error("give a MODEL (or --rescore FILE)")
    return options  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    options = parse_options(argv)
    if options.rescore is not None:
        scores = rescore(options.rescore)
    else:
        print(
            f"model {options.model}; per question: the tool wanted, the calls written, caught/written naming an offered tool"
        )
        scores = [result for result, _ in run(options)]
    print(json.dumps(summary(scores)))


if __name__ == "__main__":
    main()
