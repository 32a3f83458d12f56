"""What servers say while they work, in ``-p`` and ``--plain``: the real CLI (in this process,
tests/cli_in_process.py), a scripted model endpoint and the real notify server
(tests/servers/notify_server.py, in memory)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.transcript import parse, read_transcript_text
from tests.cli_in_process import servers_in_memory
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_notifications import ERAS, NOTIFY_SERVER, notify_server
from tests.test_oneshot import run_cli, saved_conversations


def notify_servers(folder: Path, *flags: str, **settings: object) -> Path:
    """mcp.json with the notify server, which the CLI run in this process connects in memory (``in_memory``)."""
    config = folder / "servers.json"
    server = {"command": sys.executable, "args": [NOTIFY_SERVER, *flags], **settings}
    config.write_text(json.dumps({"servers": {"notify": server}}))
    return config


def in_memory(*flags: str):
    """The notify server with ``flags`` in memory for the CLI runs inside (none is about its process)."""
    return servers_in_memory({(NOTIFY_SERVER, *flags): lambda: notify_server(*flags)})


def offered(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools") or []]


@pytest.mark.parametrize("era", list(ERAS))
def test_one_shot_prints_progress_lines_and_warnings_and_offers_a_new_tool_in_the_same_turn(
    era, tmp_path, isolated_user_dirs
):
    script = [
        tool_reply("count", {"steps": 3}),
        tool_reply("add_tool", {"name": "fresh_tool"}, call_id="call_2"),
        tool_reply("fresh_tool", {}, call_id="call_3"),
        "Counted and added.",
    ]
    with in_memory(*ERAS[era]), ScriptedEndpoint(script) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(notify_servers(tmp_path, *ERAS[era])),
            "-p",
            "count to three, then add a tool and call it",
            "--yes",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Counted and added.\n"
    err = result.stderr
    # The latest progress at most once a frame, the last always (servers/call_clock.py).
    shown = [line.strip() for line in err.splitlines() if line.startswith("  ⋯ count ")]
    assert shown[-1] == "⋯ count 3/3 step 3"
    assert set(shown) <= {"⋯ count 1/3 step 1", "⋯ count 2/3 step 2", "⋯ count 3/3 step 3"}
    assert "notify: warning [notify.work]: counting is done\n" in err
    assert "counted 1" not in err  # an info message is not printed
    assert "fresh_tool" not in offered(endpoint.requests[2 - 1])
    assert "fresh_tool" in offered(endpoint.requests[2])  # the request after add_tool, same turn
    assert endpoint.requests[3]["messages"][-1]["content"] == "I am fresh_tool"
    [saved] = saved_conversations(isolated_user_dirs)
    text = read_transcript_text(saved)
    assert '"progress": {"progress": 3.0, "total": 3.0, "message": "step 3"}' in text
    first = parse(text).exchanges[0].steps[0].proposals[0].result
    assert first is not None and first.progress is not None and first.progress.describe() == "3/3 step 3"
    with in_memory(*ERAS[era]), ScriptedEndpoint([]) as endpoint:
        resumed = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--plain",
            "--transcript",
            str(saved),
            "--mcp-config",
            str(notify_servers(tmp_path, *ERAS[era])),
            cwd=tmp_path,
            dirs=isolated_user_dirs,
            stdin="bye\n",
        )
    assert resumed.returncode == 0, resumed.stderr
    assert "→ done (last progress 3/3 step 3)" in resumed.stdout


def test_plain_prints_progress_without_a_total_and_offers_configured_roots_and_roots_commands(
    tmp_path, isolated_user_dirs
):
    script = [tool_reply("count_without_total", {"steps": 2}), "Two.", tool_reply("list_roots", {}), "Listed."]
    added, shared, own = tmp_path / "added", tmp_path / "shared", tmp_path / "own"
    for folder in (added, shared, own):
        folder.mkdir()
    (isolated_user_dirs / "config").mkdir()
    (isolated_user_dirs / "config" / "config.toml").write_text(
        f'roots = ["{shared}"]\n[server_roots]\nnotify = ["{own}"]\nother = ["{tmp_path}"]\n'
    )
    with in_memory(*ERAS["2025-11-25"]), ScriptedEndpoint(script) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--plain",
            "--yes",
            "--mcp-config",
            str(notify_servers(tmp_path, *ERAS["2025-11-25"], logLevel="error")),
            cwd=tmp_path,
            dirs=isolated_user_dirs,
            stdin=f"count\n/roots add {added}\n/roots add {tmp_path / 'nope'}\nroots please\nbye\n",
        )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    shown = [line.strip() for line in out.splitlines() if "⋯ count_without_total" in line]
    assert shown[-1] == "⋯ count_without_total 2 item 2"
    assert set(shown) <= {"⋯ count_without_total 1 item 1", "⋯ count_without_total 2 item 2"}
    assert f"added root {added}; 1 server was told at once; the others see the new roots" in out
    assert f"roots unchanged: {tmp_path / 'nope'} is not a folder" in out
    assert len(endpoint.requests) == 4  # the /roots lines never reached the model
    roots_result = endpoint.requests[3]["messages"][-1]["content"]
    assert roots_result.splitlines() == [tmp_path.as_uri(), shared.as_uri(), added.as_uri(), own.as_uri()]


def test_a_bad_log_level_in_mcp_json_is_named_with_its_file_and_key(tmp_path, isolated_user_dirs):
    config = notify_servers(tmp_path, logLevel="loud")
    result = run_cli("--demo", "-p", "hi", "--mcp-config", str(config), cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 2
    assert str(config) in result.stderr and "logLevel" in result.stderr and "warning" in result.stderr
