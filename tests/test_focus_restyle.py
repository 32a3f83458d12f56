"""A focus change into or out of the chat restyles the chat alone, not every widget inside it.

Textual restyles a widget and all it holds when its focus changes; the chat holds a hundred and more
widgets in a long conversation, and only its own style (its tint) follows its focus. Counted, not
timed: bench/key_latency.py times F2 and F3."""

from __future__ import annotations

from textual.css.stylesheet import Stylesheet

from mcp_chat_tui.ui.textual_private import focus_rules_inside
from tests.fakes import ScriptedEngine
from tests.ui_helpers import make_app, send, wait_for, wait_ready


async def test_focusing_and_leaving_the_chat_restyles_only_the_chat(monkeypatch) -> None:
    app = make_app(ScriptedEngine(["One.", "Two.", "Three."]), [])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot, app)
        for prompt in ("a", "b", "c"):
            await send(pilot, prompt)
            await wait_for(pilot, lambda: not app.turns.running, what="the turn")
        chat = app.query_one("#chat")
        inside = len(list(chat.walk_children()))
        assert inside > 10  # the prompts, the replies and their parts
        restyled: list[int] = []
        update_nodes = Stylesheet.update_nodes

        def counted(sheet, nodes, animate=False):
            nodes = list(nodes)
            if chat in nodes:
                restyled.append(len(nodes))
            return update_nodes(sheet, nodes, animate)

        monkeypatch.setattr(Stylesheet, "update_nodes", counted)
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is chat, what="the focus in the chat")
        assert chat.has_focus and chat.styles.background_tint.a > 0  # its focus tint
        await pilot.press("f5")
        await wait_for(pilot, lambda: app.focused is not chat, what="the focus out of the chat")
        await pilot.pause()
        assert restyled == [1, 1], f"restyled with the chat: {restyled} (of {inside} widgets inside it)"
        assert not chat.has_focus and chat.styles.background_tint.a == 0


async def test_no_rule_styles_what_is_inside_the_chat_by_the_chat_s_focus() -> None:
    """What makes restyling the chat alone right: in every theme's style sheets, no selector styles a
    widget inside the chat by the chat's focus."""
    app = make_app(ScriptedEngine([]), [])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot, app)
        chat = app.query_one("#chat")
        for theme in ("mcp-dark", "mcp-light"):
            app.theme = theme
            await pilot.pause()
            assert focus_rules_inside(app.stylesheet, chat) == []


def test_such_a_rule_is_found() -> None:
    from textual.widget import Widget

    sheet = Stylesheet()
    sheet.add_source("Widget:focus Static { color: red; } Widget:focus { color: blue; }", read_from=("t", "t"))
    sheet.parse()
    assert focus_rules_inside(sheet, Widget()) == ["Widget:focus Static"]
