"""What ``mcp-chat-tui -p`` costs as it starts with ``--endpoint`` (issue 32): a model behind an
OpenAI-compatible server needs no MLX, mlx-lm, transformers, tokenizers or demo model, and ``-p`` draws
no screen (no Textual); the endpoint's requests share one TLS context. The conformance step starts
this command about 125 times, and the tests that run the CLI in a subprocess dozens more."""

from __future__ import annotations

import os
import re
import ssl
import subprocess
import sys

import httpcore2
import pytest

from mcp_chat_tui.engine import remote
from mcp_chat_tui.engine.remote import OpenAIEngine
from tests.scripted_endpoint import MODEL_ID, ScriptedEndpoint

# Libraries the endpoint's -p run has no use for: the local model's, the demo model's, the screen's.
NOT_WITH_AN_ENDPOINT = (
    "mlx",
    "mlx_lm",
    "transformers",
    "tokenizers",
    "safetensors",
    "huggingface_hub",
    "jinja2",
    "llama_cpp",
    "numpy",
    "PIL",
    "textual",
    "textual_image",
)
QUESTION = [{"role": "user", "content": "Hello?"}]


def imported(stderr: str) -> set[str]:
    """The top-level names of the modules ``python -X importtime`` reported."""
    return {found.group(1).split(".")[0] for found in re.finditer(r"^import time:.*\|\s*(\S+)$", stderr, re.M)}


def test_one_shot_with_an_endpoint_imports_no_model_library_nor_textual(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text('{"servers": {}}')
    with ScriptedEndpoint(["Hello."]) as endpoint:
        command = [sys.executable, "-X", "importtime", "-m", "mcp_chat_tui.cli.main", "--endpoint", endpoint.url]
        command += [MODEL_ID, "--mcp-config", str(config), "--no-save", "-p", "hi"]
        done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "Hello."
    names = imported(done.stderr)
    assert "mcp_chat_tui" in names  # importtime did report the run's imports
    assert sorted(names & set(NOT_WITH_AN_ENDPOINT)) == []


@pytest.fixture
def counted_tls_contexts(monkeypatch):
    """The TLS contexts httpx2 builds while the test runs (its default: ``httpcore2.default_ssl_context``,
    which reads the system's CA certificates)."""
    made: list[ssl.SSLContext] = []
    build = httpcore2.default_ssl_context

    def counted(*args, **kwargs) -> ssl.SSLContext:
        made.append(build(*args, **kwargs))
        return made[-1]

    remote.tls_context.cache_clear()
    monkeypatch.setattr(httpcore2, "default_ssl_context", counted)
    yield made
    remote.tls_context.cache_clear()


async def test_an_endpoints_requests_share_one_tls_context(counted_tls_contexts):
    with ScriptedEndpoint(["One.", "Two."]) as endpoint:
        engine = OpenAIEngine(endpoint.url, MODEL_ID)
        await engine.load()
        for _ in range(2):
            events = [event async for event in engine.stream(QUESTION)]
            assert events
        assert len(endpoint.requests) == 2
    assert len(counted_tls_contexts) == 1
