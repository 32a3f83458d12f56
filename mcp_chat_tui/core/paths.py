"""Where mcp-chat-tui keeps its files: user directories and the files bundled with the package."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import platformdirs

APP_NAME = "mcp-chat-tui"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def bundled_path(name: str) -> Path:
    """A file shipped with mcp-chat-tui (``mcp.json``, ``themes``).

    An installed wheel carries them in ``mcp_chat_tui/_bundled``; a source
    checkout (editable install) has them at the repository top level.
    """
    installed = _PACKAGE_DIR / "_bundled" / name
    if installed.exists():
        return installed
    return _PACKAGE_DIR.parent / name


def package_path(*parts: str) -> Path:
    """A file inside the ``mcp_chat_tui`` package itself."""
    return _PACKAGE_DIR.joinpath(*parts)


def demo_model_path() -> str:
    return str(package_path("demo", "model"))


def model_display_name(model: str) -> str:
    """How a model is named to a person (status bar, messages): the bundled one as "demo model",
    folders by their name, a hub id as it is."""
    if model == demo_model_path():
        return "demo model"
    return model.rstrip("/").rsplit("/", 1)[-1] if model.startswith(("/", ".", "~")) else model


def _dir(env_var: str, default: str) -> Path:
    override = os.environ.get(env_var)
    return Path(override).expanduser() if override else Path(default)


def user_config_dir() -> Path:
    """``config.toml``, a user ``mcp.json`` and user ``themes/`` live here."""
    return _dir("MCP_CHAT_TUI_CONFIG_DIR", platformdirs.user_config_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    """Saved conversations live here."""
    return _dir("MCP_CHAT_TUI_DATA_DIR", platformdirs.user_data_dir(APP_NAME, appauthor=False))


def user_cache_dir() -> Path:
    """Files the app can make again: GGUF models converted to MLX folders."""
    return _dir("MCP_CHAT_TUI_CACHE_DIR", platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def user_log_dir() -> Path:
    """Each server's stderr log lives here."""
    return _dir("MCP_CHAT_TUI_LOG_DIR", platformdirs.user_log_dir(APP_NAME, appauthor=False))


PROMPT_CACHE_SUFFIX = ".cache.safetensors"


def prompt_cache_path(conversation: Path) -> Path:
    """The file beside a conversation where the model's KV cache of it is kept (``<stem>.cache.safetensors``)."""
    return conversation.with_name(f"{conversation.stem}{PROMPT_CACHE_SUFFIX}")


def media_folder(conversation: Path) -> Path:
    """The folder beside a conversation where its large images and audio are kept (``<stem>.media``)."""
    return conversation.with_name(f"{conversation.stem}.media")


PARTIAL_SUFFIX = ".partial"  # a prompt cache is written in a private folder ``.NAME.cache.safetensors.<hex>.partial``
_HEX = frozenset("0123456789abcdef")


def is_partial_cache(name: str) -> bool:
    """Whether ``name`` is what a write of a prompt cache leaves while it runs, or after a kill: its
    private folder, or an older version's ``.NAME.cache.safetensors.partial.safetensors``."""
    if not name.startswith(".") or PROMPT_CACHE_SUFFIX not in name[1:]:
        return False
    tail = name.rsplit(PROMPT_CACHE_SUFFIX, 1)[1]
    if tail == ".partial.safetensors":
        return True
    hex_digits = tail[1:17]  # ``.<16 hex digits>.partial``
    return tail == f".{hex_digits}{PARTIAL_SUFFIX}" and len(hex_digits) == 16 and set(hex_digits) <= _HEX


def remove_partial(path: Path) -> None:
    """Remove a partial prompt cache (its folder and what is in it; a link only as a link)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink()
    except OSError:
        pass  # another process's, or not ours to remove: it is only a speed-up
