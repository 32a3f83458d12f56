"""A resource blob declared ``text/*`` is text: the model is given it decoded, read as a resource, by
the model's ``read_resource`` or embedded in a tool result, with a note when its bytes are not valid in
their charset. tests/servers/lenient_server.py, a real MCPServer, through the hub."""

from __future__ import annotations

import base64

import mcp_types

from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.results import blob_text
from tests.helpers import call_by_model_name
from tests.test_result_type import lenient_config

NOTES = "Buy milk.\nCall Ada about the engine.\n"


async def test_a_text_blob_is_given_to_the_model_as_text():
    async with ServerHub([lenient_config()]) as hub:
        await hub.start_all()
        (notes,) = await hub.read_resource("lenient", "files://notes.txt")
        assert (notes.text, notes.binary, notes.mime_type) == (NOTES, False, "text/plain")
        read = await call_by_model_name(hub, "read_resource", {"server": "lenient", "uri": "files://notes.txt"})
        assert read.ok and read.for_model() == NOTES
        inline = await hub.call_tool("lenient", "notes_inline")
        assert inline.ok and inline.for_model() == NOTES
        (latin1,) = await hub.read_resource("lenient", "files://latin1.txt")
    assert latin1.text == (
        "Caf\ufffd au lait.\n\n[note: files://latin1.txt is declared text/plain but is not valid UTF-8 (first bad "
        "byte at offset 3); undecodable bytes are shown as \ufffd]"
    )


def blob(data: bytes, mime: str) -> mcp_types.BlobResourceContents:
    return mcp_types.BlobResourceContents(uri="files://x", mime_type=mime, blob=base64.b64encode(data).decode())


def test_a_declared_charset_is_used_and_other_blobs_stay_binary():
    assert blob_text(blob("Café".encode("latin-1"), 'text/plain; charset="ISO-8859-1"')) == "Café"
    assert blob_text(blob(b"ok", "text/plain; charset=no-such-charset")) == "ok"
    assert blob_text(blob(b"\x89PNG", "image/png")) is None
    assert blob_text(blob(b"{}", "application/octet-stream")) is None
    not_base64 = mcp_types.BlobResourceContents(uri="files://x", mime_type="text/plain", blob="*not base64*")
    assert blob_text(not_base64) is None
