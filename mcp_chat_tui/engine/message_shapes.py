"""Chat messages in the shape a chat template wants, or the shape the OpenAI wire wants.

The agent keeps messages in OpenAI chat shape. Templates (Qwen, Llama, Hermes) want
``tool_calls[].function.arguments`` as a dict; the OpenAI wire wants a JSON string. Both
functions copy and never change the caller's list.
"""

from __future__ import annotations

import json
from typing import Any


def for_template(messages: list[dict]) -> list[dict]:
    """Messages for ``apply_chat_template``: arguments as dicts, content as plain text."""
    out = []
    for message in messages:
        copy = dict(message)
        copy["content"] = _text(copy.get("content"))
        if copy.get("tool_calls"):
            copy["tool_calls"] = [_call_with_arguments(call, as_text=False) for call in copy["tool_calls"]]
        else:
            copy.pop("tool_calls", None)
        out.append(copy)
    return out


def system_in_first_user(messages: list[dict]) -> list[dict]:
    """``messages`` for a template that takes no system role: a leading system message's text opens the
    first user message (or becomes one, when no user message follows it)."""
    if not messages or messages[0].get("role") != "system":
        return list(messages)
    system, rest = _text(messages[0].get("content")), list(messages[1:])
    for index, message in enumerate(rest):
        if message.get("role") == "user":
            content = _text(message.get("content"))
            rest[index] = {**message, "content": f"{system}\n\n{content}" if system and content else system or content}
            return rest
    return [{"role": "user", "content": system}, *rest]


def has_tool_turns(messages: list[dict]) -> bool:
    """Whether ``messages`` hold tool calls or results (a template without tools cannot show them as they are)."""
    return any(message.get("role") == "tool" or message.get("tool_calls") for message in messages)


def for_wire(messages: list[dict]) -> list[dict]:
    """Messages for an OpenAI-compatible server: arguments as JSON strings."""
    out = []
    for message in messages:
        copy = dict(message)
        if copy.get("content") is not None:
            copy["content"] = _text(copy["content"])
        if copy.get("tool_calls"):
            copy["tool_calls"] = [_call_with_arguments(call, as_text=True) for call in copy["tool_calls"]]
        else:
            copy.pop("tool_calls", None)
        out.append(copy)
    return out


def _call_with_arguments(call: Any, *, as_text: bool) -> Any:
    if not isinstance(call, dict):
        return call
    call = dict(call)
    function = call.get("function")
    if isinstance(function, dict):
        function = dict(function)
        function["arguments"] = _arguments(function.get("arguments"), as_text)
        call["function"] = function
        call.setdefault("type", "function")
    elif "arguments" in call:
        call["arguments"] = _arguments(call["arguments"], as_text)
    return call


def _arguments(arguments: Any, as_text: bool) -> Any:
    if as_text:
        if isinstance(arguments, str):
            return arguments
        return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            return json.loads(arguments)
        except json.JSONDecodeError:
            return arguments  # leave what the model wrote; the template shows it as text
    return arguments if arguments is not None else {}


def _text(content: Any) -> str:
    """Content as one string: None is empty, a list of parts keeps its text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return str(content)
