"""Which tools run as tasks (2025-11-25), and the tools set apart because they could only run as one.

A tool whose ``execution.taskSupport`` is ``"required"`` must be called with a ``task`` field, its
result fetched later (``tasks/get``, ``tasks/result``): the hub does that (``servers/task_calls.py``)
when the server declares task support for tool calls (``capabilities.tasks.requests.tools.call``),
the one case the spec lets a client ask for a task. An ``"optional"`` tool of such a server runs as
a task too: the app waits for it the same way, and a long call survives the app being closed (a
resumed conversation fetches its result). Without that capability a required tool cannot be called
at all, so it is listed as unsupported, like a refused one, and the model never sees it; the others
are called normally. 2026-07-28 moved tasks out of the core protocol: there no tool runs as one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_chat_tui.servers.listing import RefusedTool, ToolListing

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

TASK_REQUIRED_PROBLEM = (
    'needs to run as a task (execution.taskSupport is "required"), but its server does not declare task '
    "support for tool calls (capabilities.tasks.requests.tools.call): not offered to the model"
)
TASK_SUPPORTS = ("required", "optional")


def server_runs_tasks(client: Client) -> bool:
    """Whether the server takes tool calls as tasks: a 2025-11-25 connection whose server declares
    ``capabilities.tasks.requests.tools.call``."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    tasks = client.server_capabilities.tasks
    requests = tasks.requests if tasks is not None else None
    return requests is not None and requests.tools is not None and requests.tools.call is not None


def task_support(tool: mcp_types.Tool) -> str:
    """``"required"`` or ``"optional"`` as the tool declares it; "" when it may not run as a task."""
    support = tool.execution.task_support if tool.execution is not None else None
    return support if support in TASK_SUPPORTS else ""


def needs_task(tool: mcp_types.Tool) -> bool:
    """Whether the tool can only be called as a task."""
    return task_support(tool) == "required"


def set_apart_task_tools(listing: ToolListing, runs_tasks: bool = False) -> list[RefusedTool]:
    """When the server does not run tasks (``runs_tasks``), take the tools that need one out of
    ``listing.tools``; returns each with why."""
    if runs_tasks:
        return []
    unsupported = [RefusedTool(tool.name, TASK_REQUIRED_PROBLEM) for tool in listing.tools if needs_task(tool)]
    listing.tools = [tool for tool in listing.tools if not needs_task(tool)]
    return unsupported
