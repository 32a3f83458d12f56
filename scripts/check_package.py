"""The packaging step of scripts/check.py: build the sdist and the wheel from it once (as pip does
from PyPI), check what each carries, and install the wheel (not editable) to see that the installed
code finds its bundled files. The expectations are tests/test_packaging.py's, which checks the same
by hand with three builds."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP))

from tests.test_packaging import (  # noqa: E402
    THEMES,
    assert_holds,
    bundled_in_wheel,
    check_installed_wheel,
    required_package_data,
)


def run(*command: str) -> None:
    print("+ " + " ".join(command), flush=True)
    subprocess.run(command, check=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        run(sys.executable, "-m", "build", "-o", str(out / "dist"), str(TOP))
        [sdist] = (out / "dist").glob("mcp_chat_tui-*.tar.gz")
        root = sdist.name.removesuffix(".tar.gz")
        sdist_names = {name.removeprefix(root + "/") for name in tarfile.open(sdist).getnames()}
        top_level = {"mcp.json", "README.md", "pyproject.toml"} | {f"themes/{name}" for name in THEMES}
        assert_holds(sdist, sdist_names, top_level | required_package_data())
        [wheel] = (out / "dist").glob("mcp_chat_tui-*.whl")
        assert_holds(wheel, set(zipfile.ZipFile(wheel).namelist()), bundled_in_wheel() | required_package_data())
        print(f"{sdist.name} and {wheel.name} carry the package data and the bundled files", flush=True)
        check_installed_wheel(wheel, out)
        print("the installed wheel finds its bundled files", flush=True)


if __name__ == "__main__":
    main()
