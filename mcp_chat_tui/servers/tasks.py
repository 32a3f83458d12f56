"""Tools that can only run as tasks: set apart with why, never offered to the model.

A 2025-11-25 tool whose ``execution.taskSupport`` is ``"required"`` must be called with a
``task`` field and its result fetched later (``tasks/get``, ``tasks/result``); called the
usual way, the server refuses (-32601). The SDK v2 client defines the task types only: its
``call_tool`` cannot ask for a task and it sends none of the task requests (2026-07-28 moved
tasks out of the core protocol). So such a tool is listed as unsupported, like a refused one,
and the model never sees it. ``"optional"`` and ``"forbidden"`` tools are called normally.
"""

from __future__ import annotations

import mcp_types

from mcp_chat_tui.servers.listing import RefusedTool, ToolListing

TASK_REQUIRED_PROBLEM = (
    'needs to run as a task (execution.taskSupport is "required"), which this client cannot do: '
    "not offered to the model"
)


def needs_task(tool: mcp_types.Tool) -> bool:
    """Whether the tool can only be called as a task."""
    return tool.execution is not None and tool.execution.task_support == "required"


def set_apart_task_tools(listing: ToolListing) -> list[RefusedTool]:
    """Take the tools that need tasks out of ``listing.tools``; returns each with why."""
    unsupported = [RefusedTool(tool.name, TASK_REQUIRED_PROBLEM) for tool in listing.tools if needs_task(tool)]
    listing.tools = [tool for tool in listing.tools if not needs_task(tool)]
    return unsupported
