"""The MCP SDK is imported on a thread once per process (servers/sdk_import.py), begun by the app as
soon as its first frame is out, before it builds its panes, so that the servers start sooner (issue
33's ready); every wait for it returns once it is imported. Each case runs in a new Python process,
where the SDK is not imported yet."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.test_start_imports import FIRST_FRAME


def run_program(program: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(program), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


WAITS = """
    import asyncio, json, sys, threading
    from mcp_chat_tui.servers import import_sdk

    started = []
    starting = threading.Thread.start

    def start(thread):
        started.append(thread.name)
        starting(thread)

    threading.Thread.start = start

    async def together():
        await asyncio.gather(import_sdk(), import_sdk(), import_sdk())
        return "mcp" in sys.modules

    first = asyncio.run(together())  # three waits on one loop
    asyncio.run(import_sdk())  # a later loop: imported already
    print(json.dumps({"imported": first, "threads started": started}))
"""


def test_every_wait_returns_once_the_sdk_is_imported_on_any_loop():
    seen = run_program(WAITS)
    assert seen == {"imported": True, "threads started": ["sdk-import"]}  # one import for every wait


# The app built as `mcp-chat-tui --demo` builds it (tests/test_start_imports.py), with a look, as the
# panes' styles start to be read, at whether the SDK's import has begun.
AT_THE_PANES = (
    FIRST_FRAME.replace(
        "LIBRARIES = json.loads(sys.argv[1])",
        """LIBRARIES = json.loads(sys.argv[1])
import mcp_chat_tui.ui.app as app_module
from mcp_chat_tui.servers import sdk_import
begun = []
building = app_module.preload_styles

def preload_styles(*args):
    begun.append(sdk_import._started)
    return building(*args)

app_module.preload_styles = preload_styles""",
    )
    .replace(
        "        app.exit()",
        "        while not begun:\n            await asyncio.sleep(0.01)\n        app.exit()",
    )
    .replace("print(json.dumps(loaded[0]))", "print(json.dumps({'begun': begun}))")
)


def test_the_app_begins_the_sdk_import_before_it_builds_its_panes(isolated_user_dirs):
    assert "while not begun" in AT_THE_PANES and "begun.append" in AT_THE_PANES  # the program was built
    seen = run_program(AT_THE_PANES, json.dumps([]))
    assert seen == {"begun": [True]}
