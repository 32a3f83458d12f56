"""``oauth`` in mcp.json: the sign-in settings of an http or sse server, checked like every key."""

from __future__ import annotations

import json

import pytest

from mcp_chat_tui.config import load_mcp_config
from mcp_chat_tui.config.mcp_models import OAuthSettings
from mcp_chat_tui.core.errors import ConfigError


def load(tmp_path, servers: dict, inputs: list | None = None, answer: str = "a-client-secret-1234"):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": servers, "inputs": inputs or []}))
    return load_mcp_config(path, workspace_folder=tmp_path, ask_input=lambda spec: answer), path


def test_oauth_keys_are_read_and_a_secret_from_a_password_input_is_hidden(tmp_path):
    config, _ = load(
        tmp_path,
        {
            "remote": {
                "url": "https://example.com/mcp",
                "oauth": {
                    "clientId": "my-app",
                    "clientSecret": "${input:secret}",
                    "scope": "read",
                    "callbackPort": 8765,
                },
            },
            "plain": {"url": "https://example.com/mcp"},
            "off": {"url": "https://example.com/mcp", "oauth": False},
            "header": {"url": "https://example.com/mcp", "headers": {"authorization": "Bearer x"}},
            "local": {"command": "true"},
        },
        [{"id": "secret", "type": "promptString", "password": True}],
    )
    remote = config.servers["remote"]
    assert remote.oauth_settings == OAuthSettings(
        client_id="my-app", client_secret="a-client-secret-1234", scope="read", callback_port=8765
    )
    assert "a-client-secret-1234" not in repr(remote) and "${input:secret}" in repr(remote)
    assert config.redactor.text("a-client-secret-1234") == "[redacted: secret]"
    assert config.servers["plain"].oauth_settings == OAuthSettings()
    assert config.servers["off"].oauth_settings is None
    assert config.servers["header"].oauth_settings is None  # the file gives its own Authorization
    assert config.servers["local"].oauth_settings is None


@pytest.mark.parametrize(
    ("oauth", "where", "problem"),
    [
        ({"clientID": "x"}, "servers.remote.oauth.clientID", "unknown key"),
        ({"clientId": 5}, "servers.remote.oauth.clientId", "Input should be a valid string (found a number)"),
        ({"callbackPort": 0}, "servers.remote.oauth.callbackPort", "Input should be greater than or equal to 1"),
        ({"callbackPort": 70000}, "servers.remote.oauth.callbackPort", "Input should be less than or equal to 65535"),
        (
            {"clientSecret": "s3cret"},
            "servers.remote.oauth.clientSecret",
            'a client secret needs its client: add "clientId" (the id the authorization server gave you)',
        ),
        (
            {"tokenEndpointAuthMethod": "client_secret_basic"},
            "servers.remote.oauth.tokenEndpointAuthMethod",
            'it is for a client registered beforehand: add "clientId"',
        ),
        (
            {"clientId": "app", "tokenEndpointAuthMethod": "client_secret_post"},
            "servers.remote.oauth.tokenEndpointAuthMethod",
            'client_secret_post sends the client secret: add "clientSecret"',
        ),
        (
            {"clientId": "app", "clientSecret": "s3cret", "tokenEndpointAuthMethod": "none"},
            "servers.remote.oauth.tokenEndpointAuthMethod",
            'none sends no client secret: remove "clientSecret", or choose client_secret_basic',
        ),
        (
            {"clientId": "app", "clientSecret": "s3cret", "tokenEndpointAuthMethod": "private_key_jwt"},
            "servers.remote.oauth.tokenEndpointAuthMethod",
            "Input should be 'client_secret_basic', 'client_secret_post' or 'none'",
        ),
        (
            {"clientMetadataUrl": "http://example.com/client.json"},
            "servers.remote.oauth.clientMetadataUrl",
            "expected the https address of your client metadata document, with a path "
            "(like https://example.com/mcp-chat-tui.json), found 'http://example.com/client.json'",
        ),
        (
            {"clientMetadataUrl": "https://example.com/"},
            "servers.remote.oauth.clientMetadataUrl",
            "expected the https address of your client metadata document, with a path "
            "(like https://example.com/mcp-chat-tui.json), found 'https://example.com/'",
        ),
        (
            "yes",
            "servers.remote.oauth",
            "expected an object (clientId, clientSecret, tokenEndpointAuthMethod, clientMetadataUrl, scope, callbackPort)"
            " or false, found a string",
        ),
    ],
)
def test_bad_oauth_keys_name_the_file_the_key_and_what_was_expected(tmp_path, oauth, where, problem):
    with pytest.raises(ConfigError) as info:
        load(tmp_path, {"remote": {"url": "https://example.com/mcp", "oauth": oauth}})
    assert str(info.value) == f"{tmp_path / 'mcp.json'}: {where}: {problem}"
    assert "s3cret" not in str(info.value)


def test_oauth_on_a_stdio_server_is_an_error(tmp_path):
    with pytest.raises(ConfigError) as info:
        load(tmp_path, {"local": {"command": "true", "oauth": {"clientId": "x"}}})
    assert str(info.value) == (
        f"{tmp_path / 'mcp.json'}: servers.local.oauth: only http and sse servers sign in with OAuth; remove it"
    )
