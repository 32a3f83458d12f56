"""Parsers for the text inside tool-call blocks, and for a reply made only of JSON calls. Pure Python.

Each parser returns a list of call-like items (dicts, or ``ServerCall`` when the block
names a server) or raises ``ValueError`` saying what is wrong; ``toolcalls`` checks the
items and turns them into events.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MISTRAL_HEADER = re.compile(r"([\w.-]+)\s*(?:\[CALL_ID\]\s*([\w-]+)\s*)?\[ARGS\]\s*")
FUNCTION_TAG = re.compile(r"<function=([^>\s]+)\s*>(.*?)(?:</function>|$)", re.S)
PARAMETER_TAG = re.compile(r"<parameter=([^>\s]+)\s*>(.*?)(?:</parameter>|(?=<parameter=)|$)", re.S)
JSON_SEPARATORS = " \t\r\n,;"
CALL_KEYS = ("arguments", "parameters")


def json_error(exc: json.JSONDecodeError) -> str:
    return f"{exc.msg} at character {exc.pos}"


@dataclass(frozen=True)
class ServerCall:
    server: str
    call: Any


def parse_any(content: str, parser_error: Exception | None) -> list:
    """JSON object(s) or list, or the ``<function=...>`` form; ValueError says why not."""
    body = content.strip()
    if body.startswith("<function="):
        return parse_function_tags(body)
    try:
        return decode_json_sequence(body)
    except ValueError as exc:
        if parser_error is not None:
            raise ValueError(f"the model's tool-call parser rejected it ({parser_error}); {exc}") from exc
        raise


def decode_json_sequence(body: str) -> list:
    if not body:
        raise ValueError("empty tool call")
    decoder = json.JSONDecoder()
    items: list = []
    pos = 0
    while pos < len(body):
        if body[pos] in JSON_SEPARATORS:
            pos += 1
            continue
        try:
            value, pos = decoder.raw_decode(body, pos)
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON: {json_error(exc)}") from exc
        items.extend(value if isinstance(value, list) and value else [value])
    return items


def parse_function_tags(body: str) -> list:
    calls = []
    for match in FUNCTION_TAG.finditer(body):
        arguments: dict[str, Any] = {}
        for param in PARAMETER_TAG.finditer(match.group(2)):
            value_text = param.group(2).strip()
            try:
                arguments[param.group(1)] = json.loads(value_text)
            except json.JSONDecodeError:
                arguments[param.group(1)] = value_text
        calls.append({"name": match.group(1), "arguments": arguments})
    if not calls:
        raise ValueError("no <function=...> call found")
    return calls


def xml_field(content: str, tag: str, last: bool = False) -> str | None:
    start_tag, end_tag = f"<{tag}>", f"</{tag}>"
    start = content.find(start_tag)
    if start < 0:
        return None
    start += len(start_tag)
    end = content.rfind(end_tag) if last else content.find(end_tag, start)
    if end < start:
        raise ValueError(f"<{tag}> is not closed")
    return content[start:end].strip()


def parse_tool_use(content: str) -> list:
    body = content.strip()
    if body.startswith(("{", "[")):
        return decode_json_sequence(body)
    tool = xml_field(body, "tool") or xml_field(body, "tool_name") or xml_field(body, "name")
    if not tool:
        raise ValueError("<tool_use> block has no <tool> name")
    server = xml_field(body, "server") or xml_field(body, "server_name")
    arguments_text = xml_field(body, "arguments", last=True)
    arguments: Any = {}
    if arguments_text:
        try:
            arguments = json.loads(arguments_text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"<arguments> is not valid JSON: {json_error(exc)}") from exc
    call = {"name": tool, "arguments": arguments}
    return [ServerCall(server, call) if server else call]


def parse_mistral(content: str) -> list:
    items: list = []
    for part in content.split("[TOOL_CALLS]"):
        body = part.strip()
        if not body:
            continue
        if body.startswith(("[", "{")):
            items.extend(decode_json_sequence(body))
            continue
        decoder = json.JSONDecoder()
        pos, found = 0, False
        while (match := MISTRAL_HEADER.search(body, pos)) is not None:
            try:
                arguments, pos = decoder.raw_decode(body, match.end())
            except json.JSONDecodeError as exc:
                raise ValueError(f"invalid JSON arguments for {match.group(1)}: {json_error(exc)}") from exc
            call = {"name": match.group(1), "arguments": arguments}
            if match.group(2):
                call["id"] = match.group(2)
            items.append(call)
            found = True
        if not found:
            raise ValueError("no tool call after [TOOL_CALLS]")
    return items
