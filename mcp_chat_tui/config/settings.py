"""``config.toml``: the user's settings, read with tomllib and changed one key at a time with tomlkit, which
keeps the rest of the file as the user wrote it (comments, order, spacing).

Unknown keys are an error, so a typo such as ``max_turn`` does not pass silently.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import tomlkit
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from mcp_chat_tui.config._errors import from_toml_error, from_validation_error, key_path, kind_of, read_text
from mcp_chat_tui.config.model_options import ModelOptions
from mcp_chat_tui.core.arg_patterns import ArgumentRule
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.core.files import replace_file
from mcp_chat_tui.core.paths import user_config_dir
from mcp_chat_tui.core.server_identity import SavedRule, ServerIdentity
from mcp_chat_tui.core.tool_filter import ToolFilter

SETTINGS_ENV_VAR = "MCP_CHAT_TUI_CONFIG"

Approval = Literal["ask", "auto", "auto-readonly"]
ToolApproval = Literal["always", "ask", "never"]
Patterns = dict[
    Annotated[str, StringConstraints(min_length=1)],
    Annotated[str, StringConstraints(min_length=1)] | list[Annotated[str, StringConstraints(min_length=1)]],
]
ServerName = Annotated[str, StringConstraints(min_length=1)]
DEFAULT_MAX_TOOL_ROUNDS = 8  # docs/reference.md says how it was chosen


def _tool_rounds(value: int) -> int:
    if value < 1:
        raise ValueError(
            f"{value} is not allowed: give the most rounds of tool calls one turn may take, a whole number "
            f"of at least 1 (default {DEFAULT_MAX_TOOL_ROUNDS})"
        )
    return value


ToolRounds = Annotated[int, AfterValidator(_tool_rounds)]


def _existing_folder(text: str) -> str:
    """A root must name an existing folder (``~`` expanded): a typo is an error, not a root that is never there."""
    path = Path(text).expanduser()
    if not path.is_absolute():
        raise ValueError(f"`{text}` is not an absolute path: give the whole path of a folder (~ is allowed)")
    if not path.is_dir():
        raise ValueError(f"`{text}` is not an existing folder")
    return text


RootFolder = Annotated[str, StringConstraints(min_length=1), AfterValidator(_existing_folder)]


class SavedApproval(BaseModel):
    """One tool's entry of ``[approvals.SERVER]``: ``"always"``, ``"ask"`` or ``"never"`` written by
    hand (any server of that name), or the table ``T`` saves, which names the server the choice was
    given to: ``choice`` with ``command`` (and ``cwd``) of a stdio server, or ``url`` of an http or
    sse one. ``always`` / ``never`` tables of argument patterns (core/arg_patterns.py) decide the
    calls they match; the rest take ``choice`` ("ask" unless given).
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    choice: ToolApproval = "ask"
    always: Patterns | None = Field(None, min_length=1)
    never: Patterns | None = Field(None, min_length=1)
    command: list[Annotated[str, StringConstraints(min_length=1)]] | None = Field(None, min_length=1)
    cwd: str | None = None
    url: Annotated[str, StringConstraints(min_length=1)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str) and value in get_args(ToolApproval):
            return {"choice": value}
        if isinstance(value, dict | SavedApproval):
            return value
        raise ValueError(
            "Input should be 'always', 'ask' or 'never', or a table of choice and command or url, or of "
            f"always / never argument patterns (found {kind_of(value)})"
        )

    @model_validator(mode="after")
    def _one_server(self) -> SavedApproval:
        if self.command is not None and self.url is not None:
            raise ValueError('give "command" (a stdio server) or "url" (http, sse), not both')
        if self.cwd is not None and self.command is None:
            raise ValueError('"cwd" goes with "command" (a stdio server)')
        if (self.always is not None or self.never is not None) and self.choice == "always":
            raise ValueError('argument patterns need choice "ask" or "never" for the calls they do not match')
        return self

    def rule(self) -> SavedRule:
        """The choice, its argument patterns and the server it is for (None: any server of that name)."""
        always = ArgumentRule.of(self.always) if self.always is not None else None
        never = ArgumentRule.of(self.never) if self.never is not None else None
        server = None
        if self.command is not None:
            server = ServerIdentity(command=tuple(self.command), cwd=self.cwd)
        elif self.url is not None:
            server = ServerIdentity(url=self.url)
        return SavedRule(self.choice, server, always, never)


def approval_value(rule: SavedRule) -> str | dict[str, Any]:
    """What ``config.toml`` keeps for ``rule``: the choice alone, or a table naming its server too."""
    if rule.server is None:
        return rule.choice
    return {"choice": rule.choice, **rule.server.to_toml()}


class ServerTools(BaseModel):
    """``[server_tools.NAME]``: which of a server's tools are offered to the model (core/tool_filter.py)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    include: list[Annotated[str, StringConstraints(min_length=1)]] | None = None
    exclude: list[Annotated[str, StringConstraints(min_length=1)]] = Field(default_factory=list)

    def tool_filter(self) -> ToolFilter:
        return ToolFilter.of(self.include, self.exclude)


SIDEBAR_WIDTHS = (20, 80)  # the sidebar's width, in percent of the terminal's, is kept within these
DEFAULT_SIDEBAR_WIDTH = 45


class UiSettings(BaseModel):
    """``[ui]``: how the screen is laid out. ``sidebar_width``: the sidebar's share of the terminal's
    width, in percent (the app writes it when F7 or F8 or the mouse change it)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    sidebar_width: int = Field(DEFAULT_SIDEBAR_WIDTH, ge=SIDEBAR_WIDTHS[0], le=SIDEBAR_WIDTHS[1])


class Settings(BaseModel):
    """Everything ``config.toml`` may set; every field has a default, so no file means defaults.

    ``approval``: "ask" before every call, "auto" runs every call, "auto-readonly" runs the tools a
    server named in ``trusted_servers`` marks read-only and asks for the rest (any server can mark
    any tool read-only). ``approvals[server][tool]`` overrides it per tool (``SavedApproval``). ``roots`` (every server)
    and ``server_roots[server]`` are folders offered to servers as roots, besides the working directory.
    ``model`` and ``models`` are the model settings (config/model_options.py). ``max_tool_rounds``:
    the rounds of tool calls one turn may take; the calls of the reply after the last are not run and
    the model is told to answer (``--max-tool-rounds`` goes over it). ``local_models``: model folders
    and GGUF files ``/model`` offers besides the Hugging Face cache's.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    system_prompt: str = ""
    max_turns: int = Field(3, ge=1)
    max_tool_rounds: ToolRounds = DEFAULT_MAX_TOOL_ROUNDS
    tool_timeout: float = Field(90.0, gt=0)
    init_timeout: float = Field(10.0, gt=0)
    approval: Approval = "ask"
    approvals: dict[str, dict[str, SavedApproval]] = Field(default_factory=dict)
    trusted_servers: list[ServerName] = Field(default_factory=list)
    theme: str = "mcp-dark"
    on_server_failure: Literal["exit", "continue"] = "exit"  # -p and --plain; the full-screen app goes on
    sampling_per_minute: int = Field(10, ge=0)  # sampling requests one server may make a minute (0: none)
    roots: list[RootFolder] = Field(default_factory=list)
    server_roots: dict[ServerName, list[RootFolder]] = Field(default_factory=dict)
    server_tools: dict[ServerName, ServerTools] = Field(default_factory=dict)  # [server_tools.NAME]
    model: ModelOptions = Field(default_factory=ModelOptions)  # [model]: for every model
    models: dict[str, ModelOptions] = Field(default_factory=dict)  # [models."<id>"]: for one model
    ui: UiSettings = Field(default_factory=UiSettings)  # [ui]: the screen's layout
    local_models: list[Annotated[str, StringConstraints(min_length=1)]] = Field(default_factory=list)

    def named_models(self) -> list[str]:
        """The models ``/model`` lists besides the Hugging Face cache: ``local_models`` (folders, GGUF
        files), then the models ``[models."<id>"]`` tables name."""
        return list(dict.fromkeys([*self.local_models, *self.models]))

    def model_options(self, model: str) -> ModelOptions:
        """The settings for ``model``: its own table over ``[model]``."""
        own = self.models.get(model)
        return own.over(self.model) if own is not None else self.model

    def agent_options(self) -> dict[str, Any]:
        """What the agent takes from these settings: ``Agent(engine, tools, policy, **agent_options())``."""
        return {
            "system_prompt": self.system_prompt,
            "max_turns": self.max_turns,
            "max_tool_rounds": self.max_tool_rounds,
        }

    def approval_rules(self) -> dict[str, dict[str, SavedRule]]:
        """Every saved choice with the server it was saved for, by server name and tool."""
        return {
            server: {tool: saved.rule() for tool, saved in tools.items()} for server, tools in self.approvals.items()
        }


def settings_path(explicit: Path | None) -> Path:
    """``--config PATH``, else ``$MCP_CHAT_TUI_CONFIG``, else ``config.toml`` in the user config directory."""
    if explicit is not None:
        return Path(explicit).expanduser()
    from_env = os.environ.get(SETTINGS_ENV_VAR)
    if from_env:
        return Path(from_env).expanduser()
    return user_config_dir() / "config.toml"


def load_settings(path: Path) -> Settings:
    """The settings in ``path``; a missing file gives the defaults."""
    path = Path(path)
    if not path.exists():
        return Settings()
    return _validate(path, _read_document(path))


def save_setting(path: Path, keys: tuple[str, ...], value: Any) -> Settings:
    """Set one key and save the file, keeping every other key as it is on disk now.

    A key that already holds ``value`` writes nothing; the file is checked, then replaced
    atomically, with its comments and layout kept: only that key's line changes (or is added).

    Args:
        key: The key's path, e.g. ``("approvals", "demo", "calculator")``; tables on the way are created.

    Returns:
        The settings now in the file.
    """
    path = Path(path)
    document = _editable_document(path) if path.exists() else tomlkit.document()
    table = _table_for(path, document, keys, create=True)
    assert table is not None
    if path.exists() and keys[-1] in table and table[keys[-1]] == value:
        return _validate(path, document.unwrap())
    table[keys[-1]] = value
    settings = _validate(path, document.unwrap())
    _write_atomically(path, document)
    return settings


def remove_setting(path: Path, keys: tuple[str, ...]) -> Settings:
    """Remove one key, so its default applies again; tables it leaves empty go too.

    Nothing is written when the file or the key does not exist. Returns the settings now in effect.
    """
    path = Path(path)
    if not path.exists():
        _check_keys(keys)
        return Settings()
    document = _editable_document(path)
    table = _table_for(path, document, keys, create=False)
    if table is None or keys[-1] not in table:
        return _validate(path, document.unwrap())
    del table[keys[-1]]
    for depth in range(len(keys) - 1, 0, -1):
        parent = _table_for(path, document, keys[:depth], create=False)
        if parent is None or parent.get(keys[depth - 1]) != {}:
            break
        del parent[keys[depth - 1]]
    settings = _validate(path, document.unwrap())
    _write_atomically(path, document)
    return settings


def _read_document(path: Path) -> dict[str, Any]:
    return _parsed(path, read_text(path, "a config.toml file"))


def _parsed(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise from_toml_error(path, exc) from None


def _editable_document(path: Path) -> tomlkit.TOMLDocument:
    """The file as tomlkit reads it, to change a key and write the rest back as it was; a file that
    is not TOML is reported as when it is loaded (tomllib's line and column)."""
    text = read_text(path, "a config.toml file")
    _parsed(path, text)
    return tomlkit.parse(text)


def _validate(path: Path, document: dict[str, Any]) -> Settings:
    known = list(Settings.model_fields)
    for key in document:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean `{close[0]}`?" if close else f"; known settings: {', '.join(known)}"
            raise ConfigError(path, key, f"unknown setting `{key}`{hint}")
    try:
        return Settings.model_validate(document)
    except ValidationError as exc:
        raise from_validation_error(path, exc) from None


def _check_keys(keys: tuple[str, ...]) -> None:
    if not keys or not all(isinstance(key, str) and key for key in keys):
        raise ValueError(f"keys must be a non-empty tuple of non-empty strings, got {keys!r}")


def _table_for(path: Path, document: dict[str, Any], keys: tuple[str, ...], *, create: bool) -> dict[str, Any] | None:
    """The table that holds ``keys[-1]``, walking (and with ``create`` making) the tables above it."""
    _check_keys(keys)
    table = document
    for depth, key in enumerate(keys[:-1]):
        if key not in table:
            if not create:
                return None
            table[key] = {}
        table = table[key]
        if not isinstance(table, dict):
            if not create:
                return None  # a value where a table would be: the key cannot be there
            where = key_path(*keys[: depth + 1])
            raise ConfigError(path, where, f"expected a table to hold `{keys[-1]}`, found {kind_of(table)}")
    return table


def _write_atomically(path: Path, document: tomlkit.TOMLDocument) -> None:
    """Write through a new temporary file and a rename (``core.files.replace_file``), keeping the
    file's permissions. A symlinked ``config.toml`` (kept in a dotfiles folder) is the user's own
    choice of file, so it is written where it points."""
    target = path.resolve() if path.is_symlink() else path
    try:
        data = tomlkit.dumps(document).encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate in a server's or a tool's name: TOML cannot hold it
        raise ConfigError(
            path, None, f"cannot be written: TOML cannot hold {exc.object[exc.start : exc.end]!r}"
        ) from None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        replace_file(target, data)
    except OSError as exc:
        raise ConfigError(path, None, f"cannot be written: {exc.strerror or exc}") from None
