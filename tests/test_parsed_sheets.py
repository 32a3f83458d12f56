"""The app's style sheets are parsed once per process and theme (ui/parsed_sheets.py): a second app
in the same process parses none of its sheets and applies the same rules; a sheet Textual cannot
parse is reported as Textual reports it.

Counted, not timed: each sheet parsed from its text is one call of Textual's parser."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from textual.css import stylesheet as textual_stylesheet
from textual.css.stylesheet import Stylesheet

from mcp_chat_tui.ui import parsed_sheets
from mcp_chat_tui.ui.parsed_sheets import ParsedSheets, SharedStylesheet
from tests.fakes import ScriptedEngine
from tests.test_theme_change import described
from tests.ui_helpers import SIZE, make_app, send, wait_ready, wait_turn_done


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    """Where each sheet parsed from its text was read from, from a process that has parsed none."""
    monkeypatch.setattr(parsed_sheets, "PARSED_SHEETS", ParsedSheets())
    parses: list[str] = []
    parse = textual_stylesheet.parse

    def counted(scope, css, read_from, *args, **kwargs):
        parses.append(str(read_from))
        return parse(scope, css, read_from, *args, **kwargs)

    monkeypatch.setattr(textual_stylesheet, "parse", counted)
    return parses


async def started_and_answered() -> list[str]:
    """An app started, asked once and left: the rules its style sheet applied at the end."""
    app = make_app(ScriptedEngine(["hello there"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "hi")
        await wait_turn_done(pilot, app)
        return described(app.stylesheet.rules)


async def test_a_second_app_in_the_process_parses_no_style_sheet_and_applies_the_same_rules(parsed):
    first = await started_and_answered()
    assert len(parsed) > 20, "the first app parses each widget's, screen's and its own sheet"
    parsed.clear()
    second = await started_and_answered()
    assert parsed == [], f"the second app parsed {len(parsed)} sheets again, e.g. {parsed[:3]}"
    assert second == first


def shown(error: Exception) -> str:
    """What the person sees of a style sheet's error (a parse error's rules and their problems)."""
    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(getattr(error, "errors", str(error)))
    return console.file.getvalue()


@pytest.mark.parametrize(
    "bad", ["Label { colour: red; }", "Label { color: $undefined-colour; }", "Label { color: red;"]
)
def test_a_sheet_that_cannot_be_parsed_is_reported_to_each_app_as_textual_reports_it(bad, parsed):
    """Textual's app reports a bad sheet once, then leaves it out; so does each app's shared sheet."""
    for _ in range(2):  # two apps of one process
        textuals, shared = Stylesheet(), SharedStylesheet()
        for sheet in (textuals, shared):
            sheet.add_source("Label { color: red; }", ("good.tcss", ""))
            sheet.add_source(bad, ("bad.tcss", ""))
        with pytest.raises(Exception) as expected:
            textuals.parse()
        with pytest.raises(Exception) as raised:
            shared.parse()
        assert type(raised.value) is type(expected.value)
        assert shown(raised.value) == shown(expected.value)
        textuals.parse()
        shared.parse()
        assert described(shared.rules) == described(textuals.rules) != []
