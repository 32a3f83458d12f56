"""Make the README's screenshots: the real app, headless, saved as SVG into ``screenshots/``.

    python scripts/make_screenshots.py              # the bundled demo model and the demo server
    python scripts/make_screenshots.py --scripted   # a scripted model (to work on the app itself)

It runs ``ChatApp`` with the real ``MlxEngine`` on ``mcp_chat_tui/demo/model`` and the real
demo server (the bundled ``mcp.json``'s entry), drives it with Pilot (the conversation at 80x24, where
the sidebar shows each call on two lines with its arguments and duration; the rest at 140x40) and saves:

- ``main.svg``: a conversation with three approved tool calls (calculator, web_search,
  calculator again) in the chat and the sidebar (the toy model loses its way in a longer
  conversation, and a clock's answer changes with the time: these three it answers right);
- ``approval.svg``: the approval dialog before the first call;
- ``call-detail.svg``: Enter on the web_search row of the sidebar;
- ``server-failed.svg``: a second server whose command does not exist, with
  ``on_server_failure = "continue"``, the server table focused on the failed row;
- ``argument-editor.svg``: ``e`` in the approval dialog of a scripted model's web_search call: the
  form built from the tool's input schema, its query edited;
- ``elicitation.svg``: a server's form (tests/servers/asking_server.py's ``sign_up``, called by
  a scripted model whatever ``--scripted`` says), a wrong email named under its field.

Every wait is for a state of the app, never a fixed sleep. Nothing is written outside
``--out``: the user directories (config, saved conversations, logs) point into a
temporary folder while the script runs, so your own themes and settings do not show
either.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from textual.widgets import Input  # noqa: E402

from mcp_chat_tui.agent import ApprovalPolicy  # noqa: E402
from mcp_chat_tui.config import ServerConfig, Settings  # noqa: E402
from mcp_chat_tui.servers import ServerHub, ServerState  # noqa: E402
from mcp_chat_tui.ui.app import ChatApp  # noqa: E402
from mcp_chat_tui.ui.screens.approval import ApprovalScreen  # noqa: E402
from mcp_chat_tui.ui.screens.detail import CallDetailScreen  # noqa: E402

DEMO_MODEL = REPO_ROOT / "mcp_chat_tui" / "demo" / "model"
SIZE = (140, 40)
CONVERSATION_SIZE = (80, 24)  # main.svg, approval.svg and call-detail.svg: a terminal as it opens
PROMPTS = ["what is 12 * 7?", "search the web for MLX", "what is 9 * 8?"]
DETAIL_TOOL = "web_search"
TIMEOUT = 300.0


def demo_server() -> ServerConfig:
    """The bundled mcp.json's entry, with ``${python}`` as this interpreter."""
    return ServerConfig(name="demo", type="stdio", command=sys.executable, args=["-m", "mcp_chat_tui.demo.server"])


def missing_server() -> ServerConfig:
    return ServerConfig(name="notes", type="stdio", command="mcp-notes-server")


def make_engine(scripted: bool, model: Path):
    if scripted:
        sys.path.insert(0, str(REPO_ROOT))
        from tests.fakes import ScriptedEngine, call

        return ScriptedEngine(
            [
                [call("calculator", {"expression": "12 * 7"}, "call_1")],
                "12 * 7 = 84",
                [call("current_time", {"timezone": "Asia/Tokyo"}, "call_2")],
                "It is 21:04 in Tokyo.",
                [call("web_search", {"query": "MLX"}, "call_3")],
                "MLX is an array framework for machine learning on Apple silicon.",
            ],
            delay=0.01,
        )
    from mcp_chat_tui.engine.mlx_engine import MlxEngine

    if not (model / "model.safetensors").exists():
        raise SystemExit(f"no model at {model} (train it with scripts/train_demo_model.py, or use --scripted)")
    return MlxEngine(str(model))


def make_app(engine, servers: list[ServerConfig], settings: Settings, label: str) -> ChatApp:
    return ChatApp(
        engine=engine, hub=ServerHub(servers), policy=ApprovalPolicy("ask"), settings=settings, model_label=label
    )


async def wait_for(pilot, predicate: Callable[[], bool], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await pilot.pause(0.05)


async def start(pilot, app: ChatApp) -> None:
    await wait_for(pilot, lambda: app.ready.is_set() or app.fatal_error is not None, "start-up")
    if app.fatal_error:
        raise SystemExit(f"the app could not start: {app.fatal_error}")
    for field in app.query(Input):  # the panes exist once the app is ready
        field.cursor_blink = False  # a screenshot must not catch the cursor half-way through a blink


async def send(pilot, app: ChatApp, text: str) -> None:
    prompt = app.query_one("#prompt", Input)
    prompt.focus()
    prompt.value = text
    await pilot.press("enter")


def turn_done(app: ChatApp) -> bool:
    return not app.turns.running and not app.reply.is_open


async def settle(pilot) -> None:
    """Let every pending message and animation finish before a screenshot."""
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def save(app: ChatApp, out: Path, name: str) -> Path:
    path = out / name
    app.save_screenshot(filename=name, path=str(out))
    print(f"wrote {path}")
    return path


async def conversation(engine, out: Path, label: str) -> list[str]:
    """main.svg, approval.svg and call-detail.svg from one conversation; returns the replies."""
    app = make_app(engine, [demo_server()], Settings(), label)
    async with app.run_test(size=CONVERSATION_SIZE) as pilot:
        await start(pilot, app)
        for prompt in PROMPTS:
            await send(pilot, app, prompt)
            while True:
                await wait_for(
                    pilot,
                    # a dialog takes keys once armed (ui/screens/deciding.py), and is pictured so
                    lambda: (isinstance(app.screen, ApprovalScreen) and app.screen.armed) or turn_done(app),
                    f"an approval or the answer to {prompt!r}",
                )
                if not isinstance(app.screen, ApprovalScreen):
                    break
                if not (out / "approval.svg").exists():
                    await settle(pilot)
                    save(app, out, "approval.svg")
                dialog = app.screen
                await pilot.press("y")
                # the next call of the same reply may ask at once: wait for this dialog, not for every one, to close
                await wait_for(pilot, lambda shown=dialog: app.screen is not shown, "the dialog to close")
        await settle(pilot)
        save(app, out, "main.svg")
        replies = [reply.text for reply in app.chat.query("AssistantReply")]
        records = list(app.calls_table.records.values())
        row = next((i for i, r in enumerate(records) if r.tool == DETAIL_TOOL), len(records) - 1)
        await pilot.press("f3")
        app.calls_table.move_cursor(row=row, animate=False)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallDetailScreen), "the call detail")
        await settle(pilot)
        save(app, out, "call-detail.svg")
        return replies


async def failed_server(engine, out: Path, label: str) -> None:
    missing = missing_server()
    app = make_app(engine, [demo_server(), missing], Settings(on_server_failure="continue"), label)
    async with app.run_test(size=SIZE) as pilot:
        await start(pilot, app)
        await wait_for(pilot, lambda: app.hub.status(missing.name).state is ServerState.FAILED, "the failed server")
        await pilot.press("f4")
        names = list(app.servers_table.statuses)
        app.servers_table.move_cursor(row=names.index(missing.name), animate=False)
        await wait_for(
            pilot,
            lambda: app.focused is app.servers_table and app.servers_table.selected_server() == missing.name,
            "the failed row selected",
        )
        await settle(pilot)
        save(app, out, "server-failed.svg")


async def argument_editor(out: Path) -> None:
    sys.path.insert(0, str(REPO_ROOT))
    from mcp_chat_tui.ui.screens.edit_arguments import EditArgumentsScreen
    from tests.fakes import ScriptedEngine, call

    engine = ScriptedEngine([[call("web_search", {"query": "MLX", "max_results": 3}, "call_1")], "Found it."])
    app = make_app(engine, [demo_server()], Settings(), "scripted")
    async with app.run_test(size=CONVERSATION_SIZE) as pilot:
        await start(pilot, app)
        await send(pilot, app, "search the web for MLX")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.armed, "the approval")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditArgumentsScreen), "the argument editor")
        for widget in app.screen.query(Input):
            widget.cursor_blink = False
        app.screen.query_one("#field-0", Input).value = "MLX on Linux"
        await settle(pilot)
        save(app, out, "argument-editor.svg")


async def elicitation_form(out: Path) -> None:
    sys.path.insert(0, str(REPO_ROOT))
    from mcp_chat_tui.ui.screens.requests import ElicitFormScreen
    from tests.fakes import ScriptedEngine, call

    asking = ServerConfig(
        name="newsletter",
        type="stdio",
        command=sys.executable,
        args=[str(REPO_ROOT / "tests/servers/asking_server.py")],
    )
    engine = ScriptedEngine([[call("sign_up", {}, "call_1")], "You are signed up."])
    app = ChatApp(
        engine=engine, hub=ServerHub([asking]), policy=ApprovalPolicy("auto"), settings=Settings(), model_label="demo"
    )
    async with app.run_test(size=SIZE) as pilot:
        await start(pilot, app)
        await send(pilot, app, "sign me up for the newsletter")
        await wait_for(pilot, lambda: isinstance(app.screen, ElicitFormScreen) and app.screen.armed, "the form, armed")
        for widget in app.screen.query("Input"):
            widget.cursor_blink = False
        app.screen.query_one("#field-0", Input).value = "Ada Lovelace"
        app.screen.query_one("#field-1", Input).value = "ada@example"
        await pilot.press("ctrl+s")
        await settle(pilot)
        save(app, out, "elicitation.svg")


async def image_result(out: Path) -> None:
    """A tool result with an image, drawn in the chat card (tests/servers/results_server.py: the
    demo model has no tool that returns one, so a scripted model calls it)."""
    sys.path.insert(0, str(REPO_ROOT))
    from tests.fakes import ScriptedEngine, call

    server = ServerConfig(
        name="pictures",
        type="stdio",
        command=sys.executable,
        args=[str(REPO_ROOT / "tests" / "servers" / "results_server.py")],
    )
    engine = ScriptedEngine([[call("photo", {}, "call_1")], "Here is the picture the tool made."], delay=0.01)
    app = ChatApp(
        engine=engine,
        hub=ServerHub([server]),
        policy=ApprovalPolicy("auto"),
        settings=Settings(),
        model_label="scripted",
    )
    async with app.run_test(size=SIZE) as pilot:
        await start(pilot, app)
        await send(pilot, app, "make me a picture")
        await wait_for(pilot, lambda: turn_done(app) and app.chat.query("HalfcellImage"), "the image result")
        await settle(pilot)
        save(app, out, "image-result.svg")


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="mct-screenshots-") as scratch:
        for kind in ("CONFIG", "DATA", "LOG"):
            os.environ[f"MCP_CHAT_TUI_{kind}_DIR"] = str(Path(scratch) / kind.lower())
        await make_screenshots()


async def make_screenshots() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scripted", action="store_true", help="a scripted model instead of the demo model")
    parser.add_argument("--model", type=Path, default=DEMO_MODEL, help="the MLX model folder (default: the demo model)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "screenshots", help="where the SVGs go")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in (
        "main.svg",
        "approval.svg",
        "call-detail.svg",
        "server-failed.svg",
        "argument-editor.svg",
        "elicitation.svg",
        "image-result.svg",
    ):
        (args.out / name).unlink(missing_ok=True)
    label = "scripted" if args.scripted else ("demo model" if args.model == DEMO_MODEL else args.model.name)
    replies = await conversation(make_engine(args.scripted, args.model), args.out, label)
    for prompt, reply in zip(PROMPTS, replies, strict=False):
        print(f"{prompt!r} -> {reply!r}")
    await failed_server(make_engine(args.scripted, args.model), args.out, label)
    await argument_editor(args.out)
    await elicitation_form(args.out)
    await image_result(args.out)


if __name__ == "__main__":
    asyncio.run(main())
