"""Errors a user is shown as one clear message, never as a traceback."""

from __future__ import annotations

from pathlib import Path


class UserFacingError(Exception):
    """An error whose message is complete on its own; the CLI prints it and exits with ``exit_code``."""

    exit_code = 1


class ConfigError(UserFacingError):
    """A configuration file is wrong: names the file, where in it, and what was expected."""

    exit_code = 2

    def __init__(self, path: Path | str | None, where: str | None, problem: str) -> None:
        self.path = Path(path) if path is not None else None
        self.where = where
        self.problem = problem
        location = str(self.path) if self.path is not None else "configuration"
        if where:
            location = f"{location}: {where}"
        super().__init__(f"{location}: {problem}")
