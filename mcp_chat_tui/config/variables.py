"""Variable expansion in ``mcp.json`` string values, the way VS Code does it, plus ``${python}``.

The variables are listed in docs/reference.md. Any other ``${...}`` is an error. Every expansion
also yields a display form that keeps ``${input:ID}`` in place of password answers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mcp_chat_tui.core.errors import ConfigError


def variables_in(template: str) -> Iterator[tuple[int, int, str]]:
    """Each ``${name}`` in ``template``, as (start, end, name), left to right; a ``${`` that no ``}``
    closes ends the search (linear: a value of many ``${`` is scanned once)."""
    start = template.find("${")
    while start >= 0:
        end = template.find("}", start + 2)
        if end < 0:
            return
        yield start, end + 1, template[start + 2 : end]
        start = template.find("${", end + 1)


class InputSpec(BaseModel):
    """One entry of ``"inputs"``: a value the user is asked for (VS Code's ``promptString``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, strict=True)
    type: Literal["promptString"] = "promptString"
    description: str = Field("", strict=True)
    password: bool = Field(False, strict=True)
    default: str | None = Field(None, strict=True)


class InputCache:
    """Answers to ``${input:...}`` prompts, kept by the caller for the whole run.

    Reloading ``mcp.json`` or restarting a server with the same cache asks nothing again.
    The answers stay in memory only; ``repr`` shows which ids are known, never the values.
    """

    def __init__(self) -> None:
        self._answers: dict[str, str] = {}

    def __contains__(self, input_id: object) -> bool:
        return input_id in self._answers

    def get(self, input_id: str) -> str | None:
        return self._answers.get(input_id)

    def set(self, input_id: str, value: str) -> None:
        self._answers[input_id] = value

    def forget(self, input_id: str) -> None:
        """Drop one answer, so the next load asks for it again (say, after a rejected token)."""
        self._answers.pop(input_id, None)

    def clear(self) -> None:
        self._answers.clear()

    def __repr__(self) -> str:
        return f"InputCache(ids={sorted(self._answers)!r})"


AskInput = Callable[[InputSpec], str]


@dataclass
class Expander:
    """Expands the strings of one ``mcp.json``.

    ``resolve_inputs=False`` checks ``${input:ID}`` references but leaves them in place
    (for disabled servers, and to list what would be asked).
    """

    path: Path
    workspace_folder: Path
    inputs: dict[str, InputSpec]
    cache: InputCache
    ask_input: AskInput | None = None
    # Input id -> the answer of every password input expanded so far (for ``Redactor``).
    secrets: dict[str, str] = field(default_factory=dict, repr=False)

    def expand(self, template: str, where: str, *, resolve_inputs: bool = True) -> tuple[str, str]:
        """``(value, display)``: display differs only where a password input was used."""
        value_parts: list[str] = []
        display_parts: list[str] = []
        position = 0
        for start, end, name in variables_in(template):
            value_parts.append(template[position:start])
            display_parts.append(template[position:start])
            value, secret = self._variable(name, where, resolve_inputs)
            value_parts.append(value)
            display_parts.append(template[start:end] if secret else value)
            position = end
        value_parts.append(template[position:])
        display_parts.append(template[position:])
        return "".join(value_parts), "".join(display_parts)

    def input_ids(self, template: str, where: str) -> list[str]:
        """The declared input ids a string uses, in order (unknown ids are an error)."""
        ids = []
        for _, _, name in variables_in(template):
            if name.startswith("input:"):
                ids.append(self._spec(name.removeprefix("input:"), where).id)
            else:
                self._variable(name, where, resolve_inputs=False)
        return ids

    def _variable(self, name: str, where: str, resolve_inputs: bool) -> tuple[str, bool]:
        """One variable's value and whether it is a secret."""
        kind, _, argument = name.partition(":")
        if kind == "env" and argument:
            return os.environ.get(argument, ""), False
        if kind == "input" and argument:
            spec = self._spec(argument, where)
            if not resolve_inputs:
                return f"${{input:{spec.id}}}", False
            answer = self._answer(spec, where)
            if spec.password:
                self.secrets[spec.id] = answer
            return answer, spec.password
        simple = {
            "workspaceFolder": str(self.workspace_folder),
            "workspaceFolderBasename": self.workspace_folder.name,
            "userHome": str(Path.home()),
            "python": sys.executable,
            "pathSeparator": os.sep,
            "/": os.sep,
        }
        if name in simple:
            return simple[name], False
        known = "${env:NAME}, ${input:ID}, " + ", ".join(f"${{{key}}}" for key in simple)
        raise ConfigError(self.path, where, f"unknown variable `${{{name}}}`; known: {known}")

    def _spec(self, input_id: str, where: str) -> InputSpec:
        spec = self.inputs.get(input_id)
        if spec is None:
            declared = ", ".join(self.inputs) or "none"
            raise ConfigError(
                self.path,
                where,
                f'`${{input:{input_id}}}` names an input that is not declared in "inputs" (declared: {declared})',
            )
        return spec

    def _answer(self, spec: InputSpec, where: str) -> str:
        cached = self.cache.get(spec.id)
        if cached is not None:
            return cached
        if self.ask_input is not None:
            answer = self.ask_input(spec)
            if not isinstance(answer, str):
                raise TypeError(f"ask_input returned {type(answer).__name__} for input {spec.id!r}, not str")
            self.cache.set(spec.id, answer)
            return answer
        if spec.default is not None:
            return spec.default  # not cached: a later load that can ask still asks
        raise ConfigError(
            self.path,
            where,
            f'input `{spec.id}` needs a value: nobody can be asked here and it has no "default"',
        )
