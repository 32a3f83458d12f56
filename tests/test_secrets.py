"""Answers to password inputs never reach the screen, the transcript, the logs or the model,
even from a server that echoes its token everywhere (tests/servers/secret_server.py)."""

from __future__ import annotations

import json
import logging
import random
import sys
from pathlib import Path

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import AssistantText, AssistantThinking, CallFinished
from mcp_chat_tui.config import Settings, load_mcp_config
from mcp_chat_tui.core.redact import MIN_SECRET_LENGTH, Redactor, redact_logs
from mcp_chat_tui.engine.events import TextDelta, ThinkingDelta
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.ui.app import ChatApp
from mcp_chat_tui.ui.format import FrozenClock
from mcp_chat_tui.ui.screens.detail import CallDetailScreen, ServerDetailScreen, TextScreen
from tests.fakes import ScriptedEngine, call
from tests.helpers import FIXTURE_SERVER, free_port, start_http_server
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli
from tests.ui_helpers import SIZE, chat_text, send, wait_ready, wait_turn_done

SECRET_SERVER = str(Path(__file__).parent / "servers" / "secret_server.py")
# Two words, so a model streaming it word by word sends it in two pieces.
SECRET = "sk-live 7f3c9a2b"
PIECES = ("sk-live", "7f3c9a2b")
MARKER = "[redacted: token]"


def secret_config(folder: Path, *flags: str, secret: str = SECRET, **more_servers: dict) -> Path:
    """An mcp.json whose server gets the answer to a password input in its env and its arguments.

    The input has a default: with no terminal to ask (a test, a script), that is its answer.
    """
    config = folder / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "inputs": [
                    {
                        "id": "token",
                        "type": "promptString",
                        "description": "API token",
                        "password": True,
                        "default": secret,
                    }
                ],
                "servers": {
                    "leaky": {
                        "command": sys.executable,
                        "args": [SECRET_SERVER, "--token", "${input:token}", *flags],
                        "env": {"SECRET_TOKEN": "${input:token}"},
                    },
                    **more_servers,
                },
            }
        )
    )
    return config


def assert_hidden(where: str, text: str) -> None:
    for piece in PIECES:
        assert piece not in text, f"{piece!r} of the secret is in {where}:\n{text}"


def every_file(folder: Path) -> dict[str, str]:
    return {str(path): path.read_text(errors="replace") for path in folder.rglob("*") if path.is_file()}


LEAKY_SCRIPT = [
    tool_reply("reveal", {}, content="Let me look."),
    {
        "content": "",
        "tool_calls": [
            {"id": "call_2", "name": "reveal_structured", "arguments": {}},
            {"id": "call_3", "name": "fail_with_token", "arguments": {}},
            {"id": "call_4", "name": "echo", "arguments": {"text": f"Bearer {SECRET}"}},
            {"id": "call_5", "name": "refuse_with_token", "arguments": {}},
        ],
    },
    f"The token is {SECRET}, as the server said.",
]


def test_a_whole_turn_through_the_cli_shows_and_keeps_no_secret(tmp_path, isolated_user_dirs):
    config = secret_config(tmp_path)
    with ScriptedEndpoint(LEAKY_SCRIPT) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(config),
            "-p",
            f"which token? I gave you {SECRET}",
            "--yes",
            "--json",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert result.returncode == 1, result.stderr  # refuse_with_token's protocol error is a server failure
    report = json.loads(result.stdout)
    assert report["prompt"] == f"which token? I gave you {MARKER}"
    assert report["answer"] == f"The token is {MARKER}, as the server said."
    calls = {call["tool"]: call for call in report["calls"]}
    assert calls["reveal"]["result"] == f"env token: {MARKER}; argument token: {MARKER}"
    assert MARKER in calls["fail_with_token"]["error"]
    assert calls["echo"]["arguments"] == {"text": f"Bearer {MARKER}"}  # what the server got and echoed
    assert calls["echo"]["result"] == f"Bearer {MARKER}"
    assert f"session for {MARKER} expired" in calls["refuse_with_token"]["error"]
    assert_hidden("stdout", result.stdout)
    assert_hidden("stderr", result.stderr)
    # What the model was sent: the prompt, tool descriptions, results; nothing it could repeat.
    assert_hidden("the requests to the model", json.dumps(endpoint.requests))
    files = every_file(isolated_user_dirs)
    (transcript,) = [text for path, text in files.items() if path.endswith(".md")]
    assert MARKER in transcript and "env token:" in transcript
    server_log = files[str(isolated_user_dirs / "log" / "servers" / "leaky.log")]
    assert f"reveal called; token is {MARKER}" in server_log
    assert str(isolated_user_dirs / "log" / "mcp-chat-tui.log") in files
    for path, text in files.items():
        assert_hidden(path, path + text)  # the conversation's file name is made from the prompt


def test_check_servers_and_a_start_failure_show_no_secret(tmp_path, isolated_user_dirs):
    # A command that is the secret itself: the reason names the command it could not find.
    config = secret_config(tmp_path, "--fail-at-start", mistyped={"command": "${input:token}"})
    result = run_cli("--check-servers", "--mcp-config", str(config), cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 1
    out = " ".join((result.stdout + result.stderr).replace("│", " ").split())  # the table folds long lines
    assert "cannot log in with [redacted: token]" in out  # the stderr the failure reason quotes
    assert "command not found: '[redacted: token]'" in out
    assert_hidden("--check-servers output", result.stdout + result.stderr)
    for path, text in every_file(isolated_user_dirs).items():
        assert_hidden(path, text)


def test_an_http_server_given_the_secret_in_its_url_and_headers_logs_none_of_it(tmp_path, isolated_user_dirs):
    port = free_port()
    server = start_http_server([FIXTURE_SERVER, "--http", str(port), "--require-token", SECRET], port)
    try:
        url = f"http://127.0.0.1:{port}/mcp?key=${{input:token}}"
        config = secret_config(
            tmp_path, remote={"type": "http", "url": url, "headers": {"Authorization": "Bearer ${input:token}"}}
        )
        result = run_cli("--check-servers", "--mcp-config", str(config), cwd=tmp_path, dirs=isolated_user_dirs)
    finally:
        server.terminate()
        server.wait(10)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_hidden("--check-servers output", result.stdout + result.stderr)
    app_log = (isolated_user_dirs / "log" / "mcp-chat-tui.log").read_text()
    assert "mcp?key=[redacted: token]" in app_log  # httpx logs each request's URL, percent-encoded
    for path, text in every_file(isolated_user_dirs).items():
        assert_hidden(path, text)


async def test_the_app_shows_no_secret_in_the_chat_the_sidebar_or_any_detail(tmp_path):
    config = load_mcp_config(secret_config(tmp_path), workspace_folder=tmp_path)
    hub = ServerHub(config.enabled().values(), redactor=config.redactor, log_dir=tmp_path / "logs")
    engine = ScriptedEngine(
        [
            [
                call("reveal", {}),
                call("reveal_structured", {}, "call_2"),
                call("fail_with_token", {}, "call_3"),
                call("echo", {"text": SECRET}, "call_4"),
                call("refuse_with_token", {}, "call_5"),
            ],
            f"It is {SECRET} indeed.",
        ]
    )
    app = ChatApp(
        engine=engine, hub=hub, policy=ApprovalPolicy("auto"), settings=Settings(), clock=FrozenClock(), autosave=False
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, f"show me the token, not {SECRET}")
        await wait_turn_done(pilot, app)
        assert f"show me the token, not {MARKER}" in chat_text(app)
        assert chat_text(app).count(MARKER) >= 1 and "It is [redacted: token] indeed." in chat_text(app)
        assert_hidden("the chat", chat_text(app))
        assert_hidden("the main screen", app.export_screenshot())
        copied = []
        await pilot.press("f3")  # the cursor is on the last call
        for _ in range(5):
            await pilot.press("enter")
            assert isinstance(app.screen, CallDetailScreen)
            assert_hidden("a call's detail", app.export_screenshot())
            await pilot.press("c")
            copied.append(app.clipboard)
            await pilot.press("escape", "k")
        assert_hidden("the copied calls", "\n".join(copied))
        assert [text.splitlines()[0] for text in copied] == [
            "tool: refuse_with_token",
            "tool: echo",
            "tool: fail_with_token",
            "tool: reveal_structured",
            "tool: reveal",
        ]
        assert all(MARKER in text for text in copied) and "structured content:" in copied[3]
        await pilot.press("f4")
        await pilot.press("enter")
        assert isinstance(app.screen, ServerDetailScreen)  # the tools and their descriptions
        assert_hidden("the server's detail", app.export_screenshot())
        await pilot.press("escape", "l")
        assert isinstance(app.screen, TextScreen)  # the server's stderr
        assert_hidden("the server's stderr", app.export_screenshot())
        assert any(MARKER in line for line in hub.status("leaky").stderr_tail)
        assert_hidden("the transcript", app.recorder.rendered())
        assert_hidden("what the model was sent", json.dumps([engine.prompts, engine.tools_sent]))
        await pilot.press("escape")
    assert_hidden("the server's log file", (tmp_path / "logs" / "leaky.log").read_text())


async def test_the_agent_hides_the_secret_in_the_prompt_thinking_text_and_calls_it_hands_on(tmp_path):
    config = load_mcp_config(secret_config(tmp_path), workspace_folder=tmp_path)
    first, second = SECRET.split(" ")
    engine = ScriptedEngine(
        [
            [
                ThinkingDelta(f"they said {first} "),
                ThinkingDelta(f"{second}."),
                TextDelta(f"Using {first}"),
                TextDelta(f" {second} now."),
                call("echo", {"text": SECRET, SECRET: [SECRET]}),
            ],
            [TextDelta(f"Done with {first} "), TextDelta(second)],
        ]
    )
    events = []
    async with ServerHub(config.enabled().values(), redactor=config.redactor) as hub:
        await hub.start_all()
        assert hub.status("leaky").instructions == f"Connected with token {MARKER}."
        agent = Agent(engine, hub, ApprovalPolicy("auto"), redactor=config.redactor)
        await agent.run_turn(f"the token is {SECRET}", events.append)
    assert_hidden("the events", repr(events))
    assert_hidden("what the model was sent", json.dumps([engine.prompts, engine.tools_sent]))
    assert_hidden("the conversation", json.dumps(agent.messages))
    shown = "".join(e.text for e in events if isinstance(e, AssistantText))
    assert shown == f"Using {MARKER} now.Done with {MARKER}"
    assert "".join(e.text for e in events if isinstance(e, AssistantThinking)) == f"they said {MARKER}."
    (finished,) = [e for e in events if isinstance(e, CallFinished)]
    assert finished.call.arguments == {"text": MARKER, MARKER: [MARKER]}
    assert finished.result.text == MARKER  # what the server got


def test_a_secret_split_across_streamed_pieces_is_still_hidden():
    redactor = Redactor({"token": SECRET})
    text = f"a {SECRET} b {SECRET}{SECRET} s"
    for size in range(1, len(text) + 1):
        stream = redactor.stream()
        shown = "".join(stream.feed(text[start : start + size]) for start in range(0, len(text), size)) + stream.flush()
        assert shown == f"a {MARKER} b {MARKER}{MARKER} s", size


def test_streamed_text_is_redacted_exactly_as_the_whole_text_even_with_overlapping_secrets():
    rng = random.Random(1)
    for _ in range(3000):
        secrets = {
            f"s{n}": "".join(rng.choice("abc ") for _ in range(rng.randint(4, 7))) for n in range(rng.randint(1, 3))
        }
        redactor = Redactor(secrets)
        text = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 30)))
        for value in secrets.values():
            at = rng.randint(0, len(text))
            text = text[:at] + value + text[at:]
        cuts = sorted(rng.sample(range(len(text) + 1), rng.randint(0, min(len(text) + 1, 8))))
        pieces = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)], strict=False)]
        stream = redactor.stream()
        shown = "".join(stream.feed(piece) for piece in pieces) + stream.flush()
        assert shown == redactor.text(text), (secrets, pieces)


def test_the_escaped_spellings_of_a_secret_are_hidden_too():
    secret = 'pa"ss wörd\\1'
    redactor = Redactor({"pw": secret})
    for spelling in (
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        "pa%22ss%20w%C3%B6rd%5C1",
        "pa%22ss+w%C3%B6rd%5C1",
    ):
        assert redactor.text(f"<{spelling}>") == "<[redacted: pw]>", spelling
    assert redactor.value({secret: [secret, 3, None]}) == {"[redacted: pw]": ["[redacted: pw]", 3, None]}
    assert secret not in repr(redactor)


def test_an_answer_too_short_to_redact_is_left_and_named():
    redactor = Redactor({"pin": "a" * (MIN_SECRET_LENGTH - 1), "empty": "", "long": "b" * MIN_SECRET_LENGTH})
    assert redactor.text("a banana aaa bbbb") == "a banana aaa [redacted: long]"
    assert redactor.too_short == ["pin"]
    assert "pin" in redactor.short_warning() and "aaa" not in redactor.short_warning()
    assert Redactor({"token": SECRET}).short_warning() == ""


def test_a_short_answer_is_named_at_start(tmp_path, isolated_user_dirs):
    config = secret_config(tmp_path, secret="ab")
    result = run_cli("--check-servers", "--mcp-config", str(config), cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "password input token is shorter than 4 characters" in " ".join(result.stdout.split())


async def test_the_app_names_a_short_answer_at_start(tmp_path):
    config = load_mcp_config(secret_config(tmp_path, secret="ab"), workspace_folder=tmp_path)
    hub = ServerHub(config.enabled().values(), redactor=config.redactor)
    app = ChatApp(
        engine=ScriptedEngine([]),
        hub=hub,
        policy=ApprovalPolicy("ask"),
        settings=Settings(),
        clock=FrozenClock(),
        autosave=False,
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        shown = [notification.message for notification in app._notifications]
        assert any("token is shorter than 4 characters" in message for message in shown), shown


def test_the_log_file_gets_no_secret(tmp_path):
    handler = logging.FileHandler(tmp_path / "app.log")
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        redact_logs(Redactor({"token": SECRET}))
        logger = logging.getLogger("httpx")
        logger.warning("HTTP Request: POST %s", f"http://127.0.0.1/mcp?key={SECRET}")
        try:
            raise ValueError(f"refused {SECRET}")
        except ValueError:
            logger.exception("the call failed")
    finally:
        root.removeHandler(handler)
        handler.close()
    text = (tmp_path / "app.log").read_text()
    assert "key=[redacted: token]" in text and "ValueError: refused [redacted: token]" in text
    assert_hidden("the log file", text)
