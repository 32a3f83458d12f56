"""Textual themes from TOML files, bundled and the user's; a file that cannot be read is reported and skipped.
``ThemesInUse``, a helper ``ChatApp`` composes, registers them, applies the saved one and saves a new choice."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from textual.app import App
from textual.theme import Theme

from mcp_chat_tui.core.paths import bundled_path, user_config_dir
from mcp_chat_tui.ui.heap import collect_after_frame
from mcp_chat_tui.ui.parsed_sheets import SharedStylesheet
from mcp_chat_tui.ui.restyle import restyled_in_one_pass
from mcp_chat_tui.ui.saved_settings import SavedSettings
from mcp_chat_tui.ui.textual_private import refresh_truecolor_filter, sheet_variables

DEFAULT_THEME = "mcp-dark"

_Name = TypeVar("_Name", Theme, str)  # a theme registered, or the name of one unregistered


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


class ThemesInUse:
    """The theme files, the theme chosen at start, a new choice saved, and Textual's theme lookups
    kept: ``ChatApp``'s overrides of ``get_theme``, ``register_theme``, ``unregister_theme`` and
    ``refresh_css`` call these.

    Args:
        app: The app whose themes these are: its style sheet, classes and notifications.
        saved: The settings in effect (the theme saved), and where a new choice is kept.
        dirs: Where theme files are read (None: the bundled folder and the user's).
        lookup: Textual's own ``get_theme`` of the app (its answers are kept here).
        restyle: Textual's own ``refresh_css`` of the app (wrapped here).
    """

    def __init__(
        self,
        app: App[Any],
        saved: SavedSettings,
        dirs: list[Path] | None,
        lookup: Callable[[str], Theme | None],
        restyle: Callable[[bool], None],
    ) -> None:
        self.app = app
        self.saved = saved
        self.dirs = dirs
        self._lookup = lookup
        self._restyle = restyle
        self._found: dict[str, Theme | None] = {}  # ``get_theme``'s answers since a theme was (un)registered
        self._problems: list[str] = []  # theme files that could not be used, said once the app is mounted

    def get_theme(self, theme_name: str) -> Theme | None:
        """Textual's, kept until a theme is registered or unregistered: Textual's copies the table of
        themes twice each time, and every line drawn asks for the current theme (its ANSI colours)."""
        found = self._found
        if theme_name not in found:
            found[theme_name] = self._lookup(theme_name)
        return found[theme_name]

    def changed(self, textuals: Callable[[_Name], None], name: _Name) -> None:
        """A theme registered or unregistered (``textuals``, Textual's own): the lookups kept are forgotten."""
        self._found.clear()
        textuals(name)

    def register(self) -> None:
        """Register the theme files and choose the saved theme, before the CSS is first parsed."""
        # Set without its watcher: Textual applies the theme at start-up anyway; setting it once
        # mounted would parse every style sheet again before the first frame.
        # The sheets are parsed from the rules kept for the whole process (ui/parsed_sheets.py).
        app = self.app
        app.stylesheet = SharedStylesheet(variables=sheet_variables(app.stylesheet))
        themes, self._problems = load_themes(self.dirs)
        for theme in themes:
            app.register_theme(theme)
        wanted = self.saved.settings.theme
        if wanted not in app.available_themes:
            if wanted != DEFAULT_THEME:
                self._problems.append(f"theme {wanted!r} not found; using {DEFAULT_THEME}")
            wanted = DEFAULT_THEME
        if wanted in app.available_themes:
            # what the theme's watcher does, minus its second pass over every style sheet
            app.set_reactive(App.theme, wanted)
            theme = app.current_theme
            app.stylesheet.set_variables(app.get_css_variables())
            classes = {name: False for name in app.classes if name.startswith("-theme-")}
            classes.update({f"-theme-{theme.name}": True, "-dark-mode": theme.dark, "-light-mode": not theme.dark})
            app.update_classes(classes, update=False)
            refresh_truecolor_filter(app)

    def refresh_css(self, animate: bool) -> None:
        """Textual's, with each widget redrawn once (ui/restyle.py): a new theme restyles them all;
        the cycle collector waits for the frame that shows it (``collect_after_frame``)."""
        if self.app.screen_stack:
            collect_after_frame(self.app.screen)
        with restyled_in_one_pass(self.app.stylesheet):
            self._restyle(animate)

    def mounted(self) -> None:
        """Once the app is mounted: the theme files skipped are said, and a theme chosen from now on is saved."""
        for problem in self._problems:
            self.app.notify(problem, title="theme skipped", severity="warning", timeout=8)
        self.app.theme_changed_signal.subscribe(self.app, self._save)

    def _save(self, theme: Theme) -> None:
        self.saved.keep(("theme",), theme.name, "theme")
