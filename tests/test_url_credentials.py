"""Credentials in a URL (``--endpoint http://user:password@host/v1``, an http server's ``url`` in
mcp.json, ``?token=`` in its query) are used, and never echoed: not in a message, an error, the
conversation file, the log, ``--json`` or ``--check-servers``. The real CLI as a subprocess, a
scripted endpoint that records the Authorization header it gets, ports nothing listens on."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path

from mcp_chat_tui.core.redact import shown_url, without_url_secrets
from mcp_chat_tui.engine.remote import OpenAIEngine
from tests.scripted_endpoint import ScriptedEndpoint, failure
from tests.test_oneshot import demo_servers, run_cli

SECRET = "s3cret-pass"
TOKEN = "t0ken-value"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def with_credentials(url: str) -> str:
    return url.replace("http://", f"http://alice:{SECRET}@")


def written_under(folder: Path) -> str:
    """Every file the app wrote under ``folder`` (its log, its conversations), as text."""
    return "\n".join(path.read_bytes().decode("utf-8", "replace") for path in folder.rglob("*") if path.is_file())


def test_endpoint_credentials_are_sent_and_never_echoed(tmp_path, isolated_user_dirs):
    config = str(demo_servers(tmp_path))
    echo = json.dumps({"error": {"message": f"nothing for alice:{SECRET}"}})  # a server that repeats them
    with ScriptedEndpoint(["hello", failure(500, echo)]) as endpoint:
        url = with_credentials(endpoint.url)
        answered = run_cli(
            "--endpoint",
            url,
            "scripted",
            "--mcp-config",
            config,
            "-p",
            "hi",
            "--json",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
        failed = run_cli(
            "--endpoint", url, "scripted", "--mcp-config", config, "-p", "again", cwd=tmp_path, dirs=isolated_user_dirs
        )
    unreachable = f"http://alice:{SECRET}@127.0.0.1:{closed_port()}/v1"
    unreached = run_cli(
        "--endpoint", unreachable, "scripted", "--mcp-config", config, "-p", "hi", cwd=tmp_path, dirs=isolated_user_dirs
    )
    assert answered.returncode == 0 and json.loads(answered.stdout)["answer"] == "hello", answered.stderr
    basic = "Basic " + base64.b64encode(f"alice:{SECRET}".encode()).decode()
    assert endpoint.authorizations[0] == basic, "the credentials were not sent"
    assert failed.returncode == 1 and f"the model server at {endpoint.url} answered HTTP 500" in failed.stderr
    assert (
        unreached.returncode == 1 and f"cannot reach the model server at {shown_url(unreachable)}" in unreached.stderr
    )
    assert "alice:" not in shown_url(unreachable)
    said = "".join(r.stdout + r.stderr for r in (answered, failed, unreached)) + written_under(isolated_user_dirs)
    assert SECRET not in said, [line for line in said.splitlines() if SECRET in line]
    assert "[redacted" in written_under(isolated_user_dirs / "data")  # the echoed one, in the conversation


def test_a_server_urls_credentials_are_never_echoed(tmp_path, isolated_user_dirs):
    url = f"http://bob:{SECRET}@127.0.0.1:{closed_port()}/mcp?token={TOKEN}&page=2"
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"servers": {"remote": {"url": url}}}))
    checked = run_cli("--mcp-config", str(config), "--check-servers", cwd=tmp_path, dirs=isolated_user_dirs)
    with ScriptedEndpoint(["hello"]) as endpoint:
        chat = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(config),
            "-p",
            "hi",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    said = " ".join((checked.stdout + checked.stderr + chat.stdout + chat.stderr).split())
    assert "cannot connect to" in said and "http://127.0.0.1:" in said and "/mcp?token=[redacted]&page=2" in said, said
    everything = said + written_under(isolated_user_dirs)
    assert SECRET not in everything and TOKEN not in everything, [
        line for line in everything.splitlines() if SECRET in line or TOKEN in line
    ]


async def test_the_engine_names_its_endpoint_without_credentials():
    engine = OpenAIEngine(f"http://alice:{SECRET}@127.0.0.1:{closed_port()}/v1", "m")
    assert SECRET not in engine.endpoint and "alice" not in engine.endpoint
    try:
        await engine.load()
    except Exception as exc:  # noqa: BLE001
        assert SECRET not in str(exc) and str(exc).startswith(f"cannot reach the model server at {engine.endpoint}")
    else:
        raise AssertionError("a closed port answered")


def test_shown_url_drops_userinfo_and_secret_query_values():
    assert shown_url("https://u:p%40ss@host:8443/v1?api_key=abc&model=x&token=t#f") == (
        "https://host:8443/v1?api_key=[redacted]&model=x&token=[redacted]#f"
    )
    assert shown_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
    raw = "https://u:p%40ss@host/v1?key=abc"
    assert without_url_secrets(f"GET {raw} failed; retried https://u:p%40ss@host/v2?key=abc", raw) == (
        "GET https://host/v1?key=[redacted] failed; retried https://host/v2?key=[redacted]"
    )
