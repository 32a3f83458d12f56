"""The life of a conversation below both front ends: recording, saving, locking, resuming, summaries, routing."""

from mcp_chat_tui.agent.retrying import NOTHING_TO_RETRY, RETRY_BUSY, RETRY_LINE
from mcp_chat_tui.conversation.conversation import NOTHING_TO_COMPACT, Conversation, Switched, chat_agent
from mcp_chat_tui.conversation.models import (
    ModelChoice,
    ModelSwitcher,
    SwitchRefused,
    cancelled_line,
    is_model_command,
    model_argument,
    not_during_a_turn,
    switched_line,
)
from mcp_chat_tui.conversation.opening import CannotOpen, OpenedFile, held_for_the_run, read_if_present
from mcp_chat_tui.conversation.routing import EXIT_WORDS, RETRY_COMMAND, Route, Routed, route_line

__all__ = [
    "EXIT_WORDS",
    "NOTHING_TO_COMPACT",
    "NOTHING_TO_RETRY",
    "RETRY_BUSY",
    "RETRY_COMMAND",
    "RETRY_LINE",
    "CannotOpen",
    "Conversation",
    "ModelChoice",
    "ModelSwitcher",
    "OpenedFile",
    "Route",
    "Routed",
    "SwitchRefused",
    "Switched",
    "cancelled_line",
    "chat_agent",
    "held_for_the_run",
    "is_model_command",
    "model_argument",
    "not_during_a_turn",
    "read_if_present",
    "route_line",
    "switched_line",
]
