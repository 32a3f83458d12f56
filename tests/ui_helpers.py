"""Building the real app for Pilot tests: real servers, a scripted or real engine, a frozen clock."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import Settings
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.ui.app import ChatApp
from mcp_chat_tui.ui.format import FrozenClock
from tests.helpers import demo_config

SIZE = (140, 40)


def make_app(
    engine,
    servers=None,
    *,
    policy=None,
    settings=None,
    settings_file: Path | None = None,
    theme_dirs=None,
    frozen=True,
    hub: ServerHub | None = None,
    **options,
) -> ChatApp:
    hub = hub or ServerHub(servers if servers is not None else [demo_config()])
    return ChatApp(
        engine=engine,
        hub=hub,
        policy=policy or ApprovalPolicy("ask"),
        settings=settings or Settings(),
        settings_file=settings_file,
        clock=FrozenClock() if frozen else None,
        theme_dirs=theme_dirs,
        **options,
    )


async def wait_for(pilot, predicate, timeout: float = 20.0, what: str = "condition") -> None:
    """Wait until ``predicate()`` holds once the app's screen is up to date (as ``pilot.pause`` leaves it:
    every widget's messages handled, a frame drawn); fails naming ``what`` did not happen.

    Between looks it only sleeps, and brings the screen up to date when the predicate holds, then
    looks again: a pause at every look (every 50 ms) handed a message to each widget of the screen
    and drew a frame, about 4 ms of CPU each, four times what the app itself spends meanwhile."""
    if predicate():
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        if predicate():
            await pilot.pause(0)
            if predicate():
                return
    await pilot.pause(0)
    if not predicate():
        raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def dialog_armed(app: ChatApp, kind: type) -> bool:
    """A ``kind`` dialog is on top and takes keys: one that decides something is armed 0.5 s after
    its first frame (ui/screens/deciding.py), and a key pressed before then answers nothing."""
    return isinstance(app.screen, kind) and getattr(app.screen, "armed", True)


def record_states(app: ChatApp) -> list[str]:
    """Every state the status bar shows from now on, in order, as each is set: a test asserts on
    the states a turn went through, not on catching a brief one on screen while polling."""
    states: list[str] = []

    def shown(state: str) -> None:
        states.append(state)

    app.status_bar.watch(app.status_bar, "engine_state", shown, init=False)
    return states


async def wait_ready(pilot, app: ChatApp) -> None:
    await wait_for(pilot, lambda: app.ready.is_set() or app.fatal_error is not None, 30, "start-up")


async def send(pilot, text: str) -> None:
    app = pilot.app
    prompt = app.query_one("#prompt")
    prompt.focus()
    prompt.value = text
    await pilot.press("enter")


async def wait_turn_done(pilot, app: ChatApp, timeout: float = 30.0, *, left_in_prompt: str = "") -> None:
    """Wait until every prompt sent (and every call a resumed file left open) has had its whole turn:
    taken from the prompt line (which then holds only ``left_in_prompt``, text typed and not sent),
    given to the agent, answered, and its reply closed."""
    from mcp_chat_tui.ui.widgets.chat import UserMessage

    prompt_line = app.query_one("#prompt")

    def done() -> bool:
        asked = sum(1 for message in app.agent.messages if message["role"] == "user")
        shown = len(app.chat.query(UserMessage))
        idle = not app.turns._queue and not app.turns.resume_pending and not app.turns.running and not app.reply.is_open
        return idle and prompt_line.value == left_in_prompt and asked >= shown

    await wait_for(pilot, done, timeout, "the turn to finish")


def chat_text(app: ChatApp) -> str:
    """Everything the chat pane shows, as plain text (replies by their Markdown source)."""
    from textual.widgets import Markdown, Static

    from mcp_chat_tui.ui.widgets.reply import AssistantReply

    parts = []
    for widget in app.query_one("#chat").query("*"):
        if isinstance(widget, AssistantReply):
            parts.append(widget.text)
        elif (
            isinstance(widget, Static)
            and "reply-text" not in widget.classes
            and not isinstance(widget.parent, Markdown)
        ):
            parts.append(str(widget.render()))
    return "\n".join(parts)
