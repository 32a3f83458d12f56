"""What the agent needs from the server hub."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from mcp_chat_tui.core.progress import ToolProgress
from mcp_chat_tui.core.tasks import TaskState
from mcp_chat_tui.core.tools import ToolCallResult, ToolSpec


class ToolProvider(Protocol):
    """What the agent needs from the server hub."""

    def tools(self) -> list[ToolSpec]: ...

    def find_tool(self, model_name: str) -> ToolSpec | None: ...

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        on_progress: Callable[[ToolProgress], None] | None = None,
        on_task: Callable[[TaskState], None] | None = None,
    ) -> ToolCallResult:
        """Call a tool; one its server runs as a task runs as one, and ``on_task`` hears its state."""

    async def resume_task(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        task_id: str,
        *,
        on_progress: Callable[[ToolProgress], None] | None = None,
        on_task: Callable[[TaskState], None] | None = None,
    ) -> ToolCallResult:
        """Follow the task an earlier run created for a call, until it ends (nothing runs again)."""

    async def settle_tools(self) -> None:
        """Return once tool lists that servers said changed have been read again."""

    def instructions_prompt(self) -> str:
        """The servers' instructions, for the system prompt ("" when none)."""
