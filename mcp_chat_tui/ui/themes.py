"""Textual themes from TOML files, bundled and the user's; a file that cannot be read is reported and skipped."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError
from textual.app import App
from textual.theme import Theme

from mcp_chat_tui.config import save_setting
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.paths import bundled_path, user_config_dir
from mcp_chat_tui.ui.app_base import ChatAppBase
from mcp_chat_tui.ui.heap import collect_after_frame
from mcp_chat_tui.ui.parsed_sheets import SharedStylesheet
from mcp_chat_tui.ui.restyle import restyled_in_one_pass
from mcp_chat_tui.ui.textual_private import refresh_truecolor_filter, sheet_variables

DEFAULT_THEME = "mcp-dark"


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


class ThemeSettings(ChatAppBase):
    """The theme part of ``ChatApp`` (mixed into it): the theme files, the saved choice, and
    saving a new one; uses its ``settings``, ``settings_file`` and ``theme_dirs``."""

    _themes_found: dict[str, Theme | None] | None = None  # ``get_theme``'s answers since a theme was (un)registered

    def get_theme(self, theme_name: str) -> Theme | None:
        """Textual's, kept until a theme is registered or unregistered: Textual's copies the table of
        themes twice each time, and every line drawn asks for the current theme (its ANSI colours)."""
        found = self._themes_found = self._themes_found if self._themes_found is not None else {}
        if theme_name not in found:
            found[theme_name] = super().get_theme(theme_name)
        return found[theme_name]

    def register_theme(self, theme: Theme) -> None:
        self._themes_found = None
        super().register_theme(theme)

    def unregister_theme(self, theme_name: str) -> None:
        self._themes_found = None
        super().unregister_theme(theme_name)

    def _register_themes(self) -> None:
        """Register the theme files and choose the saved theme, before the CSS is first parsed."""
        # Set without its watcher: Textual applies the theme at start-up anyway; setting it once
        # mounted would parse every style sheet again before the first frame.
        # The sheets are parsed from the rules kept for the whole process (ui/parsed_sheets.py).
        self.stylesheet = SharedStylesheet(variables=sheet_variables(self.stylesheet))
        themes, self._theme_problems = load_themes(self.theme_dirs)
        for theme in themes:
            self.register_theme(theme)
        wanted = self.settings.theme
        if wanted not in self.available_themes:
            if wanted != DEFAULT_THEME:
                self._theme_problems.append(f"theme {wanted!r} not found; using {DEFAULT_THEME}")
            wanted = DEFAULT_THEME
        if wanted in self.available_themes:
            # what the theme's watcher does, minus its second pass over every style sheet
            self.set_reactive(App.theme, wanted)
            theme = self.current_theme
            self.stylesheet.set_variables(self.get_css_variables())
            classes = {name: False for name in self.classes if name.startswith("-theme-")}
            classes.update({f"-theme-{theme.name}": True, "-dark-mode": theme.dark, "-light-mode": not theme.dark})
            self.update_classes(classes, update=False)
            refresh_truecolor_filter(self)

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's, with each widget redrawn once (ui/restyle.py): a new theme restyles them all;
        the cycle collector waits for the frame that shows it (``collect_after_frame``)."""
        if self.screen_stack:
            collect_after_frame(self.screen)
        with restyled_in_one_pass(self.stylesheet):
            super().refresh_css(animate)

    def _report_theme_problems(self) -> None:
        for problem in self._theme_problems:
            self.notify(problem, title="theme skipped", severity="warning", timeout=8)
        self.theme_changed_signal.subscribe(self, self._save_theme)

    def _save_theme(self, theme: Theme) -> None:
        if self.settings_file is not None and theme.name != self.settings.theme:
            try:
                self.settings = save_setting(self.settings_file, ("theme",), theme.name)
            except UserFacingError as exc:
                self.notify(str(exc), title="theme not saved", severity="error")
