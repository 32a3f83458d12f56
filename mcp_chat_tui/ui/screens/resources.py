"""The resources screen: every server's resources and resource templates, and a preview of one.

Opened from the server panel (``o``) and the command palette. Enter previews the highlighted
resource (a template first asks for its variables; an image is drawn), ``s`` saves its images and
audio; the previewed resource is subscribed to where its server allows, and the list and the
preview follow the server's changes. The subscription is let go when another resource is previewed
and when the screen closes (the hub unsubscribes once nothing holds it).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from mcp_chat_tui.core.attachments import size_text
from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.media_info import save_all_media
from mcp_chat_tui.servers import CatalogError, ResourceInfo, ServerHub
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.screens.arguments import ArgumentsScreen, Field
from mcp_chat_tui.ui.widgets.attachments import preview
from mcp_chat_tui.ui.widgets.scrolling import Scroll
from mcp_chat_tui.ui.widgets.sidebar import ListTable


class CatalogChanged(Message):
    """A server's resources changed, or a subscribed one was updated (from the hub's observer)."""


class ResourcesScreen(ModalScreen[None]):
    CSS_PATH = Path(__file__).with_name("resources.tcss")
    BINDINGS = [
        Binding("escape,q", "dismiss", "Close", id="resources.close"),
        Binding("enter", "preview", "Preview", show=False, id="resources.preview"),
        Binding("s", "save_media", "Save images and audio", show=False, id="resources.save_media"),
    ]
    KEYS = "[b]Enter[/] preview  [b]Esc[/] or [b]q[/] close"

    def __init__(self, hub: ServerHub, server: str | None = None) -> None:
        super().__init__()
        self.hub = hub
        self.server = server  # the one server shown first (from the server panel)
        self.items: dict[str, ResourceInfo] = {}
        self.previewed: tuple[ResourceInfo, str] | None = None  # (resource, the URI read)
        self.previewed_media: list[ContentPart] = []  # its images and audio, which ``s`` saves
        self.updates_seen = 0
        self.held: tuple[str, str] | None = None  # the subscription this screen holds: (server, URI)

    def compose(self) -> ComposeResult:
        with Vertical(classes="resources-box"):
            yield Static(literal("Resources", "bold"), classes="resources-title")
            yield ListTable(id="resources")
            yield Static("", id="resource-title")
            with Scroll(id="resource-body"):
                yield Static(literal("Enter previews the highlighted resource."), classes="resource-preview")
            yield Static(self.KEYS, classes="resources-keys")

    def on_mount(self) -> None:
        table = self.query_one("#resources", ListTable)
        for key, label in (("server", "server"), ("name", "name"), ("uri", "URI"), ("type", "type"), ("size", "size")):
            table.add_column(label, key=key)
        self.fill()
        self.hub.add_observer(self._observed)

    def on_unmount(self) -> None:
        self.hub.remove_observer(self._observed)
        if self.held is not None:  # the screen's own workers end with it: the app's runs this
            self.app.run_worker(self.hub.unsubscribe_resource(*self.held), group="resource-unsubscribe")
            self.held = None

    def _observed(self, _status: Any) -> None:
        self.post_message(CatalogChanged())

    def fill(self) -> None:
        """The rows from the hub's current lists (the cursor stays on the same resource)."""
        table = self.query_one("#resources", ListTable)
        current = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value if table.row_count else None
        items = self.hub.resources() + self.hub.resource_templates()
        items.sort(key=lambda item: item.server != self.server)  # stable: the chosen server's first
        self.items = {f"{item.server}\0{item.template or item.uri}": item for item in items}
        table.clear()
        for key, item in self.items.items():
            table.add_row(
                literal(item.server, "dim"),
                literal(item.title or item.name, "bold"),
                literal(item.template or item.uri),
                literal(item.mime_type or ("template" if item.is_template else ""), "dim"),
                Text(size_text(item.size) if item.size is not None else ("template" if item.is_template else "")),
                key=key,
            )
        if not self.items:
            self.query_one("#resource-title", Static).update(literal("No server offers resources."))
        if current in self.items:
            table.move_cursor(row=table.get_row_index(current))

    @on(CatalogChanged)
    async def _catalog_changed(self) -> None:
        self.fill()
        if self.previewed is not None:
            item, uri = self.previewed
            if self._updates(item.server, uri) != self.updates_seen:
                await self.show(item, uri)

    def _updates(self, server: str, uri: str) -> int:
        try:
            return self.hub.status(server).resource_updates.get(uri, 0)
        except KeyError:
            return 0

    @on(DataTable.RowSelected, "#resources")
    def _selected(self, message: DataTable.RowSelected) -> None:
        self._preview_key(message.row_key.value)

    def action_preview(self) -> None:
        table = self.query_one("#resources", ListTable)
        if table.row_count:
            self._preview_key(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def _preview_key(self, key: str | None) -> None:
        item = self.items.get(key or "")
        if item is not None:
            self.open(item)

    @work(group="resource-preview", exclusive=True)
    async def open(self, item: ResourceInfo) -> None:
        uri = await address_to_read(self.app, self.hub, item)
        if uri is None:
            return
        await self._hold(item.server, uri)
        await self.show(item, uri)

    async def _hold(self, server: str, uri: str) -> None:
        """Subscribe to the resource now shown, then let go of the one shown before."""
        before = self.held  # still held (and let go at unmount) should this preview be cancelled
        self.held = (server, uri) if await self.hub.subscribe_resource(server, uri) else None
        if before is not None:
            await self.hub.unsubscribe_resource(*before)

    async def show(self, item: ResourceInfo, uri: str) -> None:
        self.previewed = (item, uri)
        self.updates_seen = self._updates(item.server, uri)
        body = self.query_one("#resource-body", VerticalScroll)
        title = self.query_one("#resource-title", Static)
        try:
            contents = await self.hub.read_resource(item.server, uri, item.name)
        except CatalogError as exc:
            self.previewed_media = []
            self.query_one(".resources-keys", Static).update(self.KEYS)
            title.update(literal(str(exc), "bold red"))
            await body.remove_children()
            return
        title.update(literal(f"{item.server} › {uri}", "bold"))
        self.previewed_media = [content.media for content in contents if content.media is not None]
        save = "[b]s[/] save images and audio  " if self.previewed_media else ""
        self.query_one(".resources-keys", Static).update(self.KEYS.replace("[b]Esc", save + "[b]Esc"))
        await body.remove_children()
        await body.mount_all([preview(content) for content in contents] or [Static(literal("(no contents)"))])

    async def action_save_media(self) -> None:
        """Save each image and audio of the previewed resource to a new file in the working directory
        (never over an existing one, off the screen's thread), as a call's detail screen saves a result's."""
        if self.previewed is None or not self.previewed_media:
            self.notify("the previewed resource has no images or audio")
            return
        saved, problems = await asyncio.to_thread(
            save_all_media, self.previewed_media, Path.cwd(), self.previewed[0].name
        )
        if saved:
            self.notify(literal("saved " + ", ".join(saved)).plain, markup=False, timeout=10)
        if problems:
            self.notify(literal("; ".join(problems)).plain, severity="error", markup=False, timeout=10)


def variables_form(hub: ServerHub, item: ResourceInfo) -> ArgumentsScreen:
    """The form for a template's variables, each completed through the server."""

    async def complete(name: str, value: str, context: dict[str, str]) -> list[str]:
        return await hub.complete_argument(item.server, item, name, value, context)

    fields = [Field(name, required=True) for name in item.variables]
    return ArgumentsScreen(f"{item.server} › {item.template}", item.description, fields, complete)


async def address_to_read(app: App[Any], hub: ServerHub, item: ResourceInfo) -> str | None:
    """The address ``item`` is read at: its own, or its template's with the variables the person
    fills in (None: the form was closed)."""
    if not item.is_template:
        return item.uri
    values = await app.push_screen_wait(variables_form(hub, item))
    return None if values is None else item.expand(values)
