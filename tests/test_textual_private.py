"""Canaries for Textual's private names the app uses (all in ui/textual_private.py): each one still
exists in the installed Textual, or its test fails naming it and the module to adapt."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from mcp_chat_tui.ui.textual_private import INSTANCE_NAMES, PRIVATE_NAMES


def missing(owner: object, name: str) -> str | None:
    if hasattr(owner, name):
        return None
    where = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", repr(owner))
    return f"textual {version('textual')} has no {where}.{name}: ui/textual_private.py relies on it; adapt it there"


@pytest.mark.parametrize(
    ("owner", "name"), PRIVATE_NAMES, ids=[f"{getattr(o, '__name__', o)}.{n}" for o, n in PRIVATE_NAMES]
)
def test_textual_still_has(owner: object, name: str) -> None:
    assert missing(owner, name) is None, missing(owner, name)


@pytest.mark.parametrize(("make", "name"), INSTANCE_NAMES, ids=[name for _, name in INSTANCE_NAMES])
async def test_textual_objects_still_have_their_own(make, name: str) -> None:
    """Members each object sets for itself (a node's, a table's, a Markdown stream's), on a real one."""
    from textual.app import App

    class Holder(App[None]):
        pass

    async with Holder().run_test():
        made = make() if not isinstance(make, type) else make()
        assert missing(made, name) is None, missing(made, name)


def test_a_name_textual_lost_is_reported_with_the_module_to_adapt() -> None:
    from textual.widgets import DataTable

    said = missing(DataTable, "_a_method_an_upgrade_removed")
    assert said is not None and "DataTable._a_method_an_upgrade_removed" in said and "ui/textual_private.py" in said


def test_get_inner_outer_gives_what_textual_s_own_gives() -> None:
    """The replacement keyed by colours alone (ui/textual_private.py keep_no_gone_widgets) returns the
    styles Textual's own method returns for the same colours."""
    from textual._styles_cache import StylesCache
    from textual.color import Color

    from mcp_chat_tui.ui import textual_private

    for base, background in [(Color(10, 20, 30), Color(200, 100, 0, 0.5)), (Color(0, 0, 0), Color(255, 255, 255))]:
        theirs = textual_private.TEXTUAL_GET_INNER_OUTER(StylesCache(), base, background)
        assert StylesCache().get_inner_outer(base, background) == theirs


async def test_a_gone_app_s_style_caches_are_not_kept() -> None:
    """Once an app has ended, its widgets' style caches (and the lines they rendered) can be collected:
    Textual's own get_inner_outer keeps up to 1,024 of them alive in the process through its cache."""
    import asyncio
    import gc
    import weakref

    from textual.app import App, ComposeResult
    from textual.widgets import Static

    class Shown(App[None]):
        def compose(self) -> ComposeResult:
            yield from (Static(f"line {n}") for n in range(5))

    async def run() -> list[weakref.ref[object]]:
        app = Shown()
        async with app.run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            return [weakref.ref(widget._styles_cache) for widget in app.query(Static)]

    # In a task of its own: Textual's context variables (the active app) stay in the context it ran in.
    caches = await asyncio.create_task(run())
    gc.collect()
    assert caches and [ref() for ref in caches if ref() is not None] == []
