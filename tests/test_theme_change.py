"""A new theme restyles the app with each widget asked to redraw once (issue 33: Enter on
"Change theme" in the palette took 285 ms over a loaded conversation, a third of it the same
widgets asked to redraw again and again, about 6,000 times over 700 widgets), and what it draws
is the same: the screen after a theme and back is the screen before.

Counted, not timed: bench/key_latency.py times the key."""

from __future__ import annotations

import json
from collections import Counter

from textual.css.stylesheet import Stylesheet
from textual.widget import Widget

from mcp_chat_tui.config import Settings
from mcp_chat_tui.transcript import Exchange, Proposal, Step, ToolResult, Transcript
from mcp_chat_tui.ui import parsed_sheets
from mcp_chat_tui.ui.parsed_sheets import ParsedSheets
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from tests.fakes import ScriptedEngine
from tests.ui_helpers import make_app, wait_for, wait_ready


def conversation(exchanges: int) -> Transcript:
    """``exchanges`` exchanges, each a prompt, a calculator call with its result and an answer."""
    made = []
    for index in range(exchanges):
        arguments = {"id": f"call_{index}", "type": "function", "function": {"name": "calculator"}}
        arguments["function"]["arguments"] = json.dumps({"expression": f"{index} + 1"})
        result = ToolResult("calculator", f"call_{index}", "done", str(index + 1), "demo", 0.01)
        step = Step(text="Let me work it out.", proposals=[Proposal(arguments, "yo", result)])
        made.append(Exchange(f"what is {index} + 1?", "scripted", [step, Step(text=f"It is {index + 1}.")]))
    return Transcript(made)


async def test_a_theme_change_redraws_each_widget_once_and_draws_as_a_start_in_that_theme(monkeypatch):
    refreshed: Counter[Widget] = Counter()
    refresh = Widget.refresh

    def counted(widget, *regions, repaint=True, layout=False, recompose=False):
        if restyling and not regions and repaint and not recompose:
            refreshed[widget] += 1
        return refresh(widget, *regions, repaint=repaint, layout=layout, recompose=recompose)

    app = make_app(ScriptedEngine([]), settings=Settings(theme="mcp-dark"), transcript=conversation(20))
    restyle = app.refresh_css
    restyling = []

    def counted_restyle(animate: bool = True) -> None:  # what a theme change runs
        restyling.append(True)
        try:
            restyle(animate)
        finally:
            restyling.clear()

    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: not app.turns.running, what="the loaded exchanges' summaries")
        app.query_one(PromptInput).cursor_blink = False
        before = await settled_screen(pilot, app)
        monkeypatch.setattr(Widget, "refresh", counted)
        monkeypatch.setattr(app, "refresh_css", counted_restyle)
        app.theme = "mcp-light"
        await wait_for(pilot, lambda: "-theme-mcp-light" in app.classes and refreshed, what="the new theme")
        await pilot.pause()
        assert len(refreshed) > 100, "every widget's colours changed"
        # once as restyled; a scroll bar may be asked again as the screen is laid out after
        again = [(type(widget).__name__, times) for widget, times in refreshed.items() if times > 2]
        assert not again, f"{len(again)} widgets asked to redraw more than twice: {again[:5]}"
        assert sum(refreshed.values()) < 1.1 * len(refreshed)
        app.theme = "mcp-dark"
        await wait_for(pilot, lambda: "-theme-mcp-dark" in app.classes, what="the first theme again")
        # a widget left unpainted would keep the other theme's colours: the screen never comes back
        await wait_for(pilot, lambda: app.export_screenshot() == before, 10, "the screen as it was")


async def settled_screen(pilot, app) -> str:
    """The screen once two frames in a row are the same (the loaded chat has scrolled to its end)."""
    shown = app.export_screenshot()
    for _ in range(50):
        await pilot.pause(0.05)
        now = app.export_screenshot()
        if now == shown:
            return now
        shown = now
    raise AssertionError("the screen kept changing")


async def test_a_theme_chosen_again_is_not_parsed_again_and_draws_as_it_did(monkeypatch):
    """Textual parses every style sheet again with the new theme's colours (a fifth of the key);
    the rules parsed for a theme are kept, so going back to it (or to the theme the app started
    in) parses nothing, and the screen in each theme is what it was the first time."""
    monkeypatch.setattr(parsed_sheets, "PARSED_SHEETS", ParsedSheets())  # no theme parsed yet, as in a new process
    parses: list[Stylesheet] = []  # each a sheet parsed from its source (the app's own takes the rules kept)
    parse = Stylesheet.parse

    def counted_parse(sheet: Stylesheet) -> None:
        parses.append(sheet)
        parse(sheet)

    app = make_app(ScriptedEngine([]), settings=Settings(theme="mcp-dark"), transcript=conversation(5))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: not app.turns.running, what="the loaded exchanges' summaries")
        app.query_one(PromptInput).cursor_blink = False
        monkeypatch.setattr(Stylesheet, "parse", counted_parse)
        shown: dict[str, list[str]] = {}
        for theme in ("mcp-light", "mcp-dark", "mcp-light", "mcp-dark"):
            parses.clear()
            app.theme = theme
            await wait_for(pilot, lambda theme=theme: f"-theme-{theme}" in app.classes, what=f"the theme {theme}")
            await pilot.pause()
            shown.setdefault(theme, []).append(await settled_screen(pilot, app))
            if theme == "mcp-light" and len(shown[theme]) == 1:
                assert parses, "a theme not seen before is parsed"
            else:  # the theme the app started in was parsed then
                assert parses == [], f"{theme} chosen again was parsed again"
        assert shown["mcp-light"][0] == shown["mcp-light"][1]
        assert shown["mcp-dark"][0] == shown["mcp-dark"][1]
        assert shown["mcp-light"][0] != shown["mcp-dark"][0]


def parsed_by_textual(variables: dict[str, str], sources: dict) -> list[str]:
    sheet = Stylesheet(variables=variables)
    for read_from, (css, is_default, tie_breaker, scope) in sources.items():
        sheet.add_source(css, read_from, is_default_css=is_default, tie_breaker=tie_breaker, scope=scope)
    return described(sheet.rules)


def described(rules) -> list[str]:
    return [repr((rule.selector_set, sorted(rule.styles.get_rules().items(), key=str))) for rule in rules]


def test_parsed_sheets_give_textuals_rules_and_parse_only_the_sheets_not_seen_with_those_colours(monkeypatch):
    parses: list[object] = []
    parse = Stylesheet.parse
    monkeypatch.setattr(Stylesheet, "parse", lambda sheet: (parses.append(sheet), parse(sheet))[1])
    sheet = Stylesheet()
    sheet.add_source("Label { color: $primary; }", ("a.tcss", ""))
    sheet.add_source("#x { background: $primary 50%; border: solid $secondary; }", ("b.tcss", ""), tie_breaker=1)
    dark, light = {"primary": "#102030", "secondary": "red"}, {"primary": "#f0e0d0", "secondary": "blue"}
    kept = ParsedSheets()

    def parsed_here(variables: dict[str, str]) -> list[str]:
        expected = parsed_by_textual(variables, sheet.source)
        parses.clear()
        rules = described(kept.rules(variables, sheet.source))
        assert rules == expected
        return [str(parsed.source) for parsed in parses]

    assert len(parsed_here(dark)) == 2, "each sheet parsed once with colours not seen before"
    assert len(parsed_here(light)) == 2
    assert parsed_here(dark) == [], "the dark rules were kept"
    sheet.add_source("Button { color: $secondary; }", ("c.tcss", "Button"), is_default_css=True)
    assert parsed_here(dark) == [str({("c.tcss", "Button"): sheet.source[("c.tcss", "Button")]})], "the new sheet alone"
    assert parsed_here(light) == [str({("c.tcss", "Button"): sheet.source[("c.tcss", "Button")]})]


async def test_a_theme_change_walks_under_each_container_once():
    """A colour set on a container asks every widget under it to redraw; a dozen colours on the
    chat's panes walked each widget under them a dozen times, now once."""
    from textual.dom import DOMNode

    walked: Counter[DOMNode] = Counter()
    walk = DOMNode.walk_children
    restyling: list[bool] = []

    def counted(node, *args, **kwargs):
        if restyling:
            walked[node] += 1
        return walk(node, *args, **kwargs)

    app = make_app(ScriptedEngine([]), settings=Settings(theme="mcp-dark"), transcript=conversation(20))
    restyle = app.refresh_css

    def counted_restyle(animate: bool = True) -> None:
        restyling.append(True)
        try:
            restyle(animate)
        finally:
            restyling.clear()

    app.refresh_css = counted_restyle  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: not app.turns.running, what="the loaded exchanges' summaries")
        DOMNode.walk_children = counted  # type: ignore[method-assign]
        try:
            app.theme = "mcp-light"
            await wait_for(pilot, lambda: walked, what="the restyle")
            await pilot.pause()
        finally:
            DOMNode.walk_children = walk  # type: ignore[method-assign]
    under_the_app = Counter({node: count for node, count in walked.items() if isinstance(node, Widget)})
    assert under_the_app and max(under_the_app.values()) <= 2, under_the_app.most_common(3)


async def test_drawing_does_not_look_the_theme_up_in_textuals_table_each_line(monkeypatch):
    """Every line drawn asks for the current theme (its ANSI colours); Textual's ``get_theme`` copies
    its table of themes twice per question (about 900 questions for one theme change over a loaded
    chat). The app's keeps the answer until a theme is registered or unregistered."""
    from textual.app import App
    from textual.theme import Theme

    asked: list[str] = []
    textual_get_theme = App.get_theme

    def counted(app, name):
        asked.append(name)
        return textual_get_theme(app, name)

    monkeypatch.setattr(App, "get_theme", counted)
    app = make_app(ScriptedEngine([]), servers=[], transcript=conversation(10), autosave=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot, app)
        await pilot.pause()
        asked.clear()
        app.theme = "mcp-light" if app.theme != "mcp-light" else "mcp-dark"
        await wait_for(pilot, lambda: not app._batch_count, what="the theme drawn")
        await app.screen.wait_for_refresh()
        assert len(asked) <= 2, len(asked)  # the new theme's name looked up once (and a fallback)
        app.register_theme(Theme(name="mct-test-changed", primary="#004578"))
        assert app.get_theme("mct-test-changed") is not None  # a theme registered is found at once
        app.unregister_theme("mct-test-changed")
        assert app.get_theme("mct-test-changed") is None
