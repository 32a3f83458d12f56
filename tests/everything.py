"""The reference server-everything (npm ``@modelcontextprotocol/server-everything``, a Node program)
that tests/test_everything_server.py and tests/test_tasks_everything.py run against.

Installed from the npm registry on first use, into the cache the conformance step keeps its suite
in (scripts/conformance.py), one version named here, so a clean checkout runs these tests as CI
does; ``MCT_SERVER_EVERYTHING`` names another build's ``dist/index.js``. Where Node or npm is
missing, or the install fails, the tests skip, saying why.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scripts.conformance import cache_dir, npm_install

SPEC = "@modelcontextprotocol/server-everything@2026.8.31"


def install() -> tuple[str, Path]:
    """Node and server-everything's ``dist/index.js``; skips the test, saying why, when there are none."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("server-everything needs Node (node on PATH)")
    configured = os.environ.get("MCT_SERVER_EVERYTHING")
    if configured:
        return node, Path(configured)
    if shutil.which("npm") is None:
        pytest.skip(f"server-everything is installed with npm ({SPEC}), and npm is not on PATH")
    folder = cache_dir() / "server-everything"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:  # one install, whichever worker asks first
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            npm_install(folder, SPEC)
        except (OSError, subprocess.CalledProcessError) as exc:
            pytest.skip(f"could not install {SPEC} into {folder}: {exc}")
    index = folder / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not index.is_file():
        pytest.skip(f"{SPEC} installed into {folder} has no {index.name}")
    return node, index
