"""The roots the client offers its servers: the folders a server may work in.

Every server gets the working directory, the global ``roots`` of config.toml and its own
``server_roots``; ``/roots add PATH`` and ``/roots remove PATH`` change the shared list while the
app runs (the hub then sends ``notifications/roots/list_changed`` where the protocol has it).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

ROOTS_USAGE = "/roots lists the roots; /roots add PATH and /roots remove PATH change them"


def root_path(text: str, base: Path | None = None) -> Path:
    """``text`` as an absolute folder path (``~`` expanded, relative to ``base`` or the working directory)."""
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return Path(*path.parts).resolve()


class Roots:
    """The shared roots (working directory first) and each server's own, in order, without repeats."""

    def __init__(self, shared: Iterable[Path] = (), per_server: dict[str, list[Path]] | None = None) -> None:
        self.shared: list[Path] = []
        for path in [Path.cwd(), *shared]:
            self._add_to(self.shared, path)
        self.per_server = {name: list(paths) for name, paths in (per_server or {}).items()}

    @staticmethod
    def _add_to(paths: list[Path], path: Path) -> bool:
        path = root_path(str(path))
        if path in paths:
            return False
        paths.append(path)
        return True

    def for_server(self, server: str) -> list[Path]:
        """The roots ``server`` is offered: the shared ones, then its own."""
        roots = list(self.shared)
        for path in self.per_server.get(server, []):
            self._add_to(roots, path)
        return roots

    def add(self, text: str) -> str:
        """Add a shared root; returns what happened, for the user (an error names the path and why)."""
        path = root_path(text)
        if not path.is_dir():
            raise ValueError(f"{path} is not a folder: a root must be an existing folder")
        if not self._add_to(self.shared, path):
            return f"{path} is already a root"
        return f"added root {path}"

    def remove(self, text: str) -> str:
        path = root_path(text)
        if path not in self.shared:
            own = [name for name, paths in self.per_server.items() if path in [root_path(str(p)) for p in paths]]
            where = f" (it is a root of {', '.join(own)} in config.toml's server_roots)" if own else ""
            raise ValueError(f"{path} is not a shared root{where}; the shared roots: {self.describe_shared()}")
        self.shared.remove(path)
        return f"removed root {path}"

    def describe_shared(self) -> str:
        return ", ".join(str(path) for path in self.shared) or "(none)"


def parse_roots_command(text: str) -> tuple[str, str] | None:
    """``("list"|"add"|"remove"|"help", argument)`` for a ``/roots`` line, None for any other text."""
    words = text.strip().split(maxsplit=2)
    if not words or words[0] != "/roots":
        return None
    if len(words) == 1:
        return ("list", "")
    if words[1] in ("add", "remove") and len(words) == 3:
        return (words[1], words[2].strip())
    return ("help", "")
