"""Images, audio, structured content and annotations in the app: the chat card, the call's detail
screen, the conversation file and its media folder, and a resumed conversation."""

from __future__ import annotations

import json
import stat

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.transcript import parse
from mcp_chat_tui.transcript.media import media_folder, read_conversation, self_contained
from mcp_chat_tui.ui.screens.detail import CallDetailScreen
from mcp_chat_tui.ui.widgets.media import IMAGE_WIDGET, MediaView, StructuredPreview
from tests.fakes import ScriptedEngine, call
from tests.test_results import results_config
from tests.ui_helpers import make_app, send, wait_for, wait_ready, wait_turn_done


def drawn_images(widget) -> list:
    return list(widget.query(IMAGE_WIDGET))


async def run_turn(pilot, prompt: str) -> None:
    await wait_ready(pilot, pilot.app)
    await send(pilot, prompt)
    await wait_turn_done(pilot, pilot.app)


async def test_an_image_result_is_drawn_in_the_card_and_the_detail_screen_and_saved_on_s(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    engine = ScriptedEngine([[call("picture", {}, "call_1")], "a flag"])
    app = make_app(engine, [results_config()], policy=ApprovalPolicy("auto"), autosave=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await run_turn(pilot, "show me a flag")
        chat = app.query_one("#chat")
        await wait_for(pilot, lambda: drawn_images(chat), what="the image under the card")
        assert "▣ image image/png, 86 B, 16×8 px" in str(chat.query_one(MediaView).query_one(".media-line").render())
        await pilot.press("f3", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallDetailScreen), what="the call detail")
        await wait_for(pilot, lambda: drawn_images(app.screen), what="the image in the detail screen")
        await pilot.press("s", "s")
        await wait_for(pilot, lambda: len(list(tmp_path.glob("call_1-*.png"))) == 2, what="two saved files")
        assert sorted(path.name for path in tmp_path.glob("*.png")) == ["call_1-1-2.png", "call_1-1.png"]


async def test_bad_image_bytes_show_a_line_in_the_card_and_nothing_crashes(tmp_path):
    engine = ScriptedEngine([[call("bad_image", {"kind": "truncated"}, "call_1")], "it was broken"])
    app = make_app(engine, [results_config()], policy=ApprovalPolicy("auto"), autosave=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await run_turn(pilot, "show me a broken image")
        chat = app.query_one("#chat")
        await wait_for(pilot, lambda: chat.query(".media-problem"), what="the line saying why")
        line = str(chat.query_one(".media-problem").render())
        assert line.startswith("not shown: the image is damaged or cut short")
        assert not drawn_images(chat)


async def test_the_detail_screen_shows_blocks_with_annotations_and_structured_content(tmp_path):
    engine = ScriptedEngine(
        [
            [
                call("annotated", {}, "call_1"),
                call("weather", {"city": "Oslo"}, "call_2"),
                call("bad_weather", {"city": "Oslo"}, "call_3"),
            ],
            "done",
        ]
    )
    app = make_app(engine, [results_config()], policy=ApprovalPolicy("auto"), autosave=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await run_turn(pilot, "annotate")
        record = next(r for r in app.calls_table.records.values() if r.tool == "annotated")
        app.push_screen(CallDetailScreen(record, app.clock))
        await wait_for(pilot, lambda: app.screen.query(".detail-body"), what="the call detail")
        body = str(app.screen.query_one(".detail-body").query_one("Static").render())
        assert "[2] text · audience: user · not sent to the model\nfor the user only: SECRET-NOTE" in body
        assert "[3] text · audience: user, assistant · priority: 0.9" in body
        told = [m["content"] for m in app.agent.messages if m["role"] == "tool"]
        assert "for the model: 42\nfor both" in told and not any("SECRET" in text for text in told)
        weather = next(r for r in app.calls_table.records.values() if r.tool == "weather")
        app.pop_screen()
        app.push_screen(CallDetailScreen(weather, app.clock))
        await wait_for(pilot, lambda: app.screen.query(".detail-body"), what="the weather detail")
        body = str(app.screen.query_one(".detail-body").query_one("Static").render())
        assert 'structured content:\n{\n  "city": "Oslo",\n  "celsius": 21.5\n}' in body
        preview = str(app.query_one("#chat").query_one(StructuredPreview).render())
        assert preview == '{\n  "city": "Oslo",\n  "celsius": 21.5\n}'
        broken = next(r for r in app.calls_table.records.values() if r.tool == "bad_weather")
        assert broken.state.value == "error"
        assert "its result does not match the tool's output schema" in broken.result.failure.message
        why = str(app.servers_table.get_cell("results", "reason"))
        assert why == "1 protocol problem"


async def test_images_are_kept_with_the_conversation_and_shown_again_on_resume(tmp_path):
    path = tmp_path / "chat.md"
    engine = ScriptedEngine([[call("picture", {}, "call_1"), call("photo", {}, "call_2")], "two pictures"])
    app = make_app(engine, [results_config()], policy=ApprovalPolicy("auto"), transcript_file=path)
    async with app.run_test(size=(100, 40)) as pilot:
        await run_turn(pilot, "pictures please")
    text = path.read_text()
    headers = [json.loads(line.split("] ", 1)[1]) for line in text.splitlines() if line.startswith("🛠️:")]
    small, large = headers[0]["parts"], headers[1]["parts"]
    assert "data" in small[1] and "file" not in small[1]  # 86 bytes: inline, the file stays whole
    assert large[0]["file"] == "chat.media/call_2-1.png" and "data" not in large[0]
    saved = media_folder(path) / "call_2-1.png"
    assert stat.S_IMODE(saved.stat().st_mode) == stat.S_IMODE(path.stat().st_mode)
    assert not list(media_folder(path).glob(".*tmp"))

    elsewhere = tmp_path / "shared" / "copy.md"  # an export needs no media folder beside it
    elsewhere.parent.mkdir()
    elsewhere.write_text(self_contained(read_conversation(path)))
    exported = parse(elsewhere.read_text(), elsewhere).exchanges[0].steps[0].proposals[1].result.parts[0]
    assert not exported.file and exported.media_bytes() == saved.read_bytes()

    resumed = make_app(ScriptedEngine([]), [results_config()], transcript_file=path, transcript=read_conversation(path))
    async with resumed.run_test(size=(100, 40)) as pilot:
        await wait_ready(pilot, resumed)
        chat = resumed.query_one("#chat")
        await wait_for(pilot, lambda: len(drawn_images(chat)) == 2, what="both images again")


def test_snapshot_of_a_result_with_an_image(snap_compare):
    """The call detail of an image result at 80×24: the report, then the image in half blocks."""
    from textual.widgets import Input

    async def run_before(pilot) -> None:
        app = pilot.app
        await run_turn(pilot, "show me a flag")
        for field in app.query(Input):
            field.cursor_blink = False
        await pilot.press("f3", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallDetailScreen), what="the call detail")
        await wait_for(pilot, lambda: drawn_images(app.screen), what="the image")
        app.screen.query_one(".detail-body").scroll_end(animate=False)
        await pilot.pause(0.2)

    engine = ScriptedEngine([[call("picture", {}, "call_1")], "a flag"])
    app = make_app(engine, [results_config()], policy=ApprovalPolicy("auto"), autosave=False)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
