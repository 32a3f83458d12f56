"""Sign-in from the command line: ``--check-servers``, ``-p`` without a terminal, ``--sign-in NAME``
and ``--sign-out NAME``, against a real protected server on 127.0.0.1. ``--sign-in`` (read line by
line while the browser is played) and ``--plain`` on a terminal run as processes; the runs whose
words, codes and kept tokens are checked run in this process (tests/cli_in_process.py)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp_chat_tui.servers.token_vault import KEYRING_SERVICE
from tests import cli_in_process
from tests.keyring_backend import FileKeyring
from tests.oauth_helpers import follow, protected_server
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply

CLI = [sys.executable, "-m", "mcp_chat_tui.cli.main"]


def mcp_json(folder: Path, url: str, **extra) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"servers": {"guarded": {"type": "http", "url": url, **extra}}}))
    return path


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI in this process, with this process's environment, no terminal and an empty stdin."""
    return cli_in_process.run_cli(args, cwd=cwd, env=dict(os.environ))


def one_line(text: str) -> str:
    return " ".join(text.split())  # tables fold long cells


def test_check_servers_says_needs_sign_in_instead_of_failing(tmp_path):
    with protected_server() as server:
        result = run("--check-servers", "--mcp-config", str(mcp_json(tmp_path, server.url)), cwd=tmp_path)
    out = one_line(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "needs sign-in" in out and "failed" not in out
    assert "1 server needs sign-in: mcp-chat-tui --sign-in guarded" in out


def test_one_shot_without_a_terminal_does_not_sign_in_and_says_how(tmp_path):
    with protected_server() as server, ScriptedEndpoint(["never asked"]) as endpoint:
        config = mcp_json(tmp_path, server.url)
        result = run("--endpoint", endpoint.url, "scripted", "--mcp-config", str(config), "-p", "hi", cwd=tmp_path)
        assert server.stats()["authorized"] == 0
    err = one_line(result.stderr)
    assert result.returncode == 4  # a server needs sign-in
    assert result.stdout == ""
    assert "needs sign-in" in err  # the table
    assert "MCP server needs sign-in: guarded (run mcp-chat-tui --sign-in guarded)" in err


def test_sign_in_prints_the_address_waits_for_the_browser_and_keeps_the_tokens(tmp_path, isolated_user_dirs):
    with protected_server() as server:
        config = str(mcp_json(tmp_path, server.url))

        async def sign_in() -> tuple[list[str], str]:
            process = await asyncio.create_subprocess_exec(
                *CLI, "--sign-in", "guarded", "--mcp-config", config, cwd=tmp_path,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
            lines = []
            while True:
                line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
                assert line, f"no address before the end: {lines} {await process.stderr.read()}"
                lines.append(line)
                if line.startswith(f"{server.issuer}/authorize?"):
                    break
            page = await follow(line.strip())
            assert "Signed in to guarded" in page.text
            rest = (await asyncio.wait_for(process.stdout.read(), 60)).decode()
            assert await process.wait() == 0, rest + (await process.stderr.read()).decode()
            return lines, rest

        lines, rest = asyncio.run(sign_in())
        assert "Sign in to guarded at this address:" in lines[-2]
        assert "signed in to guarded: 2 tools; its tokens are kept in the system keyring" in one_line(rest)

        checked = run("--check-servers", "--mcp-config", config, cwd=tmp_path)
        assert checked.returncode == 0 and "ready" in checked.stdout, checked.stdout
        assert server.stats()["authorized"] == 1

        tokens = json.loads(FileKeyring().get_password(KEYRING_SERVICE, server.url))["tokens"]
        log = (isolated_user_dirs / "log" / "mcp-chat-tui.log").read_text()
        for secret in (tokens["access_token"], tokens["refresh_token"]):
            assert secret not in log and secret not in rest and secret not in checked.stdout + checked.stderr

        forgot = run("--sign-out", "guarded", "--mcp-config", config, cwd=tmp_path)
        assert forgot.returncode == 0
        assert "forgot the sign-in of guarded (kept in the system keyring)" in forgot.stdout
        checked = run("--check-servers", "--mcp-config", config, cwd=tmp_path)
        assert "needs sign-in" in checked.stdout


def test_sign_in_names_a_server_that_does_not_sign_in(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"servers": {"local": {"command": "true"}}}))
    result = run("--sign-in", "nope", "--mcp-config", str(config), cwd=tmp_path)
    assert result.returncode == 2
    assert "no server named 'nope' (its servers: local)" in one_line(result.stderr)
    result = run("--sign-in", "local", "--mcp-config", str(config), cwd=tmp_path)
    assert result.returncode == 2
    assert "local does not sign in with OAuth: it is a stdio server" in one_line(result.stderr)


def test_plain_asks_before_signing_in_and_before_opening_the_browser(tmp_path):
    """On a terminal, --plain offers sign-in for a server that needs it, prints the address whole and
    opens the browser only after a yes; then the chat starts with the server ready."""
    import os
    import pty
    import re
    import select

    opened = tmp_path / "opened.txt"
    with protected_server() as server, ScriptedEndpoint(["hello"]) as endpoint:
        config = mcp_json(tmp_path, server.url)
        env = dict(
            os.environ,
            BROWSER=f"{sys.executable} {Path(__file__).with_name('fake_browser.py')} %s",
            FAKE_BROWSER_LOG=str(opened),
            COLUMNS="100",
        )
        pid, fd = pty.fork()
        if pid == 0:  # the child: the real CLI on the pty
            os.chdir(tmp_path)
            os.execvpe(
                sys.executable,
                [*CLI, "--endpoint", endpoint.url, "scripted", "--plain", "--mcp-config", str(config)],
                env,
            )
        seen = ""

        def read_until(pattern: str) -> re.Match:
            nonlocal seen
            while True:
                found = re.search(pattern, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen))
                if found:
                    return found
                ready, _, _ = select.select([fd], [], [], 60)
                assert ready, f"nothing more after: {seen[-2000:]}"
                chunk = os.read(fd, 65536).decode(errors="replace")
                assert chunk, f"the CLI ended: {seen[-2000:]}"
                seen += chunk

        try:
            read_until(r"guarded needs sign-in\. Sign in now\? \[Y/n\] ")
            assert not opened.exists()
            os.write(fd, b"y\n")
            address = read_until(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)").group(1)
            read_until(r"Open it in your browser\? \[Y/n\] ")
            assert not opened.exists() and server.stats()["authorized"] == 0  # not before the yes
            os.write(fd, b"\n")  # Enter: yes
            read_until(r"guarded: ready")
            read_until(r"prompt ->")
            assert opened.read_text().split() == [address]
            assert server.stats()["authorized"] == 1
            os.write(fd, b"bye\n")
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0
        finally:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            os.close(fd)


async def sign_in_by_cli(config: str, cwd: Path) -> str:
    """``--sign-in guarded``, with the browser following the address it prints; its output."""
    process = await asyncio.create_subprocess_exec(
        *CLI, "--sign-in", "guarded", "--mcp-config", config, cwd=cwd,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    seen = ""
    while "/authorize?" not in seen.splitlines()[-1:][0] if seen else True:
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        assert line, f"no address before the end: {seen} {await process.stderr.read()}"
        seen += line
    await follow(seen.splitlines()[-1].strip())
    seen += (await asyncio.wait_for(process.stdout.read(), 60)).decode()
    assert await process.wait() == 0, seen + (await process.stderr.read()).decode()
    return seen


def test_one_shot_a_call_that_wants_more_access_exits_4_and_the_next_sign_in_asks_for_it(tmp_path):
    script = [
        tool_reply("write_note", {"text": "hi"}),
        "it needs more access",
        tool_reply("write_note", {"text": "hi"}),
    ]
    with protected_server("--step-up") as server, ScriptedEndpoint([*script, "noted"]) as endpoint:
        config = str(mcp_json(tmp_path, server.url))
        asyncio.run(sign_in_by_cli(config, tmp_path))
        turn = ("--endpoint", endpoint.url, "scripted", "--mcp-config", config, "--yes", "--no-save", "-p", "note hi")
        refused = run(*turn, cwd=tmp_path)
        assert refused.returncode == 4, refused.stdout + refused.stderr
        err = one_line(refused.stderr.replace("│", ""))  # the error's panel folds the message
        assert "needs sign-in with more access (mcp mcp:write): run mcp-chat-tui --sign-in guarded" in err
        assert [a["scope"] for a in server.stats()["authorizations"]] == ["mcp"]

        asyncio.run(sign_in_by_cli(config, tmp_path))  # the tokens still work for whoami, yet it authorizes again
        assert [a["scope"] for a in server.stats()["authorizations"]] == ["mcp", "mcp mcp:write"]
        assert server.stats()["registered"] == 1, server.stats()
        answered = run(*turn, cwd=tmp_path)
        assert answered.returncode == 0, answered.stdout + answered.stderr
        assert "noted" in answered.stdout
