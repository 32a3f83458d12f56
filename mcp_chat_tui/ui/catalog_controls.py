"""What the app does with server prompts and resources: the ``/`` and ``@`` completion list, prompt
commands (with their argument form), ``@`` attachments, and the resources screen.

A helper ``ChatApp`` composes; the ``@on`` handlers that call it stay on the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from textual.app import App
from textual.widget import Widget

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.local_files import LocalFile, completions, read_attachment
from mcp_chat_tui.servers import PromptCommand, PromptInfo, ResourceInfo, ServerHub, command_text, parse_command
from mcp_chat_tui.ui.completion import AppCommand, Candidate, candidates, starts_at_word
from mcp_chat_tui.ui.queued_prompt import QueuedPrompt, Read
from mcp_chat_tui.ui.screens.arguments import ArgumentsScreen, Field
from mcp_chat_tui.ui.screens.resources import ResourcesScreen, address_to_read
from mcp_chat_tui.ui.widgets.attachments import user_message
from mcp_chat_tui.ui.widgets.completion import CompletionMenu
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.status import EngineState

QueueTurn = Callable[[str, Sequence[Attachment]], Awaitable[None]]  # shows a prompt and queues its turn


class CatalogControls:
    """The servers' prompts and resources at the prompt box: completion, prompt commands, attachments.

    Args:
        app: Where it says what happened, opens forms and the resources screen, runs its work, and
            finds the prompt box (and the chat's column, where the completion list goes).
        hub: The servers whose prompts and resources these are.
        queue_turn: Shows a prompt command's messages as the user's prompt and queues its turn.
        engine_state: Sets what the status bar says (a prompt waiting for its reads).
    """

    def __init__(self, app: App[Any], hub: ServerHub, queue_turn: QueueTurn, engine_state: EngineState) -> None:
        self.app = app
        self.hub = hub
        self._queue_turn = queue_turn
        self._engine_state = engine_state
        self._stop_reading: asyncio.Future[None] | None = None  # set: Esc while a prompt waits for its reads

    def _completion_menu(self, prompt: PromptInput) -> CompletionMenu:
        """The list above the prompt box (mounted the first time it is needed)."""
        if prompt.menu is None:
            prompt.menu = CompletionMenu(id="completion")
            self.app.query_one("#chat-column").mount(prompt.menu, before="#input-row")
        return prompt.menu

    def offer_completions(self, prompt: PromptInput) -> None:
        """List what the text at the cursor may become (prompts after ``/``, resources and files after
        ``@``); not for an earlier prompt recalled with Up or Down, until it is edited."""
        if prompt.value == prompt.recalled:
            if prompt.menu is not None:
                prompt.menu.close()
            return
        resources = self.hub.resources() + self.hub.resource_templates()
        found = candidates(
            prompt.value,
            prompt.cursor_position,
            self.hub.prompts(),
            resources,
            lambda typed: completions(typed, Path.cwd(), self.hub.roots.shared),
        )
        if found or prompt.menu is not None:
            self._completion_menu(prompt).offer(found)
        if not found and starts_at_word(prompt.value, prompt.cursor_position):
            self.app.notify(
                "no server offers resources now and no file here to attach: nothing to attach with @",
                title="@",
                timeout=5,
            )

    def take_completion(self, candidate: Candidate) -> None:
        """A prompt chosen from the list is written out (its form opens when it takes arguments);
        a resource is read and attached to the message being written."""
        self.app.run_worker(self._take_completion(candidate), group="catalog")

    async def _take_completion(self, candidate: Candidate) -> None:
        prompt = self.app.query_one(PromptInput)
        prompt.value, prompt.cursor_position = candidate.apply(prompt.value)
        item = candidate.item
        if isinstance(item, AppCommand):
            return  # written out: Enter sends it
        if isinstance(item, PromptInfo):
            if item.arguments:
                await self._run_command(PromptCommand(item), typed=prompt.value.strip())
            return
        if isinstance(item, LocalFile):
            if item.folder:
                self.offer_completions(prompt)  # on into the folder
            else:
                await self._attach_file(prompt, item, candidate.name)
            return
        await self._attach_resource(prompt, item, candidate.name)

    async def _attach_file(self, prompt: PromptInput, item: LocalFile, word: str) -> None:
        """A text file from the disk attached to the message being written (a binary one refused)."""
        read = await asyncio.to_thread(read_attachment, item.shown, Path.cwd(), self.hub.roots.shared)
        if isinstance(read, str):
            self.app.notify(read, title=f"{word} not attached", severity="error", markup=False)
            return
        prompt.attached.append((word, read))
        self.app.notify(f"attached {read.label()}", markup=False)

    async def _attach_resource(self, prompt: PromptInput, item: ResourceInfo, word: str) -> None:
        uri = await address_to_read(self.app, self.hub, item)
        if uri is None:
            return
        read: asyncio.Future[list[Attachment] | str] = asyncio.get_running_loop().create_future()
        prompt.reading[word] = read  # a prompt sent before the read ends takes it along
        contents: list[Attachment] | str = "the read was cancelled"
        try:
            contents = await self.hub.read_resource(item.server, uri, item.name)
        except UserFacingError as exc:
            contents = str(exc)
        finally:
            read.set_result(contents)
        if prompt.reading.get(word) is read:  # no prompt took it: it waits for the next one
            del prompt.reading[word]
            if not isinstance(contents, str):
                prompt.attached += [(word, content) for content in contents]
        if isinstance(contents, str):
            self.app.notify(contents, title=f"{word} not attached", severity="error", markup=False)
        else:
            self.app.notify(f"attached {item.server} › {uri}", markup=False)

    def run_prompt_command(self, text: str) -> None:
        """A typed ``/server:prompt key=value``: its form when a required argument is missing, then
        the prompt's messages become the user's turn."""
        self.app.run_worker(self._run_prompt_command(text), group="catalog")

    async def _run_prompt_command(self, text: str) -> None:
        try:
            command = parse_command(text, self.hub.prompts())
        except UserFacingError as exc:
            self.app.notify(str(exc), title="not sent", severity="error", markup=False, timeout=8)
            self.app.query_one(PromptInput).put_back(text)  # nothing typed is lost
            return
        await self._run_command(command, typed=text, ask=bool(command.missing))

    async def _run_command(self, command: PromptCommand, *, typed: str, ask: bool = True) -> None:
        prompt_box = self.app.query_one(PromptInput)
        if ask:
            values = await self.app.push_screen_wait(arguments_form(self.hub, command))
            if values is None:
                prompt_box.put_back(typed)  # cancelled: the command stays to edit
                return
            command.arguments = values
        try:
            text, attachments = await self.hub.get_prompt(command.prompt, command.arguments)
        except UserFacingError as exc:
            self.app.notify(str(exc), title="not sent", severity="error", markup=False, timeout=8)
            prompt_box.put_back(typed)
            return
        if prompt_box.value.strip() == typed:  # not if something else is being written by now
            prompt_box.value = ""
        if ask:
            prompt_box.remember(command_text(command.prompt, command.arguments))
        await self._queue_turn(text, attachments)

    async def wait_for_reads(self, queued: QueuedPrompt) -> bool:
        """Wait for the resources a prompt was sent with while they were still being read (the
        status bar and the prompt's lines say so; Esc stops waiting). True: the prompt goes with
        them all. False: a read failed or Esc: the prompt is not sent, which is said, and it goes
        back to the prompt box with what it carried."""
        self._engine_state("reading", f"{', '.join(queued.reading)}… (Esc: do not send)")
        stop = self._stop_reading = asyncio.get_running_loop().create_future()
        pending: set[Read] = set(queued.reading.values())
        try:
            while pending and not stop.done():
                await asyncio.wait(pending | {stop}, return_when=asyncio.FIRST_COMPLETED)
                pending = {read for read in pending if not read.done()}
        finally:
            self._stop_reading = None
        failures = queued.failures() if not pending else {}
        if not pending and not failures:
            queued.take_reads()
            await self._show_sent(queued)
            return True
        if failures:
            why = "; ".join(f"{word} could not be read: {error}" for word, error in failures.items())
            back = "the message is back in the prompt box: send it again, or without the word"
            self.app.notify(f"{why}; {back}", title="not sent", severity="error", markup=False, timeout=12)
        else:
            waited = ", ".join(pending_words(queued))
            self.app.notify(
                f"stopped waiting for {waited}; the message is back in the prompt box", title="not sent", markup=False
            )
        if queued.shown is not None and queued.shown.is_attached:  # not if the chat has trimmed it since
            await queued.shown.remove()
        self.app.query_one(PromptInput).give_back(queued)
        self._engine_state("ready", "")
        return False

    async def _show_sent(self, queued: QueuedPrompt) -> None:
        """The prompt's message in the chat, now with every attachment."""
        shown = queued.shown
        queued.shown = user_message(queued.prompt, queued.attachments)
        if shown is not None and shown.is_attached and isinstance(shown.parent, Widget):
            await shown.parent.mount(queued.shown, after=shown)
            await shown.remove()

    def stop_waiting_for_reads(self) -> bool:
        """Esc while a prompt waits for its resources: it is not sent. False when none waits."""
        if self._stop_reading is None or self._stop_reading.done():
            return False
        self._stop_reading.set_result(None)
        return True

    def open_resources(self, server: str | None = None) -> None:
        """The resources screen (``o`` on a server: that server's first)."""
        self.app.push_screen(ResourcesScreen(self.hub, server))


def pending_words(queued: QueuedPrompt) -> list[str]:
    return [word for word, read in queued.reading.items() if not read.done()]


def arguments_form(hub: ServerHub, command: PromptCommand) -> ArgumentsScreen:
    """The form for a prompt's arguments (what was typed filled in), each completed through the server."""
    prompt = command.prompt

    async def complete(name: str, value: str, context: dict[str, str]) -> list[str]:
        return await hub.complete_argument(prompt.server, prompt, name, value, context)

    fields = [
        Field(arg.name, arg.description, arg.required, command.arguments.get(arg.name, "")) for arg in prompt.arguments
    ]
    return ArgumentsScreen(prompt.command, prompt.description, fields, complete)
