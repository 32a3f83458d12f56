"""The agent: one conversation turn as an async loop over an engine and the server hub. No UI imports."""

from mcp_chat_tui.agent.approval import ApprovalPolicy
from mcp_chat_tui.agent.loop import Agent

__all__ = ["Agent", "ApprovalPolicy"]
