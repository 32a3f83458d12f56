"""What a server writes besides its answers: stdout that is not MCP, messages the SDK cannot
read, stderr and its end (mixed into ``ServerHub``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.servers.noise import STDOUT_RULE, glued_before_a_message, is_lost_answer, noise_excerpt
from mcp_chat_tui.servers.state import ServerState
from mcp_chat_tui.servers.stdout_lines import HEAD_BYTES


class ServerOutput:
    """Uses ``ServerHub``'s ``redactor``, ``_changed`` and ``_set_state``; ``rt`` is a server's runtime."""

    redactor: Redactor
    _changed: Callable[..., None]
    _set_state: Callable[..., None]

    def _on_unreadable_message(self, rt: Any, problem: str) -> None:
        """A JSON-RPC message the SDK could not read (it drops it): a protocol problem the server
        panel shows; a lost answer while one call is in flight is that call's, which fails now
        instead of at its timeout (with several in flight, which one is not known)."""
        rt.status.protocol_problem_count += 1
        rt.status.protocol_problems.append(self.redactor.text(problem))
        rt.status.stderr_tail.append(f"[mcp-chat-tui] {problem}")
        awaited = [answer for answer in rt.answers_awaited if not answer.done()]
        if is_lost_answer(problem) and len(awaited) == 1:
            awaited[0].set_result(problem)
        self._changed(rt)

    def _on_stdout_noise(self, rt: Any, line: str) -> None:
        """A line on stdout that is not JSON-RPC: noted in the log tail (observers are not told:
        nothing they show changes, and a server may write thousands); while starting, kept to
        say why a start fails.

        Text glued to a message on the same line loses that message: while starting, that is
        the answer the start waits for, so the start fails at once instead of at the timeout.
        """
        rt.status.stderr_tail.append(
            f"[mcp-chat-tui] ignored output on stdout that is not an MCP message: {noise_excerpt(line)}"
        )
        if rt.status.state == ServerState.STARTING:
            rt.stdout_noise = rt.stdout_noise or line[:HEAD_BYTES]  # its start is what is shown
            glued = glued_before_a_message(line)
            if glued and not rt.start_refused and rt.task is not None:
                rt.start_refused = (
                    f"its stdout had {noise_excerpt(glued)} before a JSON-RPC message on the same line, "
                    f"so the message was lost: {STDOUT_RULE}"
                )
                rt.task.cancel()

    def _on_stderr(self, rt: Any, generation: int, lines: list[str]) -> None:
        if generation != rt.generation:
            return
        rt.start_life.heard()  # a sign of life, while starting (servers/starting.py)
        rt.status.stderr_tail.extend(lines)
        self._changed(rt)

    def _on_stderr_closed(self, rt: Any, generation: int) -> None:
        """The process closed stderr: it has exited. Unexpected while it was running means it crashed."""
        rt.stderr_closed.set()
        if generation != rt.generation or rt.stopping:
            return
        if rt.status.state.usable:
            last = next((line for line in reversed(rt.status.stderr_tail) if line.strip()), "")
            reason = "the server process exited" + (f"; last stderr line: {last}" if last else "")
            self._set_state(rt, ServerState.CRASHED, reason)
            rt.stop.set()
