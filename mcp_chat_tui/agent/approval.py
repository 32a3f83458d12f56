"""Which tool calls run without asking: the policy (ask, auto, auto-readonly) and per-tool "always"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from mcp_chat_tui.core.tools import ToolSpec

PolicyMode = Literal["ask", "auto", "auto-readonly"]


class ApprovalPolicy:
    """Decides whether a call needs the user's yes, and remembers "always allow" choices.

    ``saved`` holds the per-tool choices from config.toml (``"always"`` or ``"ask"``,
    keyed by server then tool); an explicit ``"ask"`` there overrides the mode.
    ``on_save(server, tool, value)`` persists a change (``value`` None removes it).
    """

    def __init__(
        self,
        mode: PolicyMode = "ask",
        saved: dict[str, dict[str, str]] | None = None,
        on_save: Callable[[str, str, str | None], None] | None = None,
    ) -> None:
        self.mode = mode
        self._saved = {server: dict(tools) for server, tools in (saved or {}).items()}
        self._session: set[tuple[str, str]] = set()
        self._session_ask: set[tuple[str, str]] = set()
        self._on_save = on_save

    def needs_approval(self, spec: ToolSpec) -> bool:
        return not self.runs_without_asking(spec)

    def runs_without_asking(self, spec: ToolSpec) -> bool:
        key = (spec.server, spec.name)
        if key in self._session_ask:
            return False
        if key in self._session:
            return True
        saved = self._saved.get(spec.server, {}).get(spec.name)
        if saved is not None:
            return saved == "always"
        return self.mode == "auto" or (self.mode == "auto-readonly" and spec.read_only)

    def always_allow(self, spec: ToolSpec, *, save: bool = False) -> None:
        """Run this tool without asking for the rest of the session, and in later ones when ``save``."""
        self._session.add((spec.server, spec.name))
        self._session_ask.discard((spec.server, spec.name))
        if save:
            self._saved.setdefault(spec.server, {})[spec.name] = "always"
            if self._on_save is not None:
                self._on_save(spec.server, spec.name, "always")

    def ask_again(self, spec: ToolSpec) -> None:
        """Ask before this tool again (also forgets a saved "always")."""
        self._session.discard((spec.server, spec.name))
        saved = self._saved.get(spec.server, {})
        if saved.pop(spec.name, None) == "always" and self._on_save is not None:
            self._on_save(spec.server, spec.name, None)

    def toggle(self, spec: ToolSpec, *, save: bool = False) -> bool:
        """Flip auto-run for a tool; returns True when it now runs without asking."""
        if self.runs_without_asking(spec):
            self.ask_again(spec)
            if self.runs_without_asking(spec):  # still allowed by the mode: ask for this tool anyway
                self._session_ask.add((spec.server, spec.name))
            return False
        self.always_allow(spec, save=save)
        return True
