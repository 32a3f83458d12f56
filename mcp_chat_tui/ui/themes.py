"""Themes are TOML files: the bundled ``themes/`` and the user's ``themes/`` in the config directory.

Each file describes one Textual theme (name, colours, dark or light). A file
that cannot be read is reported once and skipped; the other themes still load.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError
from textual.theme import Theme

from mcp_chat_tui.core.paths import bundled_path, user_config_dir


class ThemeFile(BaseModel):
    """What a theme file may say (the fields of Textual's ``Theme``)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    primary: str
    secondary: str | None = None
    accent: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    success: str | None = None
    warning: str | None = None
    error: str | None = None
    dark: bool = True
    variables: dict[str, str] = {}


def theme_dirs() -> list[Path]:
    return [bundled_path("themes"), user_config_dir() / "themes"]


def load_themes(dirs: list[Path] | None = None) -> tuple[list[Theme], list[str]]:
    """Every theme found, and one message per file that could not be used."""
    themes: list[Theme] = []
    problems: list[str] = []
    for folder in dirs if dirs is not None else theme_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                data = ThemeFile.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
                theme = Theme(**data.model_dump(exclude_none=True))
                theme.to_color_system()  # fails here, not later, on a colour Textual cannot parse
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                problems.append(f"theme {path}: cannot read it ({exc})")
                continue
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "file"
                problems.append(f"theme {path}: {where}: {first['msg']}")
                continue
            except Exception as exc:  # noqa: BLE001 - a bad colour value is the usual cause
                problems.append(f"theme {path}: {exc}")
                continue
            themes.append(theme)
    return themes, problems
