"""Style sheets parsed once per process and theme: the rules each sheet was parsed into are kept.

Textual parses every style sheet of an app again for each new app, and again whenever a theme
changes its colours: about 55 sheets (each widget class's default CSS, the app's and the screens'
files), a sixth of the CPU an app spends from its start to its first reply. The rules depend only
on the sheet and the colours, so ``PARSED_SHEETS`` keeps them for the whole process: a theme chosen
again parses nothing, nor does a second app in the same process (tests run hundreds).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from textual.css.model import RuleSet
from textual.css.stylesheet import CssSource, Stylesheet

from mcp_chat_tui.ui.textual_private import sheet_variables, use_rules

SourceKey = tuple[Any, CssSource]  # where a sheet was read from, and what it holds


class ParsedSheets:
    """The rules each style sheet was parsed into, for the last ``kept`` sets of variables
    (themes): a theme chosen again parses only the sheets it has not parsed yet (those of widgets
    mounted since)."""

    def __init__(self, kept: int = 4) -> None:
        self.kept = kept
        # by variables: a sheet that parses one source at a time with them, and each source's rules
        self._parsed: OrderedDict[tuple[tuple[str, str], ...], tuple[Stylesheet, dict[SourceKey, list[RuleSet]]]]
        self._parsed = OrderedDict()

    def rules(self, variables: dict[str, str], sources: dict[Any, CssSource]) -> list[RuleSet]:
        """Every sheet's rules with ``variables``, in the sheets' order (as ``Stylesheet.parse`` gives them);
        raises as it does on a sheet it cannot parse, each time asked (and keeps what it parsed before that one)."""
        key = tuple(variables.items())
        parser, kept = self._parsed.pop(key) if key in self._parsed else (Stylesheet(variables=dict(variables)), {})
        self._parsed[key] = (parser, kept)  # the latest used last
        while len(self._parsed) > self.kept:
            self._parsed.popitem(last=False)
        rules: list[RuleSet] = []
        for read_from, source in sources.items():
            parsed = kept.get((read_from, source))
            if parsed is None:
                parser.source.clear()  # the one source alone (the variables are read once per parser)
                css, is_default, tie_breaker, scope = source
                parser.add_source(css, read_from, is_default_css=is_default, tie_breaker=tie_breaker, scope=scope)
                try:
                    parsed = kept[(read_from, source)] = parser.rules
                except Exception:  # a parser skips a sheet it failed on: a new one, so each app is told
                    self._parsed[key] = (Stylesheet(variables=dict(variables)), kept)
                    raise
            rules += parsed
        return rules


PARSED_SHEETS = ParsedSheets()  # every app's, in this process


class SharedStylesheet(Stylesheet):
    """The app's style sheet: parsed (at start, as widgets first mount, on a new theme) from the
    rules ``PARSED_SHEETS`` keeps; a sheet that cannot be parsed is left to Textual's own parse,
    which reports it as it always has."""

    def parse(self) -> None:
        self._parse_shared(Stylesheet.parse)

    def reparse(self) -> None:
        self._parse_shared(Stylesheet.reparse)

    def _parse_shared(self, textuals: Callable[[Stylesheet], None]) -> None:
        try:
            rules = PARSED_SHEETS.rules(sheet_variables(self), self.source)
        except Exception:  # noqa: BLE001 - Textual's parse raises it again, naming the sheet
            textuals(self)
            return
        use_rules(self, rules)

    def copy(self) -> Stylesheet:
        """Textual's (a new sheet from the same sources, for reading changed files into), shared too."""
        copied = SharedStylesheet(variables=dict(sheet_variables(self)))
        copied.source = self.source.copy()
        return copied
