"""Tools described in text, for models whose chat template takes none (``tool_prompt = "text"``).

The system prompt gets each tool's name, description and JSON schema, and how to call one in the
``<tool_call>`` format the recogniser reads (engine/toolcalls.py): its shape, with placeholders in
angle brackets and no literal value a model could copy into a real call (a small model given an
example call with ``"text"`` for a string wrote ``"text"`` in its own calls). The
conversation is rewritten so the template needs no tool support: an assistant's calls become
``<tool_call>`` blocks in its text, and the results of one round go back as one user message of
``<tool_response>`` blocks. A user turn, because every chat template renders one, while many
refuse a ``tool`` role or render it as a role the model never saw; and results that a prompt
follows (a stopped turn) join that prompt, for templates that refuse two user turns in a row.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_chat_tui.engine.message_shapes import _text

TEXT = "text"  # the tool_prompt value that turns this on

CALL_SHAPE = '<tool_call>\n{"name": <tool name>, "arguments": <JSON object of the arguments>}\n</tool_call>'


def call_block(name: str, arguments: Any) -> str:
    """One call as the model is told to write it: ``<tool_call>`` JSON ``</tool_call>``."""
    payload = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{payload}\n</tool_call>"


def describe_tools(tools: list[dict]) -> str:
    """The system prompt's part that lists ``tools`` (OpenAI function tools) and says how to call them."""
    functions = [_function(tool) for tool in tools]
    functions = [function for function in functions if isinstance(function.get("name"), str)]
    sections = []
    for function in functions:
        lines = [f"## {function['name']}"]
        description = str(function.get("description") or "").strip()
        if description:
            lines.append(description)
        schema = function.get("parameters") or {"type": "object", "properties": {}}
        lines.append(f"Arguments (JSON schema): {json.dumps(schema, ensure_ascii=False)}")
        sections.append("\n".join(lines))
    return (
        "# Tools\n\nYou can call these tools to help with the user's request.\n\n"
        + "\n\n".join(sections)
        + "\n\nTo call a tool, write one JSON object with its name and arguments between <tool_call> and "
        "</tool_call>, one block per call, and write nothing after your calls:\n"
        + CALL_SHAPE
        + "\n\nThe results come back in the next user message, one <tool_response> block per call, in the "
        "order of your calls. Then answer the user."
    )


def with_tools_in_text(messages: list[dict], tools: list[dict]) -> list[dict]:
    """``messages`` (OpenAI chat shape) as a template without tools can render them, ``tools`` described
    in the system prompt. Copies; never changes the caller's list."""
    out = calls_in_text(messages)
    description = describe_tools(tools)
    if out and out[0].get("role") == "system":
        system = _text(out[0].get("content"))
        out[0] = {**out[0], "content": f"{system}\n\n{description}" if system else description}
    else:
        out.insert(0, {"role": "system", "content": description})
    return out


def calls_in_text(messages: list[dict]) -> list[dict]:
    """``messages`` with their calls as ``<tool_call>`` blocks in the assistant's text and each round's
    results as one user message: what a template without tools can render. Copies."""
    out: list[dict] = []
    results_at: int | None = None  # the index in ``out`` of the user message holding the last results
    for message in messages:
        role = message.get("role")
        if role == "tool":
            block = f"<tool_response>\n{_text(message.get('content'))}\n</tool_response>"
            if results_at is not None and results_at == len(out) - 1:
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block})
                results_at = len(out) - 1
            continue
        if role == "user" and results_at == len(out) - 1 and isinstance(message.get("content"), str):
            out[-1]["content"] += "\n\n" + message["content"]
            continue
        copy = dict(message)
        if role == "assistant" and "tool_calls" in copy:
            copy["content"] = _assistant_text(_text(copy.get("content")), copy.pop("tool_calls") or [])
        out.append(copy)
    return out


def _assistant_text(content: str, calls: list[Any]) -> str:
    """A reply's text followed by its calls, each as the model wrote it (on a line of its own)."""
    blocks = "\n".join(_call_text(call) for call in calls)
    if not content or not blocks:
        return content or blocks
    return content + ("" if content.endswith("\n") else "\n") + blocks


def _call_text(call: Any) -> str:
    """A ``tool_calls`` entry as a ``<tool_call>`` block; arguments that are not a JSON object (a
    malformed call keeps the model's raw text there) are given back as written."""
    if not isinstance(call, dict):
        return str(call)
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return arguments
        if not isinstance(parsed, dict):
            return arguments
        arguments = parsed
    return call_block(str(function.get("name", "")), arguments if arguments is not None else {})


def _function(tool: Any) -> dict:
    function = tool.get("function", tool) if isinstance(tool, dict) else {}
    return function if isinstance(function, dict) else {}
