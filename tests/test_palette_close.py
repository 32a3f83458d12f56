"""A command chosen in the palette is drawn once it has acted: the frames the palette holds as it
closes (Textual's ``delay_update``, 50 ms whatever the command) wait here for the command itself
(``ChatApp.delay_update``, ``PaletteCommands.hold_frames``). Counted in frames, not timed: bench/key_latency.py times it."""

from textual.command import CommandList, CommandPalette

from mcp_chat_tui.config import Settings
from tests.fakes import ScriptedEngine
from tests.ui_helpers import make_app, wait_for, wait_ready


def theme_on_top(app, theme: str) -> bool:
    palette = app.screen
    if not isinstance(palette, CommandPalette) or not palette.query(CommandList):
        return False
    hits = palette.query_one(CommandList)
    if not hits.option_count or hits.highlighted != 0:
        return False
    return str(hits.get_option_at_index(0).hit.text) == f"Change theme: {theme}"  # type: ignore[attr-defined]


async def test_a_theme_chosen_in_the_palette_is_drawn_once_applied():
    app = make_app(ScriptedEngine([]), servers=[], settings=Settings(theme="mcp-dark"))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot, app)
        set_timer = app.set_timer

        def endless_delay(delay, callback=None, *, name=None, **options):
            # the palette's fixed delay never ends here: only the app can let its frames go
            return set_timer(3600 if name == "delay_update" else delay, callback, name=name, **options)

        app.set_timer = endless_delay
        frames: list[tuple[str, str]] = []
        display = app._display

        def noted(screen, renderable) -> None:
            display(screen, renderable)
            if renderable is not None and not app._batch_count:
                frames.append((type(screen).__name__, app.theme))

        app._display = noted
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        await pilot.press(*"change", "space", *"theme:", "space", *"mcp-light")
        await wait_for(pilot, lambda: theme_on_top(app, "mcp-light"), what="the theme at the top of the palette")
        await pilot.press("enter")
        await wait_for(pilot, lambda: ("Screen", "mcp-light") in frames, what="the screen drawn in the new theme")
        assert app._batch_count == 0
