"""Images and audio of prompts and resources in the full-screen app: drawn in the resources preview
and under the user's message (as a result's are under its card), kept with the conversation and
drawn again on resume. Real server: tests/servers/attachments_server.py; scripted model."""

from __future__ import annotations

from textual.widgets import Input

from mcp_chat_tui.transcript.media import media_folder, read_conversation
from mcp_chat_tui.ui.screens.resources import ResourcesScreen
from mcp_chat_tui.ui.widgets.chat import UserMessage
from mcp_chat_tui.ui.widgets.completion import CompletionMenu
from mcp_chat_tui.ui.widgets.media import IMAGE_WIDGET, MediaView
from tests.fakes import ScriptedEngine
from tests.helpers import attachments_config
from tests.servers.results_server import noisy_png, short_wav
from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready, wait_turn_done

FLAG_LINE = "▣ image image/png, 86 B, 16×8 px"


def drawn_images(widget) -> list:
    return list(widget.query(IMAGE_WIDGET))


def media_lines(widget) -> list[str]:
    return [str(view.query_one(".media-line").render()) for view in widget.query(MediaView)]


def names(app) -> list[str]:
    menu = app.query_one(CompletionMenu)
    return [candidate.name for candidate in menu.candidates] if menu.is_open else []


async def open_resources(pilot) -> ResourcesScreen:
    await wait_ready(pilot, pilot.app)
    await pilot.press("f4", "o")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ResourcesScreen), what="the resources screen")
    return pilot.app.screen


async def test_the_resources_preview_draws_an_image_and_describes_audio_and_other_bytes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(ScriptedEngine([]), [attachments_config()])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_resources(pilot)
        body = screen.query_one("#resource-body")
        await pilot.press("enter")  # the flag
        await wait_for(pilot, lambda: drawn_images(body), what="the image drawn in the preview")
        assert media_lines(body) == [FLAG_LINE]
        await pilot.press("down", "down", "enter")  # the sound
        await wait_for(pilot, lambda: media_lines(body) == ["♪ audio audio/wav, 0.5 s"], what="the sound's line")
        assert "s[/] save images and audio" in screen.query_one(".resources-keys").content
        await pilot.press("s", "s")  # saved as a result's audio is: a new file each time
        await wait_for(pilot, lambda: len(list(tmp_path.glob("beep-*.wav"))) == 2, what="two saved files")
        assert (tmp_path / "beep-1.wav").read_bytes() == short_wav()
        await pilot.press("down", "enter")  # bytes of no media type: a line, as a result's are
        await wait_for(pilot, lambda: not body.query(MediaView), what="the blob's preview")
        assert "[binary application/octet-stream, 256 bytes]" in str(body.query_one(".resource-preview").render())
        assert "save images" not in screen.query_one(".resources-keys").content
        await pilot.press("s")
        await wait_for(pilot, lambda: "has no images or audio" in list(app._notifications)[-1].message)


async def test_an_image_attached_with_at_is_drawn_under_the_message_kept_and_drawn_again_on_resume(tmp_path):
    path = tmp_path / "chat.md"
    engine = ScriptedEngine(["Red and blue."])
    app = make_app(engine, [attachments_config()], transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press(*"what is @fla")
        await wait_for(pilot, lambda: names(app) == ["@flag"], what="the image in the list")
        await pilot.press("enter")
        prompt = app.query_one("#prompt", Input)
        await wait_for(pilot, lambda: prompt.attached, what="the attachment")
        await pilot.press(*"and @noi")
        await wait_for(pilot, lambda: names(app) == ["@noise"], what="the large image in the list")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(prompt.attached) == 2, what="the second attachment")
        await pilot.press("enter")
        await wait_turn_done(pilot, app)
        chat = app.query_one("#chat")
        await wait_for(pilot, lambda: len(drawn_images(chat)) == 2, what="both images under the message")
        message = chat.query_one(UserMessage)
        assert chat.children.index(message) + 1 == chat.children.index(chat.query(MediaView).first())
        assert media_lines(chat) == [FLAG_LINE, "▣ image image/png, 48.2 KB, 128×128 px"]
        told = engine.prompts[0][-1]["content"]
        assert "[attached: pictures › images://flag (image/png, 86 B)]\n[binary contents: image/png" in told
    [saved] = media_folder(path).iterdir()  # the large one beside the conversation, the small one in it
    assert saved.read_bytes() == noisy_png()

    resumed = make_app(
        ScriptedEngine([]), [attachments_config()], transcript_file=path, transcript=read_conversation(path)
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        chat = resumed.query_one("#chat")
        await wait_for(pilot, lambda: len(drawn_images(chat)) == 2, what="both images again")
        assert media_lines(chat) == [FLAG_LINE, "▣ image image/png, 48.2 KB, 128×128 px"]


async def test_a_prompt_that_embeds_an_image_shows_it_under_the_message():
    engine = ScriptedEngine(["A flag."])
    app = make_app(engine, [attachments_config()], autosave=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send_command(pilot, "/describe_flag")
        await wait_turn_done(pilot, app)
        chat = app.query_one("#chat")
        await wait_for(pilot, lambda: drawn_images(chat), what="the prompt's image under the message")
        assert media_lines(chat) == [FLAG_LINE]
        assert engine.prompts[0][-1]["content"].startswith("Describe this flag.\n\n[attached: pictures › image from")


async def send_command(pilot, command: str) -> None:
    """Type a ``/`` command and send it (Esc closes the completion list first); returns once its
    turn is queued (the prompt is got from the server first: until then no turn is under way)."""
    prompt = pilot.app.query_one("#prompt", Input)
    prompt.focus()
    prompt.value = command
    await pilot.press("escape", "enter")
    await wait_for(pilot, lambda: pilot.app.chat.query(UserMessage), what="the prompt's message in the chat")


def _no_blink(app) -> None:
    for field in app.query(Input):
        field.cursor_blink = False


def test_snapshot_of_an_image_in_the_resources_preview(snap_compare):
    """The resources screen at 80×24 with the flag previewed: its line, then the image in half blocks."""

    async def run_before(pilot) -> None:
        _no_blink(pilot.app)
        screen = await open_resources(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: drawn_images(screen), what="the image")
        await pilot.pause(0.2)

    app = make_app(ScriptedEngine([]), [attachments_config()])
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_of_an_image_under_the_message(snap_compare):
    """The chat at 80×24 after a prompt that embeds an image: the message, its 📎 line, the image."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_ready(pilot, app)
        _no_blink(app)
        await send_command(pilot, "/describe_flag")
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: drawn_images(app.query_one("#chat")), what="the image")
        app.query_one("#chat").scroll_end(animate=False)
        await pilot.pause(0.2)

    app = make_app(ScriptedEngine(["Red and blue."]), [attachments_config()], autosave=False)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
