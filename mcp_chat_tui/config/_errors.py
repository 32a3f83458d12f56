"""Turning parser and pydantic failures into one ``ConfigError`` a user can act on.

Messages name the file, the place (line and column, or a key path such as
``servers.weather.command``) and what was expected. They never carry the
offending value itself, only its kind, so a secret cannot leak through them.
"""

from __future__ import annotations

import errno
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.core.files import RefusedFile, read_regular

MAX_CONFIG_BYTES = 16 * 1024 * 1024  # a config file (mcp.json, config.toml, an env file) larger than this is not read

_TOML_WHERE = re.compile(r"(?<!\s)\s*+\(at line (\d+), column (\d+)\)\s*+$")  # linear: a run of spaces is tried once

# pydantic messages that read badly to someone editing a JSON or TOML file.
_FRIENDLY_MESSAGES = {
    "path_type": "Input should be a string (a path)",
    "extra_forbidden": "unknown key",
}


def key_path(*parts: str | int) -> str:
    """``("servers", "demo", "args", 0)`` -> ``servers.demo.args[0]``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def kind_of(value: Any) -> str:
    """What sort of value a user wrote, in JSON/TOML words (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object/table"
    return type(value).__name__


def from_validation_error(path: Path, error: ValidationError, *prefix: str | int) -> ConfigError:
    """The first pydantic error as a ``ConfigError``: ``loc`` as a key path, ``msg`` as the problem."""
    first = error.errors(include_url=False)[0]
    where = key_path(*prefix, *first["loc"]) or None
    problem = _FRIENDLY_MESSAGES.get(first["type"], first["msg"])
    problem = problem.removeprefix("Value error, ")
    if first["type"].endswith("_type") and "input" in first:  # a type mismatch: say what was found
        problem = f"{problem} (found {kind_of(first['input'])})"
    return ConfigError(path, where, problem)


def from_json_error(path: Path, error: Any) -> ConfigError:
    """A ``json.JSONDecodeError`` with its line and column."""
    return ConfigError(path, f"line {error.lineno}, column {error.colno}", f"invalid JSON: {error.msg}")


def from_toml_error(path: Path, error: Exception) -> ConfigError:
    """A ``tomllib.TOMLDecodeError``: its "(at line N, column M)" moved into ``where``."""
    message = str(error)
    match = _TOML_WHERE.search(message)
    if match is None:
        return ConfigError(path, None, f"invalid TOML: {message}")
    where = f"line {match.group(1)}, column {match.group(2)}"
    return ConfigError(path, where, f"invalid TOML: {message[: match.start()]}")


def read_text(path: Path, what: str) -> str:
    """A config file's text (UTF-8, a BOM allowed), or a ``ConfigError`` saying why it cannot be read.

    It must be a regular file (a link to one is followed): a FIFO or a device is refused at once,
    never waited on or read without end."""
    try:
        data = read_regular(path, MAX_CONFIG_BYTES, follow_links=True)
    except FileNotFoundError:
        raise ConfigError(path, None, f"no such file (expected {what})") from None
    except RefusedFile as exc:
        if exc.errno == errno.EISDIR:
            raise ConfigError(path, None, f"is a folder, expected {what}") from None
        raise ConfigError(path, None, f"cannot be read: {exc.strerror}") from None
    except OSError as exc:
        raise ConfigError(path, None, f"cannot be read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, f"byte {exc.start}", "not UTF-8 text") from None
