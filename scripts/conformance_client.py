"""The client command the conformance suite runs for a scenario: ``conformance_client.py URL``.

It plays a user of mcp-chat-tui: writes an mcp.json naming the scenario's server at ``URL`` (with
the pre-registered client or the client metadata document URL the scenario hands over in
``$MCP_CONFORMANCE_CONTEXT``), and runs the real CLI in one-shot mode (``-p ... --yes``) on a
pseudo-terminal, as a person runs it, against a scripted model (``tests/scripted_endpoint.py``) that
calls the scenario's tools: the calls the scenario names, else every tool with arguments made from
its schema. A server that needs sign-in is offered one at start: the person says yes and follows
the address the CLI prints as a browser would (the suite's authorization server approves at once),
and the turn goes on in the same run; a form a server sends is filled in with its defaults. When
the CLI still ends needing sign-in (exit code 4: a sign-in that failed, a wider scope asked for
during a call), it signs in with ``--sign-in NAME`` and runs the turn again; at most three runs.
Every run is isolated: its own config, data and log folders, and tokens kept in a file there (no
keyring).

Exit code: the CLI's last one, except that 3 (a call failed or a request was declined, which some
scenarios provoke on purpose) counts as 0.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.scripted_endpoint import ScriptedEndpoint  # noqa: E402

SERVER = "scenario"
# The client id an mcp-chat-tui user would publish as a client metadata document; the suite's
# authorization server accepts this one without fetching it.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
NEEDS_SIGN_IN = 4
INCOMPLETE = 3
MAX_RUNS = 3
PROMPT = "Use the tools of the scenario server."

# Scenarios whose server serves tools/list only: the model calls nothing.
LIST_ONLY = {"json-schema-ref-no-deref"}
# Scenarios whose server offers a tool that takes back the input schema of another of its tools, to
# see what the client kept of it: the model passes the schema exactly as the app offered it.
ECHOES_SCHEMA = {"json-schema-2020-12-preservation": ("json_schema_echo", "json_schema_2020_12_tool")}


class ScenarioModel(ScriptedEndpoint):
    """The scripted model: on the user's prompt it calls tools; after their results it answers."""

    def __init__(self, scenario: str, context: dict[str, Any]) -> None:
        super().__init__([])
        self.scenario = scenario
        self.context = context

    def next_reply(self, body: dict) -> str | dict:
        with self._lock:
            self.requests.append(body)
        messages = body.get("messages") or []
        if messages and messages[-1].get("role") == "tool":
            return "Done."
        offered = [tool["function"] for tool in body.get("tools") or []]
        calls = self.calls(offered)
        if not calls:
            return "There is nothing to call."
        return {"content": "", "tool_calls": calls}

    def calls(self, offered: list[dict]) -> list[dict]:
        if self.scenario in LIST_ONLY:
            return []
        by_name = {tool["name"]: tool for tool in offered}
        if self.scenario in ECHOES_SCHEMA:
            return _schema_echo(ECHOES_SCHEMA[self.scenario], by_name)
        wanted = self.context.get("toolCalls")
        calls = []
        if wanted:
            for index, call in enumerate(wanted):
                name = _offered_name(call["name"], by_name)
                if name is not None:
                    calls.append({"id": f"call_{index + 1}", "name": name, "arguments": call.get("arguments") or {}})
            return calls
        for index, tool in enumerate(offered):
            arguments = example_arguments(tool.get("parameters") or {})
            calls.append({"id": f"call_{index + 1}", "name": tool["name"], "arguments": arguments})
        return calls


def _schema_echo(names: tuple[str, str], offered: dict[str, dict]) -> list[dict]:
    """A call of the echoing tool with the other tool's parameters as the model was given them."""
    echo, focal = (_offered_name(name, offered) for name in names)
    if echo is None or focal is None:
        return []
    schema = offered[focal].get("parameters") or {}
    return [{"id": "call_1", "name": echo, "arguments": {"schema": schema}}]


def _offered_name(name: str, offered: dict[str, dict]) -> str | None:
    """The name the app gave the tool ``name`` (itself, or ``server__name`` where names clash)."""
    if name in offered:
        return name
    return next((model_name for model_name in offered if model_name.endswith(f"__{name}")), None)


def example_arguments(schema: dict) -> dict:
    """A value for each required property (its default, its first allowed value, else one of its type)."""
    properties = schema.get("properties") or {}
    return {key: example_value(properties.get(key) or {}) for key in schema.get("required") or []}


def example_value(schema: dict) -> Any:
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return {
        "number": 2,
        "integer": 3,
        "boolean": True,
        "array": [],
        "object": example_arguments(schema),
        "null": None,
    }.get(kind, "example")


# ----- the user --------------------------------------------------------------------------------


def write_mcp_json(folder: Path, url: str, context: dict[str, Any]) -> Path:
    oauth: dict[str, Any] = {"clientMetadataUrl": CLIENT_METADATA_URL}
    if context.get("client_id"):
        oauth = {"clientId": context["client_id"]}
        if context.get("client_secret"):
            oauth["clientSecret"] = context["client_secret"]
    path = folder / "mcp.json"
    path.write_text(json.dumps({"servers": {SERVER: {"type": "http", "url": url, "oauth": oauth}}}, indent=2))
    return path


def isolated_env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    for kind in ("CONFIG", "DATA", "CACHE", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(folder / kind.lower())
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"  # tokens go to a file in the data folder
    env["PYTHONPATH"] = str(REPO)
    return env


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcp_chat_tui.cli.main", *args]


def one_turn(config: Path, endpoint: ScenarioModel, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``-p`` on a terminal, as a person runs it: it offers to sign in to a server that needs it, and
    asks for the forms a server sends."""
    command = [
        *cli("--endpoint", endpoint.url, "scripted", "--mcp-config", str(config), "--yes", "--no-save"),
        "-p",
        PROMPT,
    ]
    result = on_terminal(command, env, config.parent)
    sys.stderr.write(f"$ mcp-chat-tui -p on a terminal (exit {result.returncode})\n{result.stdout}")
    return result


# The questions a person at the terminal answers: sign in now (following the address as the browser
# would, not opening one), fill in a form, and keep each field's default.
ANSWERS = [
    (re.compile(r"needs sign-in\. Sign in now\? \[Y/n\] $"), "y"),
    (re.compile(r"Open it in your browser\? \[Y/n\] $"), "n"),
    (re.compile(r"f fill in · d decline · c cancel: $"), "f"),
    (re.compile(r"[\])]: $"), ""),
]
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# The sign-in address the CLI prints, followed once it says it waits for the browser (its callback is up).
SIGN_IN_ADDRESS = re.compile(r"Sign in to \S+ at this address:\s*(https?://\S+)")
WAITING = "waiting for the browser to come back"


def on_terminal(
    command: list[str], env: dict[str, str], cwd: Path, timeout: float = 240
) -> subprocess.CompletedProcess:
    """``command`` on a pseudo-terminal, answering its questions as ``ANSWERS`` says, and following
    each sign-in address it prints as a browser would."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI
        os.chdir(cwd)
        os.execvpe(command[0], command, env)
    seen, since, browsed = "", 0, 0
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([fd], [], [], 1)[0]:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the CLI ended and closed the terminal
                break
            if not chunk:
                break
            seen += chunk.decode(errors="replace")
            asked = ESCAPES.sub("", seen[since:])
            answer = next((answer for pattern, answer in ANSWERS if pattern.search(asked)), None)
            if answer is not None:
                os.write(fd, f"{answer}\n".encode())
                since = len(seen)
            browsed = follow_sign_in(ESCAPES.sub("", seen), browsed)
    finally:
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGTERM)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return subprocess.CompletedProcess(command, os.waitstatus_to_exitcode(status), ESCAPES.sub("", seen), "")


def follow_sign_in(text: str, start: int) -> int:
    """Browse the sign-in address ``text`` shows after ``start`` once the CLI waits for the browser;
    where to look from next time."""
    address = SIGN_IN_ADDRESS.search(text, start)
    waiting = text.find(WAITING, address.end()) if address else -1
    if address is None or waiting < 0:
        return start
    browse(address.group(1))
    return waiting + len(WAITING)


def sign_in(config: Path, env: dict[str, str]) -> int:
    """``--sign-in``: open the address it prints as a browser would; its exit code."""
    process = subprocess.Popen(
        cli("--sign-in", SERVER, "--mcp-config", str(config)),
        env=env, cwd=config.parent, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    seen: list[str] = []
    asked = False
    for line in process.stdout:
        seen.append(line)
        if asked and re.match(r"https?://", line.strip()):
            browse(line.strip())
            asked = False
        asked = asked or line.startswith(f"Sign in to {SERVER}")
    code = process.wait()
    sys.stderr.write(f"$ mcp-chat-tui --sign-in (exit {code})\n{''.join(seen)}{process.stderr.read()}")
    return code


def browse(url: str) -> None:
    """What the browser does: follow the address; the authorization server redirects to the app.
    (The standard library's client: this script starts once a scenario, and httpx2 would add a
    twentieth of a second of CPU to each start.)"""
    try:
        with urllib.request.urlopen(url, timeout=20) as page:
            page.read()
    except urllib.error.HTTPError as exc:  # the page the app's callback answered with says what went wrong
        sys.stderr.write(f"the browser was answered {exc.code} at {exc.url}\n")
    except (urllib.error.URLError, OSError) as exc:
        sys.stderr.write(f"the browser could not open {url}: {exc}\n")


def main() -> int:
    url = sys.argv[1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory(prefix="conformance-client-") as temp:
        folder = Path(temp)
        config = write_mcp_json(folder, url, context)
        env = isolated_env(folder)
        with ScenarioModel(scenario, context) as endpoint:
            result = one_turn(config, endpoint, env)
            for _ in range(MAX_RUNS - 1):
                if result.returncode != NEEDS_SIGN_IN:
                    break
                if sign_in(config, env) != 0:
                    break
                result = one_turn(config, endpoint, env)
    return 0 if result.returncode == INCOMPLETE else result.returncode


if __name__ == "__main__":
    sys.exit(main())
