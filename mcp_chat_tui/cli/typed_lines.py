"""Lines typed on the terminal, and which question each one answers (``--plain``, ``-p``, and the
questions asked at start: a folder's mcp.json, signing in).

On a terminal a person types ahead: the next prompt while the model works, a line as a question
appears. A question (a tool call's approval, a server's URL, form or sampling request, a call that
could not be saved, a folder's mcp.json, a sign-in) comes at a moment the person did not choose,
so a line typed before it was not typed for it: "open the pod bay doors" must not open a URL by
its ``o``. So each line is stamped with the moment it was read; a question shows what it asks,
waits ``ARMING_DELAY`` (and as long again after each line typed meanwhile), only then prints its
keys, and takes only a line typed after that. What becomes of a line typed before, as a person
expects it: one that would have answered the question ("y" typed ahead for the approval to come) is
dropped, since it was meant for the question and must be given again once the question can be read;
any other line is a prompt typed ahead and waits, in order, for the next ``prompt ->`` (which shows
it as it takes it), or is dropped where no prompt follows (``-p``, ``--check-servers``). The
question says which, line by line.

Lines are read one at a time, when someone waits for one, on a daemon thread (a pending read never
keeps the program from exiting, and signals still end it); between requests nothing reads stdin,
so the questions asked at start for a file's inputs (``input()``, ``getpass``) read it as before,
and a line typed while nobody reads waits in the terminal until it is asked for, then counts as
typed before whatever asked. Piped input (a script answering on purpose) is taken in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

from mcp_chat_tui.cli.input_text import decoded_line
from mcp_chat_tui.core.arming import ARMING_DELAY
from mcp_chat_tui.core.text import visible_controls


@dataclass(frozen=True)
class TypedLine:
    text: str | None  # None: the end of input (a ``NotUtf8Line`` when it was not UTF-8)
    at: float  # ``time.monotonic()`` when it was read
    seq: int  # its place among the lines read


class LineReader:
    """Stdin, a line at a time, for the ``prompt ->`` (``read``) and for questions (``question``)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, guarded: bool | None = None) -> None:
        """``guarded``: a question takes only lines typed after its keys were printed (default: stdin
        is a terminal; a pipe is read in order)."""
        self._loop = loop
        self.guarded = sys.stdin.isatty() if guarded is None else guarded
        self._lines: deque[TypedLine] = deque()  # read, not taken yet
        self._waiters: list[asyncio.Future[None]] = []
        self._questions = 0  # open now: the prompt takes no line meanwhile
        self._noted: set[int] = set()  # lines a question already said it does not take
        self.keeps_prompts = False  # a ``prompt ->`` follows (``--plain``): lines typed ahead wait for it
        self._wanted = threading.Event()  # the thread reads one line each time it is set
        self._reading = False
        self._thread: threading.Thread | None = None
        self._count = 0
        self._held_until = -math.inf  # lines read before this were typed for a withdrawn question
        self._held_console: Console | None = None

    @property
    def at_end(self) -> bool:
        return bool(self._lines) and self._lines[-1].text is None

    async def read(self) -> str | None:
        """The next line for the prompt (None at the end of input)."""
        return (await self.read_typed()).text

    async def read_typed(self) -> TypedLine:
        """The next line for the prompt, with when it was read; none is taken while a question is open,
        nor one typed for a question that was withdrawn (``withdrawn``)."""
        line = await self._wait(self._for_prompt)
        if line.text is not None:
            self._lines.popleft()
        return line

    def withdrawn(self, console: Console) -> None:
        """A question was taken away before it was answered: what it held is dropped, and so is each
        line typed before the notice saying so had been up ``ARMING_DELAY`` (it was typed for the
        question, and must not become a prompt)."""
        self._held_until, self._held_console = time.monotonic() + ARMING_DELAY, console
        self._drop_held()

    def _drop_held(self) -> None:
        for line in [line for line in self._lines if line.text is not None and line.at < self._held_until]:
            self._lines.remove(line)
            if line.text and line.text.strip() and self._held_console is not None:
                said = f"  (typed for the question that closed, not sent: {visible_controls(line.text.strip())})"
                self._held_console.print(Text(said, style="dim"), soft_wrap=True)

    def question(self, console: Console) -> contextlib.AbstractAsyncContextManager[Question]:
        """One question and its follow-ups (a form's fields, an edit), said on ``console``."""
        return _open_question(self, console)

    def _for_prompt(self) -> TypedLine | None:
        self._drop_held()
        return self._lines[0] if self._lines and not self._questions else None

    async def _wait(self, pick: Callable[[], TypedLine | None]) -> TypedLine:
        while (line := pick()) is None:
            await self._arrival()
        return line

    async def _arrival(self, timeout: float | None = None) -> None:
        """Until a line is read (or a question closes), or ``timeout`` seconds have passed."""
        self._want()
        waiter = self._loop.create_future()
        self._waiters.append(waiter)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waiter, timeout)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _want(self) -> None:
        """Have the thread read one more line, unless it is reading one or the input ended."""
        if self._reading or self.at_end:
            return
        self._reading = True
        if self._thread is None:
            self._thread = threading.Thread(target=self._pump, name="stdin", daemon=True)
            self._thread.start()
        self._wanted.set()

    def _pump(self) -> None:
        # Bad bytes are kept as surrogates, then taken back: a line that is not UTF-8 is said, not a
        # crash. (Text, not sys.stdin.buffer: a daemon thread holding the buffer's lock at exit aborts.)
        with contextlib.suppress(AttributeError, ValueError):
            sys.stdin.reconfigure(errors="surrogateescape")  # type: ignore[union-attr]
        encoding = sys.stdin.encoding or "utf-8"
        while True:
            self._wanted.wait()
            self._wanted.clear()
            try:
                line = sys.stdin.readline()
            except (OSError, ValueError):
                line = ""
            text = decoded_line(line.encode(encoding, "surrogateescape")) if line else None
            try:
                self._loop.call_soon_threadsafe(self._arrive, text, time.monotonic())
            except RuntimeError:  # the loop closed: the program is ending
                return
            if text is None:
                return

    def _arrive(self, text: str | None, at: float) -> None:
        self._reading = False
        self._count += 1
        self._lines.append(TypedLine(text, at, self._count))
        self._wake()


class Question:
    """Takes the answers to one question: the first is a line typed after ``ready`` (which waits
    ``ARMING_DELAY`` past the question and past the last line typed meanwhile), each one after that
    the next line typed. The lines passed over stay for the prompt."""

    def __init__(self, reader: LineReader, console: Console) -> None:
        self.reader = reader
        self.console = console
        self.asked_at = time.monotonic()
        self._last_typed = self.asked_at  # the latest of the question and the lines typed while it waits
        self.armed_at: float | None = None
        self._last: int | None = None  # ``seq`` of the last answer taken
        self._is_answer: Callable[[str], bool] = bool

    async def ask(self, show_keys: Callable[[], object], is_answer: Callable[[str], bool] = bool) -> str | None:
        """Once ready, ``show_keys`` (print what may be answered), then the answer typed after it.
        ``is_answer``: whether a line would answer the question (one typed before is then dropped)."""
        self._is_answer = is_answer
        await self.ready()
        show_keys()
        return await self.line()

    async def ready(self) -> None:
        """Wait until a line typed now can be an answer: at once for piped input."""
        if self.armed_at is not None:
            return
        if not self.reader.guarded:
            self.armed_at = -math.inf
            return
        while not self.reader.at_end:
            self._last_typed = max([self._last_typed, *(line.at for line in self.reader._lines)])
            self._note_passed_over()  # may drop a line: its time still puts the keys off (kept above)
            left = self._last_typed + ARMING_DELAY - time.monotonic()
            if left <= 0:
                break
            await self.reader._arrival(left)
        self.armed_at = time.monotonic()
        self._note_passed_over()

    async def line(self) -> str | None:
        """The next answer (None at the end of input)."""
        await self.ready()
        line = await self.reader._wait(self._pick)
        if line.text is not None:
            self.reader._lines.remove(line)
            self._last = line.seq
        return line.text

    def _pick(self) -> TypedLine | None:
        for line in self.reader._lines:
            if line.text is None:
                return line
            if self._last is not None and line.seq > self._last:
                return line
            if self._last is None and self.armed_at is not None and line.at >= self.armed_at:
                return line
        return None

    def _note_passed_over(self) -> None:
        """Say, once, what becomes of each line typed before the question: dropped when it would have
        answered it (or no prompt follows), else kept for the next prompt. A blank line goes unsaid."""
        reader = self.reader
        for line in list(reader._lines):
            if line.text is None or line.seq in reader._noted:
                continue
            reader._noted.add(line.seq)
            answer_like = self._is_answer(line.text)
            kept = reader.keeps_prompts and bool(line.text.strip()) and not answer_like
            if not kept:
                reader._lines.remove(line)
            if line.text.strip():
                fate = (
                    "so not taken as its answer" if answer_like else "kept for the next prompt" if kept else "not taken"
                )
                said = f"  (typed before this question, {fate}: {visible_controls(line.text.strip())})"
                self.console.print(Text(said, style="dim"), soft_wrap=True)


@contextlib.asynccontextmanager
async def _open_question(reader: LineReader, console: Console) -> AsyncIterator[Question]:
    reader._questions += 1
    try:
        yield Question(reader, console)
    finally:
        reader._questions -= 1
        reader._wake()


def is_yes_or_no(line: str) -> bool:
    """Whether ``line`` answers a yes-or-no question (an empty line takes its default)."""
    return line.strip().lower() in ("", "y", "yes", "n", "no")


_terminal: LineReader | None = None


def terminal_lines(*, keeps_prompts: bool | None = None) -> LineReader:
    """The one reader of this program's stdin (for the running event loop): the questions asked at
    start and the conversation share it, so a line passed over at start is the first prompt.
    ``keeps_prompts``: whether a ``prompt ->`` follows (None: as set before)."""
    global _terminal
    loop = asyncio.get_running_loop()
    if _terminal is None or _terminal._loop is not loop:
        _terminal = LineReader(loop)
    if keeps_prompts is not None:
        _terminal.keeps_prompts = keeps_prompts
    return _terminal
