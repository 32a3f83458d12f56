"""Text typed or piped in as bytes: UTF-8, or a clear answer naming the first byte that is not."""

from __future__ import annotations

import os


def utf8_problem(data: bytes, what: str) -> str | None:
    """Why ``data`` is not UTF-8 (the first bad byte and its position), or None when it is."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (
            f"{what} is not UTF-8: byte 0x{data[exc.start]:02x} at position {exc.start} "
            "(convert it first, for example with iconv -f latin1 -t utf-8)"
        )
    return None


def argument_problem(value: str, what: str) -> str | None:
    """Why a command-line argument is not UTF-8 (Python keeps such bytes as lone surrogates), or None."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return utf8_problem(os.fsencode(value), what) or f"{what} is not UTF-8"
    return None


class NotUtf8Line(str):
    """A line read that was not UTF-8: its text with the bad bytes replaced, and why."""

    problem: str


def decoded_line(data: bytes) -> str:
    """A line read from stdin as text; a line that is not UTF-8 comes back as a ``NotUtf8Line``."""
    text = data.decode("utf-8", "replace").rstrip("\r\n")
    problem = utf8_problem(data, "this line")
    if problem is None:
        return text
    line = NotUtf8Line(text)
    line.problem = problem
    return line
