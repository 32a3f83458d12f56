"""A line typed ahead in ``--plain`` never answers the question that comes after it: on a terminal a
question (here a tool call's approval) takes only a line typed after its keys were shown; a line
typed before that would have answered it is dropped, any other waits for the next prompt, in order.

The real CLI on a pseudo-terminal (tests/test_tui_exit.Terminal), a scripted model endpoint whose
first reply waits until the test has typed ahead, and a real MCP server that writes a line for
every call it receives (tests/servers/ledger_server.py). The rule itself (the guard time, lines
typed during it) is checked in process on cli/typed_lines.py's reader.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

from rich.console import Console

from mcp_chat_tui.cli import typed_lines
from mcp_chat_tui.cli.typed_lines import LineReader
from tests.helpers import wait_until
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_call_lifecycle import CLI, cli_env, lines
from tests.test_cli_requests import FAKE_BROWSER, asking_servers
from tests.test_tui_exit import Terminal
from tests.test_unsaved_start import ledger_servers


class HeldEndpoint(ScriptedEndpoint):
    """The model's first reply waits until ``go`` is set: the model works while the person types."""

    def __init__(self, script: list) -> None:
        super().__init__(script)
        self.asked = threading.Event()
        self.go = threading.Event()

    def next_reply(self, body: dict):
        if not self.asked.is_set():
            self.asked.set()
            self.go.wait(60)
        return super().next_reply(body)


def user_prompts(request: dict) -> list[str]:
    return [message["content"] for message in request["messages"] if message["role"] == "user"]


def test_a_line_typed_while_the_model_works_never_approves_the_call_it_then_proposes(tmp_path, isolated_user_dirs):
    ledger = tmp_path / "ledger.txt"
    script = [tool_reply("append", {"path": str(ledger), "line": "paid"}), "Paid.", "I cannot open them."]
    env = dict(cli_env(isolated_user_dirs), TERM="dumb")
    with HeldEndpoint(script) as endpoint:
        argv = [*CLI, "--endpoint", endpoint.url, "scripted", "--mcp-config", str(ledger_servers(tmp_path))]
        terminal = Terminal([*argv, "--plain", "--no-save"], tmp_path, env)
        try:
            assert wait_until(lambda: "prompt ->" in terminal.text(), 60), terminal.text()[-2000:]
            terminal.press(b"pay once\r")
            assert endpoint.asked.wait(30), terminal.text()[-2000:]
            terminal.press(b"y\r")  # typed ahead for the approval to come
            terminal.press(b"open the pod bay doors\r")  # the next prompt, typed ahead
            endpoint.go.set()
            assert wait_until(lambda: "n no" in terminal.text(), 30), terminal.text()[-2000:]
            assert not ledger.exists(), "a line typed before the question approved the call"
            said = " ".join(terminal.text().split())
            assert "(typed before this question, so not taken as its answer: y)" in said
            assert "(typed before this question, kept for the next prompt: open the pod bay doors)" in said
            terminal.press(b"y\r")  # typed for the question
            assert wait_until(lambda: lines(ledger) == ["paid"], 30), terminal.text()[-2000:]
            assert wait_until(lambda: "I cannot open them." in terminal.text(), 30), terminal.text()[-2000:]
            terminal.press(b"bye\r")
            assert wait_until(lambda: terminal.status is not None, 30), terminal.text()[-2000:]
        finally:
            terminal.close()
    assert terminal.status == 0
    assert lines(ledger) == ["paid"], "run once, on the answer typed after the question"
    assert user_prompts(endpoint.requests[2]) == ["pay once", "open the pod bay doors"], "y was no prompt"
    assert "prompt -> open the pod bay doors" in " ".join(terminal.text().split()), "the prompt shows what it sends"


def test_a_prompt_typed_ahead_never_opens_the_page_a_server_then_asks_for(tmp_path, isolated_user_dirs, monkeypatch):
    """A prompt typed while the model works, "open the pod bay doors", opened the URL a server then
    asked for by its o. Typed before the question it waits for the prompt; typed after, a line is a
    choice only as its letter alone."""
    opened = tmp_path / "opened.txt"
    url = "https://127.0.0.1:9/authorize"
    env = dict(cli_env(isolated_user_dirs), TERM="dumb", BROWSER=f"{sys.executable} {FAKE_BROWSER} %s")
    env["FAKE_BROWSER_LOG"] = str(opened)
    script = [tool_reply("open_url", {"url": url}), "Declined.", "I cannot open them."]
    with HeldEndpoint(script) as endpoint:
        argv = [*CLI, "--endpoint", endpoint.url, "scripted", "--mcp-config"]
        argv += [str(asking_servers(tmp_path, isolated_user_dirs)), "--plain", "--no-save"]
        terminal = Terminal(argv, tmp_path, env)
        try:
            assert wait_until(lambda: "prompt ->" in terminal.text(), 60), terminal.text()[-2000:]
            terminal.press(b"open it\r")
            assert endpoint.asked.wait(30), terminal.text()[-2000:]
            terminal.press(b"open the pod bay doors\r")
            endpoint.go.set()
            assert wait_until(lambda: "o open in the browser" in terminal.text(), 30), terminal.text()[-2000:]
            terminal.press(b"open sesame\r")  # after the keys, but not one of them
            assert wait_until(lambda: terminal.text().count("o open in the browser") == 2, 30), terminal.text()
            terminal.press(b"d\r")
            assert wait_until(lambda: "I cannot open them." in terminal.text(), 30), terminal.text()[-2000:]
            terminal.press(b"bye\r")
            assert wait_until(lambda: terminal.status is not None, 30), terminal.text()[-2000:]
        finally:
            terminal.close()
    assert not opened.exists(), "the page was opened"
    assert json.loads(endpoint.requests[1]["messages"][-1]["content"]) == {"action": "decline"}
    assert user_prompts(endpoint.requests[2]) == ["open it", "open the pod bay doors"]


# ----- the rule, in process ----------------------------------------------------------------------


class FedReader(LineReader):
    """``LineReader`` on a terminal whose lines the test types (``type``), at the moment it types them."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop, guarded=True)
        self.keeps_prompts = True

    def _want(self) -> None:  # nothing to read from: lines come from ``type``
        pass

    def type(self, text: str) -> None:
        self._arrive(text, time.monotonic())


async def test_lines_typed_as_the_question_appears_put_its_keys_off_and_answer_nothing(monkeypatch):
    monkeypatch.setattr(typed_lines, "ARMING_DELAY", 1.0)  # room for the steps below on a busy machine
    reader = FedReader(asyncio.get_running_loop())
    shown: list[float] = []
    console = Console(file=open("/dev/null", "w"), force_terminal=False)  # noqa: SIM115  (closed at exit)
    reader.type("write a haiku")  # typed while the model worked
    async with reader.question(console) as question:
        answer = asyncio.ensure_future(
            question.ask(lambda: shown.append(time.monotonic()), lambda line: line.strip() in ("y", "n"))
        )
        await asyncio.sleep(0)
        reader.type("y")  # typed as the question appeared: not its answer, and puts its keys off
        typed_last = reader._lines[-1].at
        while not shown:
            await asyncio.sleep(0.05)
        assert shown[0] - typed_last >= 1.0, "the keys were shown before the typing had stopped for the guard time"
        assert not answer.done()
        reader.type("n")
        assert await answer == "n"
    assert await reader.read() == "write a haiku", "the prompt typed ahead waits for the prompt"
    reader.type("next")
    assert await reader.read() == "next", "the y that would have answered the question was dropped"
    console.file.close()


async def test_an_answer_typed_while_the_question_waits_is_dropped_and_still_puts_its_keys_off(monkeypatch):
    """A line that would have answered is dropped when it arrives; the guard was then counted from the
    question again, so the keys came 0.5 s after it, not 1 s (seen as a flake under load)."""
    monkeypatch.setattr(typed_lines, "ARMING_DELAY", 1.0)
    reader = FedReader(asyncio.get_running_loop())
    shown: list[float] = []
    console = Console(file=open("/dev/null", "w"), force_terminal=False)  # noqa: SIM115  (closed at exit)
    async with reader.question(console) as question:
        answer = asyncio.ensure_future(
            question.ask(lambda: shown.append(time.monotonic()), lambda line: line.strip() in ("y", "n"))
        )
        await asyncio.sleep(0.5)  # the question waits for its guard time
        typed = time.monotonic()
        reader.type("y")
        while not shown:
            await asyncio.sleep(0.05)
        assert shown[0] - typed >= 1.0, "the keys came before the guard time after the dropped line"
        reader.type("n")
        assert await answer == "n"
    console.file.close()
