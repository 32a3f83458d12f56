"""The hub's OAuth sign-in path for http and sse servers: the provider for a start, what a failed
sign-in does to the server, and signing in again with a person to authorize it.

Mixed into ``ServerHub`` (like ``CatalogAccess`` and ``ServerContext``); the protocol itself is
the SDK's, wired up in ``servers/oauth.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.servers.oauth import SignInPrompt, oauth_failure, open_oauth_session
from mcp_chat_tui.servers.state import ServerState, ServerStatus
from mcp_chat_tui.servers.token_vault import TokenVault


class SignIn:
    """What ``ServerHub`` does to sign in to servers (mixed in; uses its ``_runtimes``, ``redactor``,
    ``token_vault``, ``restart`` and ``_set_state``)."""

    _runtimes: dict[str, Any]
    redactor: Redactor
    token_vault: TokenVault
    _set_state: Callable[..., None]
    restart: Callable[[str], Awaitable[ServerStatus]]

    async def sign_in(self, name: str, prompt: SignInPrompt) -> ServerStatus:
        """Start ``name`` again with a person to authorize it (``prompt`` shows them the URL); the
        init timeout waits for them. Returns the state it ends in (ready, or why not)."""
        rt = self._runtimes[name]
        rt.sign_in_prompt = prompt
        try:
            return await self.restart(name)
        finally:
            rt.sign_in_prompt = None

    def forget_sign_in(self, name: str) -> bool:
        """Drop the tokens (and registered client) kept for ``name``; True when there were some."""
        return self.token_vault.forget(self._runtimes[name].config.url or "")

    async def _wait_for_start(self, rt: Any, timeout: float) -> None:
        """Wait until the start settles; the time a person takes to sign in does not count
        against ``timeout`` (raises TimeoutError past it)."""
        await rt.person.wait(rt.settled, timeout)

    def _oauth(self, rt: Any, generation: int) -> Any:
        """The OAuth sign-in for an http or sse server (None where it is off); see servers/oauth.py."""
        if rt.config.oauth_settings is None:
            return None
        prompt = rt.sign_in_prompt
        # Once the sign-in is over, a later 401 is not met with the person of that sign-in.
        asked = rt.person.timed(prompt, lambda: rt.sign_in_prompt is prompt, rt.config.name) if prompt else None
        rt.oauth = open_oauth_session(
            rt.config,
            self.token_vault,
            prompt=asked,
            on_failure=partial(self._oauth_failed, rt, generation),
            on_secret=lambda value: self.redactor.add(f"{rt.config.name} sign-in", value),
        )
        return rt.oauth.provider

    def _oauth_failed(self, rt: Any, generation: int, exc: Exception) -> None:
        """The sign-in stopped (needs a person, refused, broken): the SDK's transport would only
        log it and wait, so the start ends here, with why; a running server needs sign-in again."""
        if generation != rt.generation or rt.stopping:
            return
        state, reason = oauth_failure(rt.config, exc, rt.http_error)
        reason = self.redactor.text(reason)
        if rt.status.state == ServerState.STARTING and rt.task is not None and not rt.start_refused:
            rt.start_refused, rt.refused_state = reason, state
            rt.task.cancel()
        elif rt.status.state.usable:
            self._set_state(rt, state, reason)
            rt.stop.set()

    async def _close_oauth(self, rt: Any) -> None:
        """Close the sign-in session of a start that ended."""
        if rt.oauth is not None:
            await rt.oauth.close()
            rt.oauth = None
