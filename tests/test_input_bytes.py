"""A prompt that is not UTF-8 (a Latin-1 file piped in, a byte in the command line, a line typed in
``--plain``) gets a clear answer naming the byte, never a traceback: the real CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.scripted_endpoint import ScriptedEndpoint

LATIN1_CAFE = "caf\xe9 au lait?".encode("latin-1")  # 0xe9 at position 3
PROBLEM = "is not UTF-8: byte 0xe9 at position 3"


def run(tmp_path: Path, endpoint: ScriptedEndpoint, *args: str | bytes, stdin: bytes) -> tuple[int, str, str]:
    config = tmp_path / "servers.json"
    config.write_text('{"servers": {}}')
    result = subprocess.run(
        [sys.executable, "-m", "mcp_chat_tui.cli.main", "--endpoint", endpoint.url, "scripted"]
        + ["--mcp-config", str(config), "--no-save", *args],
        cwd=tmp_path,
        env=dict(os.environ, COLUMNS="200"),
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    return result.returncode, result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace")


def test_a_piped_prompt_that_is_not_utf8_is_exit_2_naming_the_byte(tmp_path):
    with ScriptedEndpoint(["An answer."]) as endpoint:
        code, out, err = run(tmp_path, endpoint, "-p", "-", stdin=LATIN1_CAFE + b"\n")
        assert not endpoint.requests, "the prompt reached the model"
    assert "Traceback" not in err, err[-600:]
    assert code == 2, err[-600:]
    assert f"the prompt on stdin {PROBLEM}" in err and "iconv" in err
    assert out == ""


def test_a_prompt_argument_that_is_not_utf8_is_exit_2_naming_the_byte(tmp_path):
    with ScriptedEndpoint(["An answer."]) as endpoint:
        code, _, err = run(tmp_path, endpoint, b"-p", LATIN1_CAFE, stdin=b"")
        assert not endpoint.requests, "the prompt reached the model"
    assert "Traceback" not in err, err[-600:]
    assert code == 2, err[-600:]
    assert f"the prompt given with -p {PROBLEM}" in err


def test_a_plain_line_that_is_not_utf8_is_not_sent_and_the_next_one_is(tmp_path):
    with ScriptedEndpoint(["An answer."]) as endpoint:
        code, out, err = run(tmp_path, endpoint, "--plain", stdin=LATIN1_CAFE + b"\nhello\n")
        asked = [m["content"] for request in endpoint.requests for m in request["messages"] if m["role"] == "user"]
    assert "Traceback" not in out + err, (out + err)[-600:]
    assert f"not sent: this line {PROBLEM}" in out
    assert "An answer." in out
    assert asked == ["hello"], asked
    assert code == 0, (out + err)[-600:]
