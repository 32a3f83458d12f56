"""The prompts sent and the turns they start (a typed line routed, prompts queued behind the turn under
way, ``/compact``, ``/retry``, a loaded conversation's open turn): a helper ``ChatApp`` composes.

The turns run one after another in one worker (group ``turns``), started by the first prompt and
ending when none waits; the summaries of exchanges leaving the window are written between turns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from textual.app import App

from mcp_chat_tui.agent import Agent
from mcp_chat_tui.conversation import NOTHING_TO_COMPACT, RETRY_BUSY, RETRY_LINE, Conversation, Route, route_line
from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.text import visible_controls
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.ui.agent_events import AgentEventView
from mcp_chat_tui.ui.call_store import CallStore
from mcp_chat_tui.ui.catalog_controls import CatalogControls
from mcp_chat_tui.ui.model_controls import ModelControls
from mcp_chat_tui.ui.queued_prompt import QueuedPrompt
from mcp_chat_tui.ui.server_controls import ServerControls
from mcp_chat_tui.ui.widgets.attachments import reading_message, user_message
from mcp_chat_tui.ui.widgets.chat import ChatLog, Notice
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.status import StatusBar


class SavingStart(Protocol):
    """What the turns ask of ``ConversationActions`` (which itself takes the turns)."""

    def attach_saver(self, first_prompt: str = "") -> None: ...


class TurnHost(Protocol):
    """What of the app the turns use: the services, the panes they show in, the other helpers a
    typed line goes to, and the agent event view's opening of a reply and hold of the frames."""

    @property
    def agent(self) -> Agent: ...

    @property
    def hub(self) -> ServerHub: ...

    @property
    def conversation(self) -> Conversation: ...

    @property
    def ready(self) -> asyncio.Event: ...  # set once the model is loaded and the servers have settled

    @property
    def chat(self) -> ChatLog: ...

    @property
    def status_bar(self) -> StatusBar: ...

    @property
    def model_controls(self) -> ModelControls: ...

    @property
    def catalog_controls(self) -> CatalogControls: ...

    @property
    def server_controls(self) -> ServerControls: ...

    @property
    def call_store(self) -> CallStore: ...

    @property
    def agent_view(self) -> AgentEventView: ...  # the agent's events: a reply opened, the frames Enter held

    @property
    def conversation_view(self) -> SavingStart: ...  # saving starts with a new conversation's first prompt

    async def action_quit(self, return_code: int = 0) -> None: ...


class TurnQueue:
    """Routes what is typed in the prompt box and runs the turns it asks for, one at a time.

    Args:
        app: Where it says what happened, runs the turns' worker (and ``/call``'s) and finds the prompt box.
        host: What of the app the turns use (``TurnHost``): ``ChatApp`` itself.
    """

    def __init__(self, app: App[Any], host: TurnHost) -> None:
        self.app = app
        self.host = host
        self._queue: list[QueuedPrompt] = []  # prompts waiting, with their attachments
        self.running = False  # the turns' worker runs, or is about to
        self._compact_asked = False  # /compact was typed: summarise every exchange but the last next
        self._retry_asked = False  # /retry or Ctrl+R: the last reply is asked again next
        self.resume_pending = False  # the loaded conversation's last reply goes on (Transcript.turn_goes_on)

    async def submitted(self, text: str) -> None:
        """Enter in the prompt (which holds the frames until what it sent is shown): a turn that
        starts now lets them go once its reply is open (``AgentEventView.open_reply``), anything else here."""
        host = self.host
        was_running = self.running
        try:
            await self.send(text)
        finally:
            if was_running or not host.agent_view.opening_reply:  # this Enter started no turn
                host.agent_view.let_frames_go()

    async def send(self, text: str) -> None:
        """Send a prompt (or leave, for ``bye`` and ``quit``); it waits for the turn before it."""
        host, app = self.host, self.app
        routed = await route_line(text, host.agent.redactor, host.hub.roots_command)  # as the conversation keeps it
        if routed.route is Route.NOTHING:
            return
        if routed.route is Route.LEAVE:
            await host.action_quit()
            return
        prompt, prompt_box = routed.text, app.query_one(PromptInput)
        prompt_box.remember(prompt)
        if routed.route is Route.ROOTS:  # /roots: the folders servers may work in, changed here
            app.notify(visible_controls(routed.said), title="roots", markup=False, timeout=8)
        elif routed.route is Route.COMPACT:
            self.compact()
        elif routed.route is Route.RETRY:
            self.retry()
        elif routed.route is Route.MODEL:
            host.model_controls.typed(prompt)
        elif routed.route is Route.CALL:
            app.run_worker(host.server_controls.call_typed(prompt), group="own-call")
        elif routed.route is Route.COMMAND:
            host.catalog_controls.run_prompt_command(prompt)  # the turn is queued once the server gave the prompt
        else:
            await self.queue_prompt(prompt_box.take_queued(prompt))

    async def queue_turn(self, prompt: str, attachments: Sequence[Attachment] = ()) -> None:
        """Show the prompt and queue its turn; it runs after the turns before it."""
        await self.queue_prompt(QueuedPrompt(prompt, [("", attachment) for attachment in attachments]))

    async def queue_prompt(self, queued: QueuedPrompt) -> None:
        host = self.host
        if not host.conversation.saving:
            self.host.conversation_view.attach_saver(queued.prompt)  # the first prompt names the file
        queued.shown = reading_message(queued) if queued.reading else user_message(queued.prompt, queued.attachments)
        await host.chat.add_prompt(queued.shown)
        self._queue.append(queued)
        host.status_bar.waiting = len(self._queue)
        if not self.running:
            host.agent_view.opening_reply = True
            self.start()

    def start(self) -> None:
        """Start the turns' worker, ``running`` from now (callers start it only when it is not)."""
        self.running = True
        self.app.run_worker(self._run(), group="turns")

    def start_if_owed(self) -> None:
        """Start the turns for a loaded file's open turn or the summaries due, unless they run already."""
        if (self.resume_pending or self.host.agent.summaries_due) and not self.running:
            self.start()

    async def _run(self) -> None:
        host = self.host
        try:
            if self.resume_pending:
                await host.ready.wait()
                await self._continue_pending()
            if self._retry_asked:
                await self._retry()
            if self._compact_asked or not self._queue:  # a loaded file's, or /compact's; else after the turn
                await self._write_summaries()
            while self._queue:
                await host.ready.wait()  # a prompt sent during start-up waits, counted in the status bar
                await host.model_controls.settled()  # and one sent while /model loads goes to the model it leaves
                queued = self._queue.pop(0)
                host.status_bar.waiting = len(self._queue)
                if queued.reading and not await host.catalog_controls.wait_for_reads(queued):
                    continue  # not sent: said, and given back to the prompt box
                prompt, attachments = queued.prompt, queued.attachments
                await host.agent_view.open_reply()
                await host.agent_view.wait_until_drawn()
                await host.agent.run_turn(prompt, host.agent_view.sink, attachments)
                await self._write_summaries()
        finally:
            self.running = host.agent_view.opening_reply = False
            host.agent_view.let_frames_go()

    async def _continue_pending(self) -> None:
        """Finish the calls the file left open, then let the model answer. Nothing runs on the file's
        word alone ("always" choices in it grant nothing either): the agent asks again, or says
        interrupted; a call with a result is never run again."""
        self.resume_pending = False
        await self.host.conversation.continue_open_turn(self.host.agent_view.sink, self.host.call_store.resumed)

    def drop_waiting(self) -> str:
        """Before the chat is cleared or replaced: the prompts waiting (shown in the chat being cleared) and a
        loaded file's open turn are dropped; a prompt waiting for its @resources goes back to the
        prompt box. Returns the notice's note on the prompts dropped ("" when none)."""
        dropped = len(self._queue)
        self._queue.clear()
        self.host.status_bar.waiting = 0
        self.resume_pending = False
        self.host.catalog_controls.stop_waiting_for_reads()
        return f" ({dropped} waiting prompt{'s' if dropped != 1 else ''} dropped)" if dropped else ""

    def compact(self) -> None:
        """``/compact``: every exchange but the last gets its summary now and leaves the window
        (after the reply under way, if one is)."""
        if not self.host.conversation.can_compact:
            self.app.notify(NOTHING_TO_COMPACT, markup=False)
            return
        self._compact_asked = True
        if self.running:
            self.app.notify("/compact runs when the reply under way ends", markup=False)
            return
        self.start()

    def retry(self) -> None:
        """``/retry`` and Ctrl+R: the last reply is discarded (kept in the file as discarded, its calls
        not undone) and the model asked again (agent/retrying.py); not while a turn runs."""
        busy = self.running or self.resume_pending
        problem = RETRY_BUSY if busy else self.host.conversation.retry_problem()
        if problem is not None:
            self.app.notify(problem, markup=False)
            return
        self._retry_asked = True
        self.start()

    async def _retry(self) -> None:
        """The retry the worker was asked for: the chat says the reply above is discarded, shows the
        prompt again, and opens the new reply."""
        host = self.host
        self._retry_asked = False
        await host.ready.wait()
        exchange = host.conversation.transcript.exchanges[-1]
        await host.chat.mount(Notice(RETRY_LINE, muted=True))
        await host.chat.add_prompt(user_message(exchange.user, exchange.attachments))
        await host.agent_view.open_reply()
        await host.agent_view.wait_until_drawn()
        await host.conversation.retry(host.agent_view.sink)
        await self._write_summaries()

    async def _write_summaries(self) -> None:
        """Between turns: the summaries of the exchanges leaving the window (all but the last after
        ``/compact``); Esc stops them."""
        compact, self._compact_asked = self._compact_asked, False
        if compact or self.host.agent.summaries_due:
            await self.host.ready.wait()
            await self.host.conversation.write_summaries(self.host.agent_view.sink, compact=compact)
