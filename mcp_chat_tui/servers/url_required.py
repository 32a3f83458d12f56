"""A tool call the server answers with "URL elicitation required" (-32042, 2025-11-25): the pages it
names are shown to the user, and once they are done the call is sent again.

The error carries the pages in its data (``{"elicitations": [ElicitRequestURLParams, ...]}``, read
with the SDK's ``UrlElicitationRequiredError.from_error``). Each is shown like a server's URL
request (open or decline; an address is opened only under ``core/page_address.py``'s rules); the
call is sent again once the user has finished on every page (they say so, or the server sends
``notifications/elicitation/complete``), at most ``MAX_ROUNDS`` times. When nobody is asked, the
call fails with a message naming each page, so the user can visit it and ask again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ValidationError

from mcp_chat_tui.core.redact import Redactor

if TYPE_CHECKING:
    from mcp_types import ElicitRequestURLParams

MAX_ROUNDS = 3  # a server that asks again after every visit is not asked forever
NOBODY_TO_ASK = "there was no one to ask (no terminal): open the page yourself, then ask again"


def pages_required(exc: BaseException) -> list[ElicitRequestURLParams] | None:
    """The pages a -32042 error asks the user to visit (None: ``exc`` is no such error, or names no
    page the SDK can read)."""
    from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
    from mcp_types import URL_ELICITATION_REQUIRED

    if not isinstance(exc, MCPError) or exc.code != URL_ELICITATION_REQUIRED:
        return None
    try:
        pages = UrlElicitationRequiredError.from_error(exc.error).elicitations
    except (ValidationError, TypeError, AttributeError):
        return None
    return pages or None


def redacted_pages(pages: list[ElicitRequestURLParams], redactor: Redactor) -> list[ElicitRequestURLParams]:
    from mcp_types import ElicitRequestURLParams

    dumped = [page.model_dump(by_alias=True, mode="json", exclude_none=True) for page in pages]
    return [ElicitRequestURLParams.model_validate(redactor.value(page)) for page in dumped]


def not_visited(tool: str, pages: list[ElicitRequestURLParams], why: str) -> str:
    """The call's failure when the pages were not all visited: each page's address, and why."""
    where = "; ".join(f"{page.url} ({page.message})" if page.message else page.url for page in pages)
    return f"{tool} needs a page visited first: {where}. Not done: {why}"


def still_required(tool: str, pages: list[ElicitRequestURLParams]) -> str:
    """The call's failure when the server still asks for pages after ``MAX_ROUNDS`` visits."""
    where = "; ".join(page.url for page in pages)
    return f"{tool} still needs a page visited after {MAX_ROUNDS} tries ({where}); the call was not sent again"
