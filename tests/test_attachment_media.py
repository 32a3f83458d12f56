"""Images and audio attached to a message (a prompt's, a resource's): their bytes kept as a tool
result's are (bounded, the same code), what the model is told, the conversation file and its media
folder, and ``--plain``/``-p``. Real servers: tests/servers/attachments_server.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.core.attachments import Attachment, user_content
from mcp_chat_tui.core.content import MAX_MEDIA_BYTES, ContentPart
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.catalog import within_budget
from mcp_chat_tui.servers.commands import parse_command
from mcp_chat_tui.transcript import Transcript, TranscriptRecorder, parse, read_transcript_text, to_openai_messages
from mcp_chat_tui.transcript.format import render
from mcp_chat_tui.transcript.media import keep_attached_media, media_folder, read_conversation, self_contained
from mcp_chat_tui.transcript.model import Exchange
from tests.helpers import ATTACHMENTS_SERVER, attachments_config
from tests.scripted_endpoint import ScriptedEndpoint
from tests.servers.results_server import noisy_png, short_wav, small_png
from tests.test_oneshot import run_cli, saved_conversations

ERAS = pytest.mark.parametrize("flags", [(), ("--legacy-only",)], ids=["2026-07-28", "2025-11-25"])


async def _prompt(hub: ServerHub, command: str) -> tuple[str, list[Attachment]]:
    parsed = parse_command(command, hub.prompts())
    return await hub.get_prompt(parsed.prompt, parsed.arguments)


@ERAS
async def test_an_image_or_audio_attachment_keeps_its_bytes_and_the_model_is_told_a_line(flags):
    async with ServerHub([attachments_config("pictures", *flags)]) as hub:
        await hub.start_all()
        assert hub.status("pictures").protocol_version == ("2025-11-25" if flags else "2026-07-28")
        text, [command, flag] = await _prompt(hub, "/describe_flag")
        assert text == "Describe this flag." and command.kind == "prompt"
        assert (flag.kind, flag.media.kind, flag.media.mime_type) == ("image", "image", "image/png")
        assert flag.media.data == small_png() and flag.media.size == len(small_png())
        assert flag.text == f"[binary contents: image/png, {len(small_png())} B; not shown to the model]"
        _, [_, noise] = await _prompt(hub, "/look_at_noise")  # an image as an embedded resource
        assert (noise.uri, noise.media.data) == ("images://noise", noisy_png())
        _, [_, for_you] = await _prompt(hub, "/for_you")  # the user's only: shown, not told (as results)
        assert for_you.media.audience == ("user",) and for_you.media.data == small_png()
        assert user_content("Say hello.", [for_you]) == "Say hello."
        _, [_, sound] = await _prompt(hub, "/listen")
        assert (sound.media.kind, sound.media.data) == ("audio", short_wav())

        [read_flag] = await hub.read_resource("pictures", "images://flag")
        assert read_flag.media.data == small_png()
        [beep] = await hub.read_resource("pictures", "sounds://beep")
        assert beep.media.kind == "audio" and beep.media.mime_type == "audio/wav"
        [blob] = await hub.read_resource("pictures", "files://blob")  # neither: described, as results do
        assert blob.media is None and blob.binary and blob.size == 256


def test_the_images_and_audio_of_one_prompt_are_bounded_in_all_as_a_results_are():
    big = bytes(MAX_MEDIA_BYTES)  # each within the limit of one block; three pass the limit of all
    attachments = [
        Attachment("image", "s", f"big {n}", media=ContentPart("image", "", "image/png", len(big), big))
        for n in range(3)
    ]
    kept = within_budget([Attachment("prompt", "s", "p"), *attachments])
    assert [a.media.data is not None for a in kept[1:]] == [True, True, False]
    assert kept[3].media.note == "not kept: the attachments' images and audio pass 16.0 MB"
    assert kept[3].media.media_problem() == kept[3].media.note


def _attached(data: bytes, name: str) -> Attachment:
    part = ContentPart("image", "", "image/png", len(data), data)
    return Attachment("image", "pictures", name, f"images://{name}", "image/png", "[an image]", len(data), media=part)


def test_the_conversation_keeps_small_images_inline_and_large_ones_beside_it(tmp_path):
    path = tmp_path / "chat.md"
    attached = keep_attached_media([_attached(small_png(), "flag"), _attached(noisy_png(), "noise")], path)
    recorder = TranscriptRecorder(Transcript())
    recorder.user("two pictures", attached)
    text = render(recorder.transcript)
    headers = [json.loads(line[len("📎:") :]) for line in text.splitlines() if line.startswith("📎:")]
    assert "data" in headers[0]["media"] and "file" not in headers[0]["media"]
    [saved] = media_folder(path).iterdir()
    assert headers[1]["media"]["file"] == f"chat.media/{saved.name}" and "data" not in headers[1]["media"]
    assert saved.name.startswith("attached-") and saved.read_bytes() == noisy_png()
    path.write_text(text)

    loaded = read_conversation(path).exchanges[0].attachments  # the media folder's files read with it
    assert [a.media.media_bytes() for a in loaded] == [small_png(), noisy_png()]
    assert loaded[1].media.file and render(parse(text, path)) == text
    assert parse(text, path).exchanges[0].attachments[1].media.media_bytes() is None  # parsing alone reads no file

    elsewhere = tmp_path / "shared" / "copy.md"  # an export needs no media folder beside it
    elsewhere.parent.mkdir()
    elsewhere.write_text(self_contained(read_conversation(path)))
    exported = parse(elsewhere.read_text(), elsewhere).exchanges[0].attachments[1].media
    assert not exported.file and exported.media_bytes() == noisy_png()


def test_an_older_attachment_without_media_reads_as_before_and_the_model_gets_the_same_text():
    old = '💬: look\n\n📎: {"kind": "image", "server": "docs", "mimeType": "image/png", "size": 70}\n```\n[a pixel]\n```\n'
    [attachment] = parse(old).exchanges[0].attachments
    assert attachment.media is None and attachment.size == 70
    with_media = Transcript([Exchange("look", attachments=[_attached(small_png(), "flag")])])
    content = to_openai_messages(parse(render(with_media)))[0]["content"]
    assert content == "look\n\n[attached: pictures › images://flag (image/png, 86 B)]\n[an image]"


def _servers(folder: Path) -> Path:
    config = folder / "servers.json"
    config.write_text(json.dumps({"servers": {"pictures": {"command": sys.executable, "args": [ATTACHMENTS_SERVER]}}}))
    return config


def test_one_shot_names_the_attached_image_and_plain_shows_it_again_on_resume(tmp_path, isolated_user_dirs):
    common = ("--endpoint", "URL", "scripted", "--mcp-config", str(_servers(tmp_path)))
    with ScriptedEndpoint(["Red and blue."]) as endpoint:
        args = [endpoint.url if arg == "URL" else arg for arg in common]
        result = run_cli(*args, "-p", "/describe_flag", cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    assert (
        "📎 pictures › image from describe_flag (image/png, 86 B)\n     ▣ image image/png, 86 B, 16×8 px"
        in result.stderr
    )
    content = endpoint.requests[0]["messages"][-1]["content"]
    assert content.endswith(
        "[attached: pictures › image from describe_flag (image/png, 86 B)]\n"
        "[binary contents: image/png, 86 B; not shown to the model]"
    )
    [saved] = saved_conversations(isolated_user_dirs)
    [_, image] = parse(read_transcript_text(saved), saved).exchanges[0].attachments
    assert image.media.media_bytes() == small_png()

    with ScriptedEndpoint(["Still a flag."]) as endpoint:
        args = [endpoint.url if arg == "URL" else arg for arg in common]
        resumed = run_cli(
            *args, "--plain", "--transcript", str(saved), cwd=tmp_path, dirs=isolated_user_dirs, stdin="and?\nbye\n"
        )
    assert resumed.returncode == 0, resumed.stderr
    assert "     ▣ image image/png, 86 B, 16×8 px" in resumed.stdout
    assert endpoint.requests[0]["messages"][0]["content"] == content
