"""What the app writes it can read back: any code point (NUL, controls, lone surrogates) through
every writer of the conversation file, saved to a real file and read back as it was; and a
reader that takes time in proportion to the file, whatever its lines hold."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_chat_tui.transcript import (
    AutoSaver,
    ServerRequest,
    ToolResult,
    TranscriptRecorder,
    parse,
    read_transcript_text,
    write_export,
)
from mcp_chat_tui.transcript.media import self_contained
from tests.helpers import examples
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli

# Every code point: lone surrogates and NUL included, and text built to look like the file's escapes.
any_text = st.text(st.characters(exclude_categories=()), max_size=30)
texts = st.one_of(
    any_text,
    st.lists(st.one_of(any_text, st.sampled_from(["\x00", "\ud800", "\\{U+0000}", "\\\\{U+DFFF}", "\r\n", "\\"]))).map(
        "".join
    ),
)
AT = datetime(2026, 1, 31, 9, 15, 7)


@given(
    prompt=texts,
    thought=texts,
    reply=texts,
    name=texts,
    arguments=texts,
    result=texts,
    failure=texts,
    request=texts,
    error=texts,
    summary=texts,
)
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_writer_saves_any_text_and_reads_it_back(
    prompt, thought, reply, name, arguments, result, failure, request, error, summary
):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "chat.md"
        saver = AutoSaver(path)
        recorder = TranscriptRecorder(saver=saver)
        recorder.user(prompt)
        recorder.reply_started(name)
        recorder.thought(thought)
        recorder.text(reply)
        for call_id, content, status in (("call_1", result, "done"), ("call_2", failure, "error")):
            recorder.proposed({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
            recorder.chose(call_id, "yo", allowed_by="you (once)")
            recorder.started(call_id, name, AT)
            recorder.finished(ToolResult(name, call_id, status, content, server=name))
        recorder.server_request(ServerRequest(name, "sampling", {"message": request}, "approved", {"text": request}))
        recorder.turn_ended("error", error)
        recorder.summarised(0, summary)
        assert saver.close(), saver.problem  # every save of the run was written
        assert parse(read_transcript_text(path), path) == recorder.transcript

        export = Path(folder) / "copy.md"
        write_export(export, self_contained(recorder.transcript), replace=False)
        assert parse(read_transcript_text(export), export) == recorder.transcript


NUL_AND_SURROGATE = "zero\x00byte and a lone \ud800 surrogate"


def test_p_with_nul_and_a_lone_surrogate_in_the_prompt_a_result_and_the_reply(tmp_path, isolated_user_dirs):
    """The endpoint's JSON carries ``\\u0000`` and ``\\ud800`` (valid JSON, not valid UTF-8 text): the
    answer is printed (the surrogate as ``\\ud800``), the conversation saved and read back whole. A
    call whose arguments hold a lone surrogate cannot be sent (the SDK would end the connection): that
    call fails, and the run goes on (exit 3: a call did not run)."""
    script = [
        tool_reply("echo", {"text": "zero\x00byte"}),
        tool_reply("echo", {"text": "lone \ud800"}, call_id="call_2"),
        "Answer: " + NUL_AND_SURROGATE,
    ]
    with ScriptedEndpoint(script) as endpoint:
        done = run_cli(
            "--endpoint", endpoint.url, "scripted", "--mcp-config", str(fixture_servers(tmp_path)),
            "--yes", "-p", "say it \x07back", cwd=tmp_path, dirs=isolated_user_dirs,
        )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "not saved" not in done.stderr
    assert "the arguments hold a lone surrogate (U+D800), which no server can be sent" in done.stderr
    assert done.stdout == "Answer: zero\x00byte and a lone \\ud800 surrogate\n"
    assert endpoint.requests[2]["messages"][-1]["content"].startswith("Error")  # the model was told, in JSON
    [saved] = (isolated_user_dirs / "data" / "conversations").glob("*.md")
    [exchange] = parse(read_transcript_text(saved), saved).exchanges
    assert exchange.user == "say it \x07back"
    assert exchange.steps[0].proposals[0].result.content == "zero\x00byte"
    assert json.loads(exchange.steps[1].proposals[0].call["function"]["arguments"]) == {"text": "lone \ud800"}
    assert exchange.steps[-1].text == "Answer: " + NUL_AND_SURROGATE


def fixture_servers(folder: Path) -> Path:
    from tests.test_exit_signals import servers_json

    return servers_json(folder)


LONG = 1_000_000
HOSTILE_LINES = {
    "spaces": " " * LONG,
    "a reply header, spaces, then a letter": "🤖:[m]" + " " * LONG + "x",
    "a result header, spaces, then a letter": "🛠️: [a][b]" + " " * LONG + "x",
    "a proposal, spaces, then a letter": "❓:[yo] `{}`" + " " * LONG + "x",
    "a proposal of backticks and spaces": "❓: `" + "` " * (LONG // 2),
    "brackets": "🛠️: " + "[" * LONG,
    "backslashes": "🤖:[" + "\\" * LONG,
    "escapes": "💬: " + "\\{U+0000}" * (LONG // 9),
    "markers": "💬:" * (LONG // 3),
    "nested JSON": "📨: " + "[" * LONG,
    "a fence of backticks": "`" * LONG + " x",
    "JSON after a result header": "🛠️: [a][b] {" + "} " * (LONG // 2),
}

PROBE = """
import sys
from pathlib import Path
from mcp_chat_tui.transcript import TranscriptError, parse, read_transcript_text, recent_conversations
folder = Path(sys.argv[1])
listed = recent_conversations(folder)
for path in sorted(folder.glob("*.md")):
    try:
        parse(read_transcript_text(path), path)
    except TranscriptError as exc:
        assert "Traceback" not in str(exc)
print(len(listed))
"""


def test_reading_and_listing_files_with_1_mb_lines_takes_time_in_proportion(tmp_path):
    """Each line below took quadratic time somewhere (20,000 spaces after a header: 10 s; a 1 MB line:
    hours). A child process reads and lists them all; a minute is far more than linear time needs."""
    for number, line in enumerate(HOSTILE_LINES.values()):
        head = '💬: q\n\n🤖:[m]\n\n❓: `{"id":"a","type":"function","function":{"name":"t","arguments":"{}"}}`\n\n'
        (tmp_path / f"{number:02}-first.md").write_text(f"💬: q\n\n{line}\n", encoding="utf-8")
        (tmp_path / f"{number:02}-later.md").write_text(f"{head}{line}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(2 * len(HOSTILE_LINES))


async def test_the_app_saves_a_reply_with_nul_and_a_lone_surrogate_and_keeps_saving(tmp_path):
    """Was: the first save with a lone surrogate failed, and every later one ("not saved" for the
    rest of the session)."""
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import make_app, send, wait_ready, wait_turn_done

    path = tmp_path / "chat.md"
    app = make_app(ScriptedEngine([NUL_AND_SURROGATE, "and \x1b[31m red"]), transcript_file=path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot, app)
        for prompt in ("first \ud83d", "second"):
            await send(pilot, prompt)
            await wait_turn_done(pilot, app)
        assert app.recorder.saver.flush()
        assert app.status_bar.save_problem == "" and app.recorder.saver.error is None
    exchanges = parse(read_transcript_text(path), path).exchanges
    assert [e.user for e in exchanges] == ["first \ud83d", "second"]
    assert [e.steps[-1].text for e in exchanges] == [NUL_AND_SURROGATE, "and \x1b[31m red"]
