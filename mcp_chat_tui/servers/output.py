"""What a server writes besides its answers: stdout that is not MCP, messages the SDK cannot
read, stderr and its end (mixed into ``ServerHub``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.servers.noise import STDOUT_RULE, glued_before_a_message, is_lost_answer, noise_excerpt
from mcp_chat_tui.servers.state import ServerState
from mcp_chat_tui.servers.stdout_lines import HEAD_BYTES

if TYPE_CHECKING:
    from mcp_chat_tui.servers.runtime import ServerRuntime


class ServerOutput:
    """Uses ``ServerHub``'s ``redactor``, ``_changed`` and ``_set_state``; ``runtime`` is a server's runtime."""

    redactor: Redactor
    _changed: Callable[..., None]
    _set_state: Callable[..., None]

    def _on_unreadable_message(self, runtime: ServerRuntime, problem: str) -> None:
        """A JSON-RPC message the SDK could not read (it drops it): a protocol problem the server
        panel shows; a lost answer while one call is in flight is that call's, which fails now
        instead of at its timeout (with several in flight, which one is not known)."""
        runtime.status.protocol_problem_count += 1
        runtime.status.protocol_problems.append(self.redactor.text(problem))
        runtime.status.stderr_tail.append(f"[mcp-chat-tui] {problem}")
        awaited = [answer for answer in runtime.answers_awaited if not answer.done()]
        if is_lost_answer(problem) and len(awaited) == 1:
            awaited[0].set_result(problem)
        self._changed(runtime)

    def _on_stdout_noise(self, runtime: ServerRuntime, line: str) -> None:
        """A line on stdout that is not JSON-RPC: noted in the log tail (observers are not told:
        nothing they show changes, and a server may write thousands); while starting, kept to
        say why a start fails.

        Text glued to a message on the same line loses that message: while starting, that is
        the answer the start waits for, so the start fails at once instead of at the timeout.
        """
        runtime.status.stderr_tail.append(
            f"[mcp-chat-tui] ignored output on stdout that is not an MCP message: {noise_excerpt(line)}"
        )
        if runtime.status.state == ServerState.STARTING:
            runtime.stdout_noise = runtime.stdout_noise or line[:HEAD_BYTES]  # its start is what is shown
            glued = glued_before_a_message(line)
            if glued and not runtime.start_refused and runtime.task is not None:
                runtime.start_refused = (
                    f"its stdout had {noise_excerpt(glued)} before a JSON-RPC message on the same line, "
                    f"so the message was lost: {STDOUT_RULE}"
                )
                runtime.task.cancel()

    def _on_stderr(self, runtime: ServerRuntime, start_number: int, lines: list[str]) -> None:
        if start_number != runtime.start_number:
            return
        runtime.start_life.heard()  # a sign of life, while starting (servers/starting.py)
        runtime.status.stderr_tail.extend(lines)
        self._changed(runtime)

    def _on_stderr_closed(self, runtime: ServerRuntime, start_number: int) -> None:
        """The process closed stderr: it has exited. Unexpected while it was running means it crashed."""
        runtime.stderr_closed.set()
        if start_number != runtime.start_number or runtime.stopping:
            return
        if runtime.status.state.usable:
            last = next((line for line in reversed(runtime.status.stderr_tail) if line.strip()), "")
            reason = "the server process exited" + (f"; last stderr line: {last}" if last else "")
            self._set_state(runtime, ServerState.CRASHED, reason)
            runtime.stop.set()
