"""Build hook: ships the top-level ``themes/`` and ``mcp.json`` inside the wheel.

They live at the repository top level so users find them, and are copied into
``mcp_chat_tui/_bundled/`` when the package is built, so a non-editable install
finds them too (see ``mcp_chat_tui.core.paths.bundled_path``).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

TOP = Path(__file__).resolve().parent
BUNDLED = ("mcp.json", "themes")


class BuildWithBundled(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "mcp_chat_tui" / "_bundled"
        target.mkdir(parents=True, exist_ok=True)
        for name in BUNDLED:
            source = TOP / name
            if source.is_dir():
                shutil.copytree(source, target / name, dirs_exist_ok=True)
            elif source.exists():
                shutil.copy2(source, target / name)


setup(cmdclass={"build_py": BuildWithBundled})
