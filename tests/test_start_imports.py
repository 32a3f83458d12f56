"""The full-screen app's first frame waits for no library it does not draw with (issue 33): the
model's (MLX, mlx-lm, transformers), the hub client's, the keyring, the image libraries, the MCP SDK
(its client, server, HTTP and auth parts and its protocol types) are imported after it, when the
model loads, the servers start or an image is first shown.

Checked in a new Python process, which builds the app as ``mcp-chat-tui --demo`` does (the command
line, config.toml and the bundled mcp.json read, the engine and the hub made, nothing started) and
lists the modules loaded when the first frame has been drawn (Textual's ``Ready``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

NOT_BEFORE_THE_FIRST_FRAME = (
    "mlx",
    "mlx_lm",
    "transformers",
    "tokenizers",
    "safetensors",
    "jinja2",
    "huggingface_hub",
    "llama_cpp",
    "keyring",
    "PIL",
    "numpy",
    "textual_image",
    "mcp",
    "mcp_types",
    "httpx2",
    "anyio",
    "starlette",
    "uvicorn",
)

FIRST_FRAME = textwrap.dedent(
    """
    import asyncio, json, sys

    from textual import events

    from mcp_chat_tui.cli.args import build_parser
    from mcp_chat_tui.cli.chat import demo_model_path, make_engine, make_policy
    from mcp_chat_tui.cli.setup import load_planned, make_hub, plan_configuration
    from mcp_chat_tui.ui.app import ChatApp

    LIBRARIES = json.loads(sys.argv[1])

    async def main():
        args = build_parser().parse_args(["--demo"])
        plan = plan_configuration(args)
        hub = make_hub(plan.settings, load_planned(plan))
        app = ChatApp(
            engine=make_engine(args, demo_model_path(), plan.settings.model_options(demo_model_path())),
            hub=hub,
            policy=make_policy(args, plan.settings, load_planned(plan), hub),
            settings=plan.settings,
        )
        loaded = []

        def at_first_frame(message):
            if isinstance(message, events.Ready) and not loaded:
                loaded.append(sorted({name.split(".")[0] for name in sys.modules} & set(LIBRARIES)))

        async with app.run_test(size=(100, 30), message_hook=at_first_frame) as pilot:
            while not loaded:
                await asyncio.sleep(0.01)
            app.exit()
        print(json.dumps(loaded[0]))

    asyncio.run(main())
    """
)


def libraries_at_first_frame(libraries: tuple[str, ...]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME, json.dumps(libraries)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_first_frame_is_drawn_before_the_model_hub_keyring_image_and_sdk_libraries_are_imported(isolated_user_dirs):
    assert libraries_at_first_frame(NOT_BEFORE_THE_FIRST_FRAME) == []


def test_the_check_sees_a_library_the_first_frame_did_import(isolated_user_dirs):
    assert libraries_at_first_frame(("textual", "rich", "mlx")) == ["rich", "textual"]
