"""Which tool calls run without asking, and why: the policy (ask, auto, auto-readonly), trusted
servers, "always" choices, this session's auto-run toggles and ``--yes``.

A choice saved in config.toml names the server it was given to (``SavedRule``); it speaks only for
that server, not for another that takes the same name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcp_chat_tui.agent.events import ApprovalChoice
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.server_identity import SavedRule, ServerIdentity
from mcp_chat_tui.core.tools import ToolSpec

PolicyMode = Literal["ask", "auto", "auto-readonly"]
SAVED_ALWAYS = "saved always (config.toml)"
YOU_ALWAYS = "you (always, this session)"
EDITED_LABEL = "you (edited the arguments)"  # a call the user let run with arguments of their own


@dataclass(frozen=True)
class Verdict:
    """What the policy says of a tool now: whether it ``runs`` without asking, and ``why`` (shown
    beside the call: who allowed it, or why the dialog asks)."""

    runs: bool
    why: str
    denied: bool = False  # config.toml says "never": not run, and nobody is asked


def decision_label(choice: ApprovalChoice, *, save: bool = False) -> str:
    """Who allowed a call the user was asked about (or a batch answer covered), in the words shown beside it."""
    return {
        ApprovalChoice.ALLOW_ONCE: "you (once)",
        ApprovalChoice.ALLOW_PENDING: "you (all waiting)",
        ApprovalChoice.ALWAYS_TOOL: "you (always, saved in config.toml)" if save else YOU_ALWAYS,
        ApprovalChoice.ALWAYS_ALL: "you (always, all waiting)",
    }.get(choice, "")


def _never(spec: ToolSpec, rule: SavedRule, arguments: Mapping[str, Any] | None) -> Verdict | None:
    """The denial config.toml's rule makes of this call, if it makes one."""
    where = f"[approvals.{spec.server}]"
    if rule.choice == "never" and (
        rule.always_when is None or arguments is None or not rule.always_when.matched_by(arguments)
    ):
        return Verdict(False, f'config.toml says "never" for {spec.name} ({where})', denied=True)
    if rule.never_when is not None and arguments is not None and rule.never_when.matched_by(arguments):
        return Verdict(False, f"config.toml: never for {rule.never_when.describe()} ({where})", denied=True)
    return None


class ApprovalPolicy:
    """Decides whether a call needs the user's yes, says why, and remembers "always" choices.

    The first rule that speaks about a tool wins: this session's choice for the tool, then for its
    server, then ``--yes``, then config.toml's saved choices, then the mode (docs/architecture.md,
    "Approval rules").
    """

    def __init__(
        self,
        mode: PolicyMode = "ask",
        saved: dict[str, dict[str, str | SavedRule]] | None = None,
        on_save: Callable[[str, str, SavedRule], None] | None = None,
        *,
        trusted: Iterable[str] = (),
        yes: bool = False,
        identity_of: Callable[[str], ServerIdentity | None] | None = None,
    ) -> None:
        """``saved``: config.toml's choices by server and tool (a bare choice applies to any server of
        that name); ``identity_of(server)``: which server runs under that name now (None: unknown)."""
        self.mode = mode
        self.yes = yes
        self.trusted = frozenset(trusted)
        self._saved = {
            server: {tool: rule if isinstance(rule, SavedRule) else SavedRule(rule) for tool, rule in tools.items()}
            for server, tools in (saved or {}).items()
        }
        self._identity_of = identity_of or (lambda server: None)
        self._tool_session: dict[tuple[str, str], bool] = {}
        self._server_session: dict[str, bool] = {}
        self._on_save = on_save
        self._listeners: list[Callable[[], None]] = []

    def add_listener(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    # ----- deciding --------------------------------------------------------------------------

    def verdict(self, spec: ToolSpec, arguments: Mapping[str, Any] | None = None) -> Verdict:
        """Whether ``spec`` runs without asking now (with ``arguments``: this call of it), and which
        rule says so. config.toml's "never" comes first: not even ``--yes`` or ``auto`` runs it."""
        rule = self._rule(spec)
        if rule is not None and (never := _never(spec, rule, arguments)) is not None:
            return never
        session = self._tool_session.get((spec.server, spec.name))
        if session is not None:
            return (
                Verdict(True, YOU_ALWAYS)
                if session
                else Verdict(False, "you turned auto-run off for this tool (this session)")
            )
        server = self._server_session.get(spec.server)
        if server is not None:
            return (
                Verdict(True, f"you (auto-run for server {spec.server}, this session)")
                if server
                else Verdict(False, f"you turned auto-run off for server {spec.server} (this session)")
            )
        return self._standing_verdict(spec, arguments)

    def _standing_verdict(self, spec: ToolSpec, arguments: Mapping[str, Any] | None = None) -> Verdict:
        """The verdict without this session's toggles: ``--yes``, config.toml, the mode."""
        if self.yes:
            return Verdict(True, "--yes")
        rule = self._rule(spec)
        if rule is not None and rule.always_when is not None:
            if arguments is not None and rule.always_when.matched_by(arguments):
                return Verdict(True, f"config.toml: always for {rule.always_when.describe()}")
            return Verdict(False, f"config.toml asks for {spec.name} unless {rule.always_when.describe()}")
        saved = self.saved_choice(spec)
        if saved == "always":
            return Verdict(True, SAVED_ALWAYS)
        if saved is not None:
            return Verdict(False, f'config.toml says "{saved}" for this tool ([approvals.{spec.server}])')
        verdict = self._mode_verdict(spec)
        unapplied = self.unapplied_rule(spec)
        if unapplied is None or verdict.runs:
            return verdict
        return Verdict(False, f"{self.not_applied_note(spec, unapplied)}; {verdict.why}")

    def _mode_verdict(self, spec: ToolSpec) -> Verdict:
        if self.mode == "auto":
            return Verdict(True, "auto policy")
        if self.mode == "auto-readonly":
            return self._readonly_verdict(spec)
        return Verdict(False, 'approval = "ask": every call asks')

    def _readonly_verdict(self, spec: ToolSpec) -> Verdict:
        if not spec.read_only:
            return Verdict(False, f"auto-readonly: {spec.server} does not mark this tool read-only")
        if spec.server not in self.trusted:
            return Verdict(
                False,
                f"auto-readonly: {spec.server} marks it read-only, but {spec.server} is not "
                "in trusted_servers (config.toml)",
            )
        return Verdict(True, f"auto-readonly (trusted server {spec.server})")

    def runs_without_asking(self, spec: ToolSpec) -> bool:
        return self.verdict(spec).runs

    def saved_choice(self, spec: ToolSpec) -> str | None:
        """config.toml's choice for this tool of the server running now, as loaded or saved since
        ("always", "ask", "never"; None: none, or one saved for another server of that name)."""
        rule = self._rule(spec)
        return rule.choice if rule is not None else None

    def _rule(self, spec: ToolSpec) -> SavedRule | None:
        """config.toml's rule for this tool when it speaks for the server running now."""
        rule = self._saved.get(spec.server, {}).get(spec.name)
        return rule if rule is not None and rule.applies_to(self._identity_of(spec.server)) else None

    def unapplied_rule(self, spec: ToolSpec) -> SavedRule | None:
        """config.toml's rule for this tool when it was saved for another server of that name."""
        rule = self._saved.get(spec.server, {}).get(spec.name)
        return rule if rule is not None and not rule.applies_to(self._identity_of(spec.server)) else None

    def not_applied_note(self, spec: ToolSpec, rule: SavedRule) -> str:
        """Why a saved rule does not speak for the server running now, naming both servers."""
        saved_for = rule.server.describe() if rule.server is not None else "?"
        current = self._identity_of(spec.server)
        now = current.describe() if current is not None else "not known"
        return (
            f'config.toml\'s "{rule.choice}" for {spec.name} was saved for another {spec.server} '
            f"({saved_for}), not applied to this one ({now})"
        )

    # ----- changing --------------------------------------------------------------------------

    def always_allow(self, spec: ToolSpec, *, save: bool = False) -> str | None:
        """Run this tool without asking for the rest of the session; with ``save`` write "always"
        for it in config.toml too. Returns why saving failed (None: saved, or not asked to)."""
        problem = None
        if save:
            rule = SavedRule("always", self._identity_of(spec.server))  # for this server only
            try:
                if self._on_save is not None:
                    self._on_save(spec.server, spec.name, rule)
                self._saved.setdefault(spec.server, {})[spec.name] = rule
            except UserFacingError as exc:
                problem = f"not saved: {exc}"
        self._set_tool(spec, True)
        self._changed()
        return problem

    def withdraw(self, spec: ToolSpec) -> None:
        """Take back this session's "always" for ``spec`` (``/retry`` discards the reply it was given in)."""
        if self._tool_session.get((spec.server, spec.name)) is True:
            del self._tool_session[(spec.server, spec.name)]
            self._changed()

    def toggle(self, spec: ToolSpec) -> bool:
        """Flip auto-run for one tool, for this session (config.toml is not written); returns
        True when it now runs without asking."""
        wanted = not self.runs_without_asking(spec)
        self._set_tool(spec, wanted)
        self._changed()
        return wanted

    def toggle_server(self, server: str, specs: list[ToolSpec]) -> bool:
        """Flip auto-run for every tool of ``server``, for this session: on when any of ``specs``
        asks, else off (then even tools config.toml says "always" for ask, until the app ends;
        the file keeps them). Per-tool choices of this session for them are dropped. Returns
        True when they now run without asking."""
        wanted = not (specs and all(self.runs_without_asking(spec) for spec in specs))
        for spec in specs:
            self._tool_session.pop((spec.server, spec.name), None)
        self._server_session.pop(server, None)
        if any(self._standing_verdict(spec).runs != wanted for spec in specs):
            self._server_session[server] = wanted
        self._changed()
        return wanted

    def _set_tool(self, spec: ToolSpec, wanted: bool) -> None:
        """This session's choice for one tool: kept only where the rules below it say otherwise."""
        key = (spec.server, spec.name)
        self._tool_session.pop(key, None)
        if self.verdict(spec).runs != wanted:
            self._tool_session[key] = wanted
