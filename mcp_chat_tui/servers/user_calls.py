"""``/call server:tool key=value …``: the user calls a tool, as the MCP Inspector lets one.

The tool is named as ``server:tool`` (or ``tool`` when one server has it). Each value is read as its
property's type in the tool's input schema: a string as typed; a number, boolean, array or object
as JSON (``count=3``, ``flag=true``, ``tags='["a", "b"]'``); quoted with spaces as in a shell. The
arguments are checked against the whole input schema before anything is sent. No approval is
asked: the user is the one calling. The result is attached to the user's next message (📎, kind
``call``), so the conversation keeps it and the model sees it only when the user sends it on.
"""

from __future__ import annotations

import difflib
import json
import shlex
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.core.attachments import CALL, Attachment
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.tools import ToolCallResult, ToolSpec

if TYPE_CHECKING:
    from mcp_chat_tui.servers.hub import ServerHub

CALL_COMMAND = "/call"
JSON_TYPES = {"number", "integer", "boolean", "array", "object", "null"}


class CallCommandError(UserFacingError):
    """A ``/call`` that cannot run: no such tool, a badly written argument, arguments the tool's
    schema refuses; the message says what to do."""

    exit_code = 2


def is_call_command(text: str) -> bool:
    head = text.strip().split(None, 1)[0] if text.strip() else ""
    return head == CALL_COMMAND


def parse_call(text: str, tools: list[ToolSpec]) -> tuple[ToolSpec, dict[str, Any]]:
    """The tool and the arguments a ``/call`` names, checked against the tool's input schema."""
    try:
        words = shlex.split(text.strip())
    except ValueError as exc:
        raise CallCommandError(f"cannot read the command: {exc} (close the quotes)") from None
    if len(words) < 2:
        raise CallCommandError("give the tool: /call server:tool key=value … (F4, Enter on a server lists its tools)")
    spec = find_tool(words[1], tools)
    properties = spec.input_schema.get("properties") if isinstance(spec.input_schema, dict) else None
    properties = properties if isinstance(properties, dict) else {}
    arguments: dict[str, Any] = {}
    for word in words[2:]:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise CallCommandError(f"{word!r} is not key=value: give arguments as name=value ({_names(properties)})")
        if properties and key not in properties:
            raise CallCommandError(
                f"{spec.server}:{spec.name} has no argument {key!r}; its arguments: {_names(properties)}"
            )
        arguments[key] = _value(key, value, properties.get(key))
    problem = schema_problem(arguments, spec.input_schema)
    if problem:
        raise CallCommandError(f"{spec.server}:{spec.name} refuses these arguments: {problem}")
    return spec, arguments


def find_tool(name: str, tools: list[ToolSpec]) -> ToolSpec:
    server, colon, tool = name.rpartition(":")
    matches = [t for t in tools if t.name == tool and (not colon or t.server == server)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise CallCommandError(
            f"{name} is a tool of several servers: say which, " + ", ".join(_named(t) for t in matches)
        )
    if not tools:
        raise CallCommandError("no server offers tools now")
    names = [_named(t) for t in tools] if colon else [t.name for t in tools]
    near = difflib.get_close_matches(name, names, n=3, cutoff=0.75)
    hint = (
        "did you mean " + ", ".join(dict.fromkeys(near)) + "?"
        if near
        else "tools: " + ", ".join(_named(t) for t in tools[:10])
    )
    raise CallCommandError(f"no tool {name}; {hint}")


def schema_problem(arguments: dict[str, Any], schema: dict[str, Any]) -> str:
    """Why ``arguments`` do not fit ``schema`` ("" when they do, or when the schema is not one)."""
    import jsonschema  # type: ignore[import-untyped]

    try:
        jsonschema.validate(arguments, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        return f"{where}: {exc.message}" if where else exc.message
    except jsonschema.SchemaError:
        return ""  # the server's schema is not valid JSON Schema: nothing to hold the arguments to
    return ""


async def call_yourself(hub: ServerHub, text: str) -> tuple[ToolSpec, dict[str, Any], ToolCallResult]:
    """Run the ``/call`` in ``text`` on ``hub``'s server (no approval: the user is the one calling);
    raises ``CallCommandError`` when the command names no tool or bad arguments."""
    spec, arguments = parse_call(text, hub.tools())
    return spec, arguments, await hub.call_tool(spec.server, spec.name, arguments)


def call_attachment(spec: ToolSpec, arguments: dict[str, Any], text: str, ok: bool) -> Attachment:
    """The user's call and its result, to go with the next message."""
    shown = {key: value if isinstance(value, str) else json.dumps(value) for key, value in arguments.items()}
    return Attachment(
        kind=CALL, server=spec.server, name=spec.name, arguments=shown, text=text if ok else f"[error] {text}"
    )


def _value(key: str, text: str, prop: Any) -> Any:
    kinds = prop.get("type") if isinstance(prop, dict) else None
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    if not (kinds & JSON_TYPES) or "string" in kinds:
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise CallCommandError(
            f'{key}={text!r}: {key} is {" or ".join(sorted(k for k in kinds if k))}, written as JSON (e.g. 3, true, ["a"])'
        ) from None


def _named(spec: ToolSpec) -> str:
    return f"{spec.server}:{spec.name}"


def _names(properties: dict[str, Any]) -> str:
    return ", ".join(properties) or "it takes none"
