"""A server's sampling request answered by the app's own model: the request as chat messages, one
generation, and the spec's result.

With ``tools`` in the request the model may propose calls of those tools; the approved ones go back
to the server as ``tool_use`` content (``stopReason: "toolUse"``) and the server runs them, then
asks again with their results (the spec's tool loop). Nothing here asks the user: the caller does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import Done, TextDelta, Throughput, ToolCallMalformed, ToolCallProposed
from mcp_chat_tui.engine.generation import ReplyOverrides
from mcp_chat_tui.engine.stops import STOP_SEQUENCE

if TYPE_CHECKING:
    from mcp_types import (
        CreateMessageRequestParams,
        CreateMessageResult,
        CreateMessageResultWithTools,
        SamplingMessage,
    )

STOP_REASONS = {"length": "maxTokens", STOP_SEQUENCE: "stopSequence"}  # the engine's finish, as the spec says it


@dataclass(frozen=True)
class ToolUse:
    """One call the model proposed of a tool the server offered in its request."""

    id: str
    name: str
    arguments: dict[str, Any] = field(hash=False)


@dataclass
class SampledReply:
    """What the model wrote for a sampling request."""

    text: str = ""
    tool_uses: list[ToolUse] = field(default_factory=list)
    stop_reason: str = "endTurn"


def block_text(block: Any) -> str:
    """A content block as text for the model and the dialog (images and audio by their type)."""
    from mcp_types import TextContent, ToolResultContent, ToolUseContent

    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ToolUseContent):
        return f"[tool use {block.name} {json.dumps(block.input, ensure_ascii=False)}]"
    if isinstance(block, ToolResultContent):
        return "\n".join(block_text(item) for item in block.content)
    mime = getattr(block, "mime_type", "")
    return f"[{getattr(block, 'type', 'content')}{' ' + mime if mime else ''}]"


def message_text(message: SamplingMessage) -> str:
    """The message's content as one text."""
    return "\n".join(block_text(block) for block in message.content_as_list)


def editable(message: SamplingMessage) -> bool:
    """Whether a message is plain text, which the user may edit (tool use and results are not)."""
    from mcp_types import TextContent

    return all(isinstance(block, TextContent) for block in message.content_as_list)


def with_edits(params: CreateMessageRequestParams, system_prompt: str, texts: list[str]) -> CreateMessageRequestParams:
    """The request with the user's system prompt and message texts (``texts`` has one per message;
    a message that is not plain text keeps its content)."""
    from mcp_types import SamplingMessage, TextContent

    messages = [
        SamplingMessage(role=message.role, content=TextContent(text=text)) if editable(message) else message
        for message, text in zip(params.messages, texts, strict=True)
    ]
    return params.model_copy(update={"messages": messages, "system_prompt": system_prompt or None})


def chat_messages(params: CreateMessageRequestParams) -> list[dict[str, Any]]:
    """The request as OpenAI chat messages (tool use as ``tool_calls``, tool results as ``tool`` messages)."""
    from mcp_types import ToolResultContent, ToolUseContent

    messages: list[dict[str, Any]] = []
    if params.system_prompt:
        messages.append({"role": "system", "content": params.system_prompt})
    for message in params.messages:
        blocks = message.content_as_list
        uses = [block for block in blocks if isinstance(block, ToolUseContent)]
        results = [block for block in blocks if isinstance(block, ToolResultContent)]
        rest = "\n".join(block_text(b) for b in blocks if not isinstance(b, (ToolUseContent, ToolResultContent)))
        for result in results:
            messages.append({"role": "tool", "tool_call_id": result.tool_use_id, "content": block_text(result)})
        if uses:
            calls = [
                {
                    "id": use.id,
                    "type": "function",
                    "function": {"name": use.name, "arguments": json.dumps(use.input, ensure_ascii=False)},
                }
                for use in uses
            ]
            messages.append({"role": "assistant", "content": rest, "tool_calls": calls})
        elif rest or not results:
            messages.append({"role": message.role, "content": rest})
    return messages


def offered_tools(params: CreateMessageRequestParams) -> list[dict[str, Any]] | None:
    """The request's tools as OpenAI function tools (None without tools, or with ``toolChoice: none``)."""
    if not params.tools or (params.tool_choice is not None and params.tool_choice.mode == "none"):
        return None
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description or "",
                "parameters": tool.input_schema or {"type": "object", "properties": {}},
            },
        }
        for tool in params.tools
    ]


def reply_overrides(params: CreateMessageRequestParams) -> ReplyOverrides:
    """The request's own ``maxTokens``, ``temperature`` and ``stopSequences``, for its one reply."""
    return ReplyOverrides(
        max_tokens=params.max_tokens, temperature=params.temperature, stop=tuple(params.stop_sequences or ())
    )


async def generate(engine: Engine, params: CreateMessageRequestParams) -> SampledReply:
    """One generation for the request, with its own ``maxTokens``, ``temperature`` and ``stopSequences``
    (the engine's settings for the conversation are left as they are)."""
    tools = offered_tools(params)
    known = {tool["function"]["name"] for tool in tools or []}
    reply = SampledReply()
    pieces, counted = 0, False  # tokens so far; counted: the engine reports them (else each text is one)
    stream = engine.stream(
        chat_messages(params), tools, known_tools=known, aside=True, overrides=reply_overrides(params)
    )
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                if not counted and pieces >= params.max_tokens:  # past maxTokens: the engine ignores it
                    reply.stop_reason = "maxTokens"
                    break
                reply.text += event.text
                pieces += 0 if counted else 1
            elif isinstance(event, ToolCallProposed):
                reply.tool_uses.append(
                    ToolUse(event.id or f"toolu_{len(reply.tool_uses) + 1}", event.name, dict(event.arguments))
                )
            elif isinstance(event, ToolCallMalformed):
                reply.text += event.raw
            elif isinstance(event, Throughput):
                pieces, counted = max(pieces, event.generated_tokens), True
            elif isinstance(event, Done):
                reply.stop_reason = STOP_REASONS.get(event.finish_reason, reply.stop_reason)
                break
            if counted and pieces > params.max_tokens:  # an engine that counts past the request's maxTokens
                reply.stop_reason = "maxTokens"
                break
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    return reply


def sampling_result(
    params: CreateMessageRequestParams, text: str, tool_uses: list[ToolUse], model: str, stop_reason: str = "endTurn"
) -> CreateMessageResult | CreateMessageResultWithTools:
    """The spec's answer: with tools in the request the array form (``tool_use`` blocks after the
    text, ``stopReason: toolUse``), else one text block."""
    from mcp_types import CreateMessageResult, CreateMessageResultWithTools, TextContent, ToolUseContent

    if not params.tools and params.tool_choice is None:
        return CreateMessageResult(
            role="assistant", content=TextContent(text=text), model=model, stop_reason=stop_reason
        )
    content: list[Any] = [TextContent(text=text)] if text or not tool_uses else []
    content += [ToolUseContent(id=use.id, name=use.name, input=use.arguments) for use in tool_uses]
    return CreateMessageResultWithTools(
        role="assistant", content=content, model=model, stop_reason="toolUse" if tool_uses else stop_reason
    )


def request_record(params: CreateMessageRequestParams) -> dict[str, Any]:
    """What a sampling request asked, for the chat and the transcript."""
    record: dict[str, Any] = {
        "messages": [{"role": m.role, "text": message_text(m)} for m in params.messages],
        "maxTokens": params.max_tokens,
    }
    if params.temperature is not None:
        record["temperature"] = params.temperature
    if params.stop_sequences:
        record["stopSequences"] = list(params.stop_sequences)
    if params.system_prompt:
        record["systemPrompt"] = params.system_prompt
    if params.tools:
        record["tools"] = [tool.name for tool in params.tools]
    if params.include_context and params.include_context != "none":
        record["includeContext"] = params.include_context
    hints = model_hints(params)
    if hints:
        record["modelHints"] = hints
    return record


def model_hints(params: CreateMessageRequestParams) -> list[str]:
    """The model names the request's ``modelPreferences`` hint at (the app's one model answers all the same)."""
    preferences = params.model_preferences
    return [hint.name for hint in (preferences.hints or []) if hint.name] if preferences is not None else []


def asked_settings(params: CreateMessageRequestParams) -> list[str]:
    """What the request asks of its reply, one phrase each, for the approval dialog and ``--plain``."""
    said = [f"up to {params.max_tokens} tokens"]
    if params.temperature is not None:
        said.append(f"temperature {params.temperature:g}")
    if params.stop_sequences:
        said.append("stops at " + ", ".join(json.dumps(stop, ensure_ascii=False) for stop in params.stop_sequences))
    if params.include_context and params.include_context != "none":
        said.append(f"asks for context {params.include_context} (not given: the request's messages only)")
    hints = model_hints(params)
    if hints:
        said.append(f"prefers models {', '.join(hints)} (your model answers)")
    return said


def result_record(result: CreateMessageResult | CreateMessageResultWithTools) -> dict[str, Any]:
    """What went back to the server, for the chat and the transcript."""
    from mcp_types import ToolUseContent

    blocks = result.content if isinstance(result.content, list) else [result.content]
    record: dict[str, Any] = {"text": "\n".join(block_text(b) for b in blocks if not isinstance(b, ToolUseContent))}
    uses = [{"name": b.name, "arguments": b.input} for b in blocks if isinstance(b, ToolUseContent)]
    if uses:
        record["toolUse"] = uses
    record["stopReason"] = result.stop_reason
    return record
