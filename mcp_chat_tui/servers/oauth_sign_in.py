"""The hub's OAuth sign-in path for http and sse servers: the provider for a start, what a failed
sign-in does to the server, and signing in again with a person to authorize it.

Who is asked when the authorization URL is reached: the person of a sign-in under way
(``sign_in``); for a call refused for want of scopes, ``step_up_prompt`` (the app's sign-in dialog;
their time is no call's), else nobody: the server then needs sign-in with more access, and the
scopes are kept for the next sign-in, which authorizes again even where the tokens still work.

Mixed into ``ServerHub`` (like ``CatalogAccess`` and ``ServerContext``); the protocol itself is
the SDK's, wired up in ``servers/oauth.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.servers.oauth import SignInPrompt, SignInRequest, oauth_failure, open_oauth_session
from mcp_chat_tui.servers.oauth_storage import forget_tokens_short_of_more_access
from mcp_chat_tui.servers.starting import wait_for_start
from mcp_chat_tui.servers.state import ServerState, ServerStatus
from mcp_chat_tui.servers.token_vault import TokenVault

if TYPE_CHECKING:
    from mcp_chat_tui.servers.runtime import ServerRuntime


class SignIn:
    """What ``ServerHub`` does to sign in to servers (mixed in; uses its ``_runtimes``, ``redactor``,
    ``token_vault``, ``restart`` and ``_set_state``)."""

    _runtimes: dict[str, ServerRuntime]
    redactor: Redactor
    token_vault: TokenVault
    _set_state: Callable[..., None]
    restart: Callable[[str], Awaitable[ServerStatus]]
    step_up_prompt: SignInPrompt | None = None  # who signs in again for a call that wants more access

    async def sign_in(self, name: str, prompt: SignInPrompt) -> ServerStatus:
        """Start ``name`` again with a person to authorize it (``prompt`` shows them the URL); the
        init timeout waits for them. Returns the state it ends in (ready, or why not)."""
        runtime = self._runtimes[name]
        forget_tokens_short_of_more_access(self.token_vault, runtime.config.url or "")
        runtime.sign_in_prompt = prompt
        try:
            return await self.restart(name)
        finally:
            runtime.sign_in_prompt = None

    def forget_sign_in(self, name: str) -> bool:
        """Drop the tokens (and registered client) kept for ``name``; True when there were some."""
        return self.token_vault.forget(self._runtimes[name].config.url or "")

    async def _wait_for_start(self, runtime: ServerRuntime, timeout: float) -> None:
        """Wait until the start settles; ``timeout`` counts from the server's last sign of life
        (``starting.py``), and the time a person takes to sign in is not counted (raises
        TimeoutError past it)."""
        await wait_for_start(runtime.settled, timeout, runtime.start_life, runtime.person)

    def _oauth(self, runtime: ServerRuntime, start_number: int) -> Any:
        """The OAuth sign-in for an http or sse server (None where it is off); see servers/oauth.py."""
        if runtime.config.oauth_settings is None:
            return None
        prompt = runtime.sign_in_prompt
        asked: SignInPrompt | None = (
            runtime.person.timed(prompt, lambda: runtime.sign_in_prompt is prompt, runtime.config.name)
            if prompt
            else None
        )

        def person(step_up: bool) -> SignInPrompt | None:
            # Once the sign-in is over, a later 401 is not met with the person of that sign-in.
            if asked is not None and runtime.sign_in_prompt is prompt:
                return asked
            step_up_prompt = self.step_up_prompt
            if not step_up or step_up_prompt is None:
                return None

            async def ask_for_more_access(request: SignInRequest) -> None:
                await self._ask_for_more_access(runtime, step_up_prompt, request)

            return ask_for_more_access

        runtime.oauth = open_oauth_session(
            runtime.config,
            self.token_vault,
            person=person,
            signing_in=asked is not None,
            on_failure=partial(self._oauth_failed, runtime, start_number),
            on_secret=lambda value: self.redactor.add(f"{runtime.config.name} sign-in", value),
        )
        return runtime.oauth.provider

    async def _ask_for_more_access(self, runtime: ServerRuntime, prompt: SignInPrompt, request: SignInRequest) -> None:
        """Show the step-up sign-in; the person's time until the browser comes back is no call's."""
        asking = runtime.life.asking()
        asking.__enter__()
        request.outcome.add_done_callback(lambda _: asking.__exit__(None, None, None))
        try:
            await prompt(request)
        except BaseException:
            request.cancel("the sign-in could not be shown")
            raise

    def _oauth_failed(self, runtime: ServerRuntime, start_number: int, exc: Exception) -> None:
        """The sign-in stopped (needs a person, refused, broken): the SDK's transport would only
        log it and wait, so the start ends here, with why; a running server needs sign-in again."""
        if start_number != runtime.start_number or runtime.stopping:
            return
        state, reason = oauth_failure(runtime.config, exc, runtime.http_error)
        reason = self.redactor.text(reason)
        if runtime.status.state == ServerState.STARTING and runtime.task is not None and not runtime.start_refused:
            runtime.start_refused, runtime.refused_state = reason, state
            runtime.task.cancel()
        elif runtime.status.state.usable:
            self._set_state(runtime, state, reason)
            runtime.stop.set()

    def _oauth_refusal(self, runtime: ServerRuntime) -> str:
        """Why the server refused the start for want of scopes a new sign-in would not give ("": it did not)."""
        provider = runtime.oauth.provider if runtime.oauth is not None else None
        return f"{runtime.config.display_url()} {provider.refusal}" if provider is not None and provider.refusal else ""

    async def _close_oauth(self, runtime: ServerRuntime) -> None:
        """Close the sign-in session of a start that ended."""
        if runtime.oauth is not None:
            await runtime.oauth.close()
            runtime.oauth = None
