"""A stdio server's stdout cut into lines (servers/stdout_lines.py) and its lines read without
parsing them whole (servers/noise.py ``outline``): work that grows with what is sent, counted
rather than timed, and memory bounded by the line limit."""

from __future__ import annotations

import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from mcp_chat_tui.servers.noise import outline
from mcp_chat_tui.servers.stdout_lines import HEAD_BYTES, MessageLines, OverlongLine

LINE = st.binary(max_size=300).map(lambda data: data.replace(b"\n", b""))


@given(st.lists(LINE, max_size=30), st.lists(st.integers(1, 700), max_size=40), st.binary(max_size=50))
def test_lines_come_out_whole_in_order_and_each_byte_is_searched_once(lines, cuts, unfinished):
    unfinished = unfinished.replace(b"\n", b"")
    data = b"".join(line + b"\n" for line in lines) + unfinished
    splitter, out, at = MessageLines(), [], 0
    for cut in [*cuts, len(data)]:
        out += splitter.feed(data[at : at + cut])
        at += cut
    out += splitter.feed(data[at:])
    assert out == [line.decode("utf-8", "replace") for line in lines]
    assert splitter.bytes_searched == len(data)


def test_a_50_mb_line_in_64_kib_chunks_is_searched_once_and_decoded_once():
    splitter, chunk = MessageLines(), b"x" * 65536
    chunks = 50_000_000 // len(chunk)
    for _ in range(chunks):
        assert splitter.feed(chunk) == []
    [line] = splitter.feed(b"\n")
    assert len(line) == chunks * len(chunk)
    assert splitter.bytes_searched == chunks * len(chunk) + 1


def test_a_line_over_the_limit_is_dropped_as_it_comes_in_bounded_memory():
    limit = 1024 * 1024
    splitter = MessageLines(limit)
    tracemalloc.start()
    try:
        heard = [item for _ in range(800) for item in splitter.feed(b'{"jsonrpc": "2.0"' + b"x" * 65536)]
        heard += splitter.feed(b"the end of it\nnext\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(heard) == 2, heard
    dropped, after = heard
    assert isinstance(dropped, OverlongLine) and dropped.size > limit and dropped.limit == limit
    assert dropped.head.startswith('{"jsonrpc": "2.0"xxx') and len(dropped.head) == HEAD_BYTES
    assert after == "next"
    assert peak < 4 * limit, f"{peak:,} bytes held for a 52 MB line past a {limit:,} byte limit"


def test_a_line_over_the_limit_within_one_chunk_is_dropped_too():
    splitter = MessageLines(10)
    assert splitter.feed(b"short\n0123456789abc\nok\n") == [
        "short",
        OverlongLine(13, "0123456789abc", 10),
        "ok",
    ]


def test_the_outline_of_a_message_is_read_from_its_head_however_deep_or_long_it_is():
    deep_answer = '{"jsonrpc": "2.0", "id": 7, "result": {"structuredContent": ' + "[" * 100_000
    shape = outline(deep_answer)
    assert shape is not None and shape.is_message and shape.answer_id == 7
    deep_note = '{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": ' + "{" * 100_000
    shape = outline(deep_note)
    assert shape is not None and shape.is_message and shape.answer_id is None
    request = '{"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage", "params": {}}'
    assert outline(request).answer_id is None  # type: ignore[union-attr]
    error = '{"id": "a", "error": {"code": 1, "message": "}{]["}, "jsonrpc": "2.0"}'
    assert outline(error).answer_id == "a"  # type: ignore[union-attr]
    assert outline("[" * 100_000) is None and outline("Listening on port 3000") is None
    assert not outline('{"id": 1, "result": {}}').is_message  # type: ignore[union-attr]
