"""A tool call's progress as its server reports it (``notifications/progress``), shared by the hub,
the agent, the front ends and the transcript."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PROGRESS_MESSAGE_CHARS = 200  # a progress message is cut to this


@dataclass(frozen=True)
class ToolProgress:
    """The latest ``notifications/progress`` of one call: ``progress`` of ``total`` (None: unknown)."""

    progress: float
    total: float | None = None
    message: str = ""

    @property
    def fraction(self) -> float | None:
        """How much is done, 0 to 1 (None without a total)."""
        if not self.total or self.total <= 0:
            return None
        return max(0.0, min(1.0, self.progress / self.total))

    def count(self) -> str:
        """``2/3`` (``2`` without a total)."""
        return _number(self.progress) + (f"/{_number(self.total)}" if self.total is not None else "")

    def describe(self) -> str:
        """``2/3 message`` (``2 message`` without a total), as the plain console prints it."""
        return f"{self.count()} {self.message}".rstrip()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"progress": self.progress}
        if self.total is not None:
            data["total"] = self.total
        if self.message:
            data["message"] = self.message
        return data

    @classmethod
    def from_json(cls, data: object) -> ToolProgress | None:
        """The progress a transcript recorded (None when the value is not one)."""
        if not isinstance(data, dict) or not isinstance(data.get("progress"), int | float):
            return None
        total = data.get("total")
        message = data.get("message")
        return cls(
            float(data["progress"]),
            float(total) if isinstance(total, int | float) else None,
            message if isinstance(message, str) else "",
        )


def progress_bar(progress: ToolProgress, width: int = 8) -> str:
    """A bar of ``width`` cells (``▰▱``) for a progress with a total; a count without one."""
    fraction = progress.fraction
    if fraction is None:
        return f"⋯ {_number(progress.progress)}"
    filled = round(fraction * width)
    return "▰" * filled + "▱" * (width - filled)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
