"""The app's own tools for the model: ``list_resources`` and ``read_resource``.

Offered (under the server name ``BUILTIN_SERVER``, which mcp.json cannot hold) whenever a
usable server has resources or resource templates, so the model can read what servers offer,
resource links and embedded resources in tool results included. They are approved like any
tool and shown like any call.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any, Protocol

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.tools import BUILTIN_SERVER, FailureKind, ToolCallResult, ToolFailure, ToolSpec
from mcp_chat_tui.servers.catalog import CatalogError
from mcp_chat_tui.servers.catalog_items import ResourceInfo

__all__ = ["BUILTIN_SERVER", "builtin_specs", "call_builtin"]


class Resources(Protocol):
    """What the tools need of the hub."""

    def resources(self) -> list[ResourceInfo]: ...

    def resource_templates(self) -> list[ResourceInfo]: ...

    async def read_resource(self, server: str, uri: str, name: str = "") -> list[Attachment]: ...

    async def settle_catalog(self) -> None: ...


LIST_RESOURCES = "list_resources"
READ_RESOURCE = "read_resource"
READ_ONLY = {"readOnlyHint": True}


def builtin_specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            server=BUILTIN_SERVER,
            name=LIST_RESOURCES,
            description=(
                "List the resources (and resource templates) the connected MCP servers offer: "
                "server, name, uri, mimeType, size, description. Read one with read_resource."
            ),
            input_schema={
                "type": "object",
                "properties": {"server": {"type": "string", "description": "only this server's resources"}},
            },
            annotations=READ_ONLY,
        ),
        ToolSpec(
            server=BUILTIN_SERVER,
            name=READ_RESOURCE,
            description=(
                "Read one resource of an MCP server by its URI, as list_resources, a resource link or an "
                "embedded resource in a tool result gives it (server: the server that offers it)."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "the server that offers the resource"},
                    "uri": {"type": "string", "description": "the resource's URI"},
                },
                "required": ["server", "uri"],
            },
            annotations=READ_ONLY,
        ),
    ]


async def call_builtin(hub: Resources, tool: str, arguments: dict[str, Any]) -> ToolCallResult:
    """Run one built-in tool; a failure comes back in the result, never as an exception."""
    started_at, clock = datetime.now(), time.perf_counter()
    result = ToolCallResult(BUILTIN_SERVER, tool, dict(arguments), started_at, 0.0)
    try:
        if tool == LIST_RESOURCES:
            await hub.settle_catalog()  # a list a server just said changed is read first
            result.text = _listing(hub, arguments)
        elif tool == READ_RESOURCE:
            result.text = await _read(hub, arguments)
        else:
            result.failure = ToolFailure(FailureKind.UNKNOWN_TOOL, f"the app has no tool named {tool!r}")
    except CatalogError as exc:
        result.text, result.is_error = str(exc), True
    result.duration = time.perf_counter() - clock
    return result


def _listing(hub: Resources, arguments: dict[str, Any]) -> str:
    server = arguments.get("server") or None
    if server is not None and not isinstance(server, str):
        raise CatalogError("server must be a string (a server's name), or left out for every server")
    entries: list[dict[str, Any]] = []
    for item in hub.resources() + hub.resource_templates():
        if server is not None and item.server != server:
            continue
        entry: dict[str, Any] = {"server": item.server, "name": item.name}
        entry |= {"uriTemplate": item.template} if item.is_template else {"uri": item.uri}
        for key, value in (("mimeType", item.mime_type), ("size", item.size), ("description", item.description)):
            if value:
                entry[key] = value
        entries.append(entry)
    if server is not None and not entries:
        names = sorted({item.server for item in hub.resources() + hub.resource_templates()})
        raise CatalogError(f"server {server!r} has no resources; servers with resources: {', '.join(names)}")
    return json.dumps(entries, ensure_ascii=False, indent=1)


async def _read(hub: Resources, arguments: dict[str, Any]) -> str:
    server, uri = arguments.get("server"), arguments.get("uri")
    if not isinstance(server, str) or not isinstance(uri, str) or not server or not uri:
        raise CatalogError('read_resource needs "server" and "uri", both strings (list_resources gives them)')
    attachments = await hub.read_resource(server, uri)
    if not attachments:
        return f"{uri} has no contents"
    if len(attachments) == 1 and not attachments[0].binary:
        return attachments[0].text
    return "\n\n".join(f"[{a.uri or uri} ({a.mime_type or 'no type'})]\n{a.text}" for a in attachments)
