"""Read a server's whole tool list through the SDK, keeping its valid tools when some are not.

The SDK's ``Client.list_tools`` validates a ``tools/list`` page as a whole: one tool with a
broken input schema, or without a name, fails the page and so the server. When that
happens the page is asked for again through the same SDK session without the whole-page
check, and each tool is checked alone the way the SDK would check it (the negotiated
version's wire shape, then the SDK's ``Tool`` model). Valid tools are kept and handed to
the session as the SDK would have (it derives output-schema checks and HTTP header maps
from them); each refused tool is reported with why.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.text import one_line
from mcp_chat_tui.core.tools import ToolSpec

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client


MAX_TITLE_CHARS = 60  # of a tool's title, which is shown in one line where its name would be
BAD_HEADER_PROBLEM = (
    "has an invalid x-mcp-header ({reason}), and a 2026-07-28 client must not call such a tool: "
    "not offered to the model"
)


@dataclass(frozen=True)
class RefusedTool:
    """A tool a server listed that cannot be offered: its name (if it has one) and what is wrong."""

    name: str | None
    problem: str

    def describe(self) -> str:
        shown = repr(self.name) if self.name is not None else "(a tool without a name)"
        return f"{shown}: {self.problem}"


@dataclass
class ToolListing:
    """Every valid tool of one server, in its order, and every tool it listed that was refused."""

    tools: list[mcp_types.Tool] = field(default_factory=list)
    refused: list[RefusedTool] = field(default_factory=list)
    unsupported: list[RefusedTool] = field(default_factory=list)  # valid, but the SDK may not call them
    pages_read: int = 0
    pages_unread: bool = False  # the server had more pages than ``max_pages``


class ToolListError(Exception):
    """The ``tools/list`` result itself (not one tool in it) is malformed."""


async def list_all_tools(client: Client, *, refresh: bool, max_pages: int) -> ToolListing:
    """Every page of the server's tool list (at most ``max_pages``), with refused tools set apart."""
    listing = ToolListing()
    cursor: str | None = None
    with _noting_dropped_tools(client, listing):
        for _ in range(max_pages):
            try:
                page = await client.list_tools(cursor=cursor, cache_mode="refresh" if refresh else "use")
                listing.tools.extend(page.tools)
                cursor = page.next_cursor
            except ValidationError:
                cursor = await _list_page_tool_by_tool(client, cursor, listing)
            listing.pages_read += 1
            if not cursor:
                break
    listing.pages_unread = bool(cursor)
    return listing


@contextmanager
def _noting_dropped_tools(client: Client, listing: ToolListing) -> Iterator[None]:
    """On 2026-07-28 the SDK takes every tool with an invalid ``x-mcp-header`` out of a page it absorbs
    (the spec: a client must not call one), saying so only in its log: note each in
    ``listing.unsupported`` with why, as it absorbs the page."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from mcp_chat_tui.servers.sdk_private import noting_absorbed_pages

    if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        yield
        return

    def note(result: mcp_types.ListToolsResult) -> None:
        from mcp.shared.inbound import find_invalid_x_mcp_header

        for tool in result.tools:
            if (reason := find_invalid_x_mcp_header(tool.input_schema)) is not None:
                listing.unsupported.append(RefusedTool(tool.name, BAD_HEADER_PROBLEM.format(reason=reason)))

    with noting_absorbed_pages(client.session, note):
        yield


async def _list_page_tool_by_tool(client: Client, cursor: str | None, listing: ToolListing) -> str | None:
    """Ask for one page again, keep its valid tools, note the rest; returns the next cursor."""
    import mcp_types
    from mcp_types.methods import validate_server_result

    from mcp_chat_tui.servers.sdk_private import LEGACY_VERSION, absorb_tool_listing

    raw = await _raw_tools_page(client, cursor)
    raw_tools = raw.get("tools")
    if not isinstance(raw_tools, list):
        raise ToolListError(f"the tools/list result has no list of tools (tools: {_excerpt(raw_tools)})")
    version = client.protocol_version or LEGACY_VERSION
    envelope = {key: value for key, value in raw.items() if key != "tools"}
    kept: list[mcp_types.Tool] = []
    for item in raw_tools:
        try:
            validate_server_result("tools/list", version, {**envelope, "tools": [item]})
            kept.append(mcp_types.Tool.model_validate(item, by_name=False))
        except (ValidationError, ValueError, KeyError) as exc:
            listing.refused.append(RefusedTool(_name_of(item), _problem(exc)))
    try:
        page = mcp_types.ListToolsResult.model_validate({**envelope, "tools": []}, by_name=False)
    except ValidationError as exc:
        raise ToolListError(f"the tools/list result is malformed: {_problem(exc)}") from None
    page.tools = kept
    absorb_tool_listing(client.session, page, complete=cursor is None and page.next_cursor is None)
    listing.tools.extend(page.tools)
    return page.next_cursor


async def _raw_tools_page(client: Client, cursor: str | None) -> dict[str, Any]:
    """One ``tools/list`` page as the server sent it (``sdk_private.raw_result``: the SDK has no
    public way to a page its whole-result check refuses)."""
    import mcp_types

    from mcp_chat_tui.servers.sdk_private import raw_result

    request = mcp_types.ListToolsRequest(params=mcp_types.PaginatedRequestParams(cursor=cursor))
    raw = await raw_result(client.session, request)
    if not isinstance(raw, Mapping):
        raise ToolListError(f"the tools/list result is not an object: {_excerpt(raw)}")
    return dict(raw)


def _name_of(item: object) -> str | None:
    name = item.get("name") if isinstance(item, Mapping) else None
    return name if isinstance(name, str) and name else None


def _problem(exc: Exception) -> str:
    """The first thing wrong, in a line: where in the tool and what (``+N more`` when there are more)."""
    if not isinstance(exc, ValidationError):
        return one_line(str(exc), 120)
    errors = exc.errors(include_url=False)
    first = errors[0]
    location = [str(part) for part in first["loc"]]
    if location[:2] == ["tools", "0"]:
        location = location[2:]
    where = ".".join(location) or "the tool"
    if first["type"] == "missing":
        text = f"{where} is missing"
    else:
        text = f"{where}: {first['msg']} (got {_excerpt(first.get('input'))})"
    more = len(errors) - 1
    return text + (f" (+{more} more)" if more else "")


def _excerpt(value: object, limit: int = 40) -> str:
    return one_line(repr(value), limit)


def tool_spec(server: str, tool: mcp_types.Tool, redactor: Redactor, task_support: str = "") -> ToolSpec:
    """A listed tool; its description, schema and title are redacted (the model and the screen see them).
    ``task_support``: "required" or "optional" when its server runs it as a task (servers/tasks.py)."""
    annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
    title = tool.title or annotations.get("title")
    return ToolSpec(
        server=server,
        name=tool.name,
        description=redactor.text(tool.description or ""),
        input_schema=redactor.value(dict(tool.input_schema or {"type": "object", "properties": {}})),
        annotations=annotations,
        title=one_line(redactor.text(title), MAX_TITLE_CHARS) if isinstance(title, str) else title,
        task_support=task_support,
    )
