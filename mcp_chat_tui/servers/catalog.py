"""Each server's prompts, resources and resource templates: listed, kept fresh, read, got, completed.

``CatalogAccess`` is the part of ``ServerHub`` that does this through the SDK client the hub keeps for
each server. A server without the capability has none; a list that fails is noted in ``catalog_problems``
(like refused tools), never failing the server. Changes arrive as ``notifications/*/list_changed`` and
``resources/updated`` (2025-11-25) or on a ``subscriptions/listen`` stream (2026-07-28): one fresh reading each."""

from __future__ import annotations

import asyncio
import base64
import logging
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mcp_chat_tui.core.attachments import IMAGE, PROMPT, RESOURCE, Attachment, binary_placeholder
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.text import one_line
from mcp_chat_tui.servers.catalog_items import PromptArgumentInfo, PromptInfo, ResourceInfo
from mcp_chat_tui.servers.catalog_stream import CatalogStream
from mcp_chat_tui.servers.client_context import is_modern
from mcp_chat_tui.servers.results import (
    blob_text,
    content_part,
    resource_part,
    validation_problems,
    within_media_budget,
)

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

    from mcp_chat_tui.servers.runtime import ServerRuntime

log = logging.getLogger(__name__)

MAX_CATALOG_PAGES = 20  # pages read of each list; more are noted, not read
MAX_ATTACHMENT_CHARS = 100_000  # text of one resource the model is given, at most


class CatalogError(UserFacingError):
    """A prompt, read or completion that failed; the message names the server and what to do."""


@dataclass
class CatalogListing:
    prompts: list[PromptInfo] = field(default_factory=list)
    resources: list[ResourceInfo] = field(default_factory=list)
    templates: list[ResourceInfo] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


async def read_catalog(client: Client, server: str, redactor: Redactor, *, refresh: bool) -> CatalogListing:
    """Every page (at most ``MAX_CATALOG_PAGES``) of each list the server's capabilities offer."""
    listing = CatalogListing()
    capabilities = client.server_capabilities
    mode = "refresh" if refresh else "use"
    text = redactor.text
    if capabilities.prompts is not None:
        for prompt in await _pages(client.list_prompts, "prompts", "prompts", mode, listing.problems):
            listing.prompts.append(
                PromptInfo(
                    server,
                    prompt.name,
                    text(prompt.title or ""),
                    text(prompt.description or ""),
                    tuple(
                        PromptArgumentInfo(arg.name, text(arg.description or ""), bool(arg.required))
                        for arg in prompt.arguments or []
                    ),
                )
            )
    if capabilities.resources is not None:
        for item in await _pages(client.list_resources, "resources", "resources", mode, listing.problems):
            listing.resources.append(
                ResourceInfo(
                    server,
                    text(item.name),
                    uri=str(item.uri),
                    title=text(item.title or ""),
                    description=text(item.description or ""),
                    mime_type=item.mime_type or "",
                    size=item.size,
                )
            )
        templates = await _pages(
            client.list_resource_templates, "resource templates", "resource_templates", mode, listing.problems
        )
        for item in templates:
            listing.templates.append(
                ResourceInfo(
                    server,
                    text(item.name),
                    template=item.uri_template,
                    title=text(item.title or ""),
                    description=text(item.description or ""),
                    mime_type=item.mime_type or "",
                )
            )
    listing.problems = [text(problem) for problem in listing.problems]
    return listing


async def _pages(list_page: Any, what: str, attribute: str, mode: str, problems: list[str]) -> list[Any]:
    """Every item of one paginated list; a failure is noted in ``problems`` and keeps what was read."""
    items: list[Any] = []
    cursor: str | None = None
    try:
        for _ in range(MAX_CATALOG_PAGES):
            page = await list_page(cursor=cursor, cache_mode=mode if cursor is None else "use")
            items.extend(getattr(page, attribute))
            cursor = page.next_cursor
            if not cursor:
                return items
        problems.append(f"its {what} list has more than {MAX_CATALOG_PAGES} pages: only those were read")
    except Exception as exc:  # noqa: BLE001 - a broken list loses that list, never the server
        problems.append(f"listing its {what} failed: {_what_went_wrong(exc, 200)}")
    return items


async def _legacy_subscription(client: Client, uri: str, *, subscribe: bool) -> None:
    """``resources/subscribe`` or ``resources/unsubscribe`` (2025-11-25; deprecated at 2026-07-28 only)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if subscribe:
            await client.session.subscribe_resource(uri)
        else:
            await client.session.unsubscribe_resource(uri)


def _what_went_wrong(exc: Exception, limit: int) -> str:
    """An exception in a line; a result the SDK refused names its problems (``validation_problems``)."""
    if isinstance(exc, ValidationError):
        return one_line(f"the server sent a malformed result: {validation_problems(exc)}", limit)
    return one_line(str(exc) or type(exc).__name__, limit)


# ----- contents into attachments ---------------------------------------------------------------


def contents_attachment(
    contents: Any, server: str, redactor: Redactor, name: str = "", kind: str = RESOURCE
) -> Attachment:
    """One ``TextResourceContents`` or ``BlobResourceContents`` as an attachment (binary: a placeholder)."""
    import mcp_types

    mime = contents.mime_type or ""
    uri = str(contents.uri)
    original = contents.text if isinstance(contents, mcp_types.TextResourceContents) else blob_text(contents)
    if original is not None:  # text, or a blob declared text/* (decoded)
        text = redactor.text(original)
        if len(text) > MAX_ATTACHMENT_CHARS:
            text = text[:MAX_ATTACHMENT_CHARS] + f"\n[cut: {len(original)} characters in all]"
        return Attachment(kind, server, name, uri, mime, text)
    size = _blob_size(getattr(contents, "blob", ""))
    part = resource_part(contents, "")  # an image or audio keeps its bytes, bounded as a result's are
    return Attachment(
        IMAGE if mime.startswith("image/") else kind,
        server,
        name,
        uri,
        mime,
        binary_placeholder(mime, size),
        size,
        media=part if part.is_media else None,
    )


def within_budget(attachments: list[Attachment]) -> list[Attachment]:
    """The attachments of one prompt or one read with their images and audio bounded in all as a
    tool result's are (``within_media_budget``)."""
    kept = iter(within_media_budget([a.media for a in attachments if a.media is not None], "the attachments'"))
    return [replace(a, media=next(kept)) if a.media is not None else a for a in attachments]


def _blob_size(blob: str) -> int:
    try:
        return len(base64.b64decode(blob, validate=False))
    except (ValueError, TypeError):
        return len(blob) * 3 // 4


def prompt_turn(
    result: mcp_types.GetPromptResult, prompt: PromptInfo, arguments: dict[str, str], redactor: Redactor
) -> tuple[str, list[Attachment]]:
    """A prompt's messages as a user turn: their text joined, embedded resources and images attached,
    and first the command it came from (so the transcript keeps it)."""
    import mcp_types

    texts: list[str] = []
    attachments = [Attachment(PROMPT, prompt.server, prompt.name, arguments=dict(arguments))]
    for message in result.messages:
        content = message.content
        prefix = "" if message.role == "user" else f"({message.role}) "
        if isinstance(content, mcp_types.TextContent):
            texts.append(prefix + redactor.text(content.text))
        elif isinstance(content, mcp_types.EmbeddedResource):
            attachments.append(contents_attachment(content.resource, prompt.server, redactor))
        elif isinstance(content, (mcp_types.ImageContent, mcp_types.AudioContent)):
            size = _blob_size(content.data)
            kind = IMAGE if isinstance(content, mcp_types.ImageContent) else RESOURCE
            name = f"{content.type} from {prompt.name}"
            placeholder = binary_placeholder(content.mime_type, size)
            media = content_part(content, "")  # its bytes for the screen, as a result's image keeps them
            attachments.append(
                Attachment(kind, prompt.server, name, "", content.mime_type, placeholder, size, media=media)
            )
        elif isinstance(content, mcp_types.ResourceLink):
            texts.append(prefix + f"[resource link: {redactor.text(content.name)} {content.uri}]")
    return "\n\n".join(texts), within_budget(attachments)


# ----- the hub's part --------------------------------------------------------------------------


class CatalogAccess(CatalogStream):
    """What ``ServerHub`` does with prompts and resources (the hub provides ``_runtimes``, ``redactor``, ``_changed``)."""

    _runtimes: dict[str, ServerRuntime]
    redactor: Redactor

    def _changed(self, runtime: ServerRuntime, *, tools_changed: bool = False) -> None:  # provided by the hub
        raise NotImplementedError

    # ----- what there is ---------------------------------------------------------------------

    def prompts(self) -> list[PromptInfo]:
        """Every prompt of every usable server, in server order."""
        return [p for runtime in self._usable() for p in runtime.status.prompts]

    def resources(self) -> list[ResourceInfo]:
        return [r for runtime in self._usable() for r in runtime.status.resources]

    def resource_templates(self) -> list[ResourceInfo]:
        return [t for runtime in self._usable() for t in runtime.status.resource_templates]

    def has_resources(self) -> bool:
        return any(runtime.status.resources or runtime.status.resource_templates for runtime in self._usable())

    def _usable(self) -> list[Any]:
        return [runtime for runtime in self._runtimes.values() if runtime.status.state.usable]

    def _client(self, server: str) -> Client:
        runtime = self._runtimes.get(server)
        if runtime is None:
            known = ", ".join(self._runtimes) or "none"
            raise CatalogError(f"there is no server named {server!r} (servers: {known})")
        if not runtime.status.state.usable or runtime.client is None:
            raise CatalogError(f"server {server!r} is {runtime.status.state.value}; restart it and try again")
        client: Client = runtime.client
        return client

    # ----- reading ---------------------------------------------------------------------------

    async def get_prompt(self, prompt: PromptInfo, arguments: dict[str, str]) -> tuple[str, list[Attachment]]:
        """The prompt's messages as a user turn (text, attachments); raises ``CatalogError``."""
        client = self._client(prompt.server)
        try:
            result = await client.get_prompt(prompt.name, arguments)
        except Exception as exc:  # noqa: BLE001
            raise CatalogError(self._failed(f"getting prompt {prompt.command}", exc)) from None
        return prompt_turn(result, prompt, arguments, self.redactor)

    async def read_resource(self, server: str, uri: str, name: str = "") -> list[Attachment]:
        """Every content of one resource as attachments; raises ``CatalogError``."""
        client = self._client(server)
        try:
            result = await client.read_resource(uri, cache_mode="refresh")
        except Exception as exc:  # noqa: BLE001
            raise CatalogError(self._failed(f"reading {uri} from {server}", exc)) from None
        return within_budget(
            [contents_attachment(contents, server, self.redactor, name) for contents in result.contents]
        )

    async def complete_argument(
        self, server: str, ref: PromptInfo | ResourceInfo, argument: str, value: str, context: dict[str, str]
    ) -> list[str]:
        """Values the server suggests for an argument (none when it offers no completions or fails)."""
        import mcp_types

        runtime = self._runtimes.get(server)
        if runtime is None or runtime.client is None or "completions" not in runtime.status.capabilities:
            return []
        if isinstance(ref, PromptInfo):
            reference: Any = mcp_types.PromptReference(type="ref/prompt", name=ref.name)
        else:
            reference = mcp_types.ResourceTemplateReference(type="ref/resource", uri=ref.template)
        try:
            result = await runtime.client.complete(reference, {"name": argument, "value": value}, context or None)
        except Exception as exc:  # noqa: BLE001 - suggestions are a help, not a requirement
            log.info("completion of %s from %s failed: %s", argument, server, exc)
            return []
        return [self.redactor.text(v) for v in result.completion.values[:100]]

    async def subscribe_resource(self, server: str, uri: str) -> bool:
        """Hear when ``uri`` changes (``resources/updated``), where the server supports it. Each
        subscription that succeeded is one holder: ``unsubscribe_resource`` lets it go."""
        runtime = self._runtimes.get(server)
        if runtime is None:
            return False
        if uri in runtime.status.subscribed:  # one more holder of the same subscription
            runtime.status.subscribed[uri] += 1
            return True
        if runtime.client is None:
            return False
        capability = runtime.client.server_capabilities.resources
        if capability is None or not capability.subscribe:
            return False
        runtime.status.subscribed[uri] = 1
        if is_modern(runtime.client):
            await self._listen_again(runtime, runtime.client)  # with this resource too
            return True
        try:
            await _legacy_subscription(runtime.client, uri, subscribe=True)
        except Exception as exc:  # noqa: BLE001
            runtime.status.subscribed.pop(uri, None)
            log.info("subscribing to %s on %s failed: %s", uri, server, exc)
            return False
        return True

    async def unsubscribe_resource(self, server: str, uri: str) -> None:
        """One holder of ``uri``'s subscription lets go (the screen that showed it moved on or
        closed); the last one ends it: ``resources/unsubscribe`` on 2025-11-25, the listen stream
        opened again without it on 2026-07-28. A server stopped meanwhile ended it already."""
        runtime = self._runtimes.get(server)
        if runtime is None or uri not in runtime.status.subscribed:
            return
        runtime.status.subscribed[uri] -= 1
        if runtime.status.subscribed[uri] > 0:
            return
        del runtime.status.subscribed[uri]
        client = runtime.client
        if client is None or not runtime.status.state.usable:
            return
        try:
            if is_modern(client):
                await self._listen_again(runtime, client)
            else:
                await _legacy_subscription(client, uri, subscribe=False)
        except Exception as exc:  # noqa: BLE001 - at worst its updates keep coming
            log.info("unsubscribing from %s on %s failed: %s", uri, server, exc)

    async def _listen_again(self, runtime: ServerRuntime, client: Client) -> None:
        """A new listen stream for what is wanted now (none when nothing is), once it is acknowledged."""
        listening = self._watch_catalog(runtime, client)
        if listening is not None:
            await asyncio.wait({listening}, timeout=5.0)

    def _failed(self, what: str, exc: Exception) -> str:
        return self.redactor.text(f"{what} failed: {_what_went_wrong(exc, 300)}")

    # ----- keeping it fresh ------------------------------------------------------------------

    async def _read_catalog(self, runtime: ServerRuntime, client: Client, *, refresh: bool = False) -> None:
        listing = await read_catalog(client, runtime.config.name, self.redactor, refresh=refresh)
        status = runtime.status
        status.prompts, status.resources = listing.prompts, listing.resources
        status.resource_templates, status.catalog_problems = listing.templates, listing.problems

    def _catalog_message(self, runtime: ServerRuntime, message: Any) -> None:
        """A 2025-11-25 notification about prompts or resources (on 2026-07-28 the SDK hands the
        listen stream's events here too: the stream handles those)."""
        import mcp_types

        if runtime.client is None or is_modern(runtime.client):
            return
        if isinstance(message, (mcp_types.PromptListChangedNotification, mcp_types.ResourceListChangedNotification)):
            self._catalog_changed(runtime, runtime.client)
        elif isinstance(message, mcp_types.ResourceUpdatedNotification):
            self._resource_updated(runtime, str(message.params.uri))

    def _catalog_changed(self, runtime: ServerRuntime, client: Client) -> None:
        """Read the lists again, one reading at a time (a change during one causes one more)."""
        runtime.catalog_wanted = True
        if runtime.catalog_refresh is None or runtime.catalog_refresh.done():
            runtime.catalog_refresh = asyncio.get_running_loop().create_task(self._reread_catalog(runtime, client))

    async def _reread_catalog(self, runtime: ServerRuntime, client: Client) -> None:
        while runtime.catalog_wanted and runtime.client is client:
            runtime.catalog_wanted = False
            try:
                await self._read_catalog(runtime, client, refresh=True)
            except Exception as exc:  # noqa: BLE001
                problem = self.redactor.text(f"refreshing prompts and resources failed: {exc}")
                runtime.status.catalog_problems = [problem]
            self._changed(runtime, tools_changed=True)  # the built-in resource tools come and go with resources

    def _resource_updated(self, runtime: ServerRuntime, uri: str) -> None:
        runtime.status.resource_updates[uri] = runtime.status.resource_updates.get(uri, 0) + 1
        self._changed(runtime)
