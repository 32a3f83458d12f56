"""A server's "visit these pages first" answer (-32042) opens the page dialogs; the time a person
spends in them is not counted by the clock of a call the server is running meanwhile, as the time
spent in its forms and sampling reviews is not (servers/call_clock.py).

The real hub and SDK client, an ``MCPServer`` connected in memory (the test is not about
processes), the real client requests with a person who stays on the page past the call's timeout.
"""

from __future__ import annotations

import asyncio
import sys

import mcp_types as t
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError

from mcp_chat_tui.agent.asking_requests import AskingClientRequests
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.servers import ServerHub
from tests.fakes import ScriptedEngine
from tests.helpers import in_process_config
from tests.test_url_required import PageAsker

TIMEOUT = 1.0  # the server's tool timeout, in seconds
ON_THE_PAGE = 1.5 * TIMEOUT  # how long the person stays on the page: past the timeout of the calls running


def pages_server(released: asyncio.Event, page_seen: asyncio.Event) -> MCPServer:
    """``held`` answers once ``released`` is set; ``guarded`` asks for a page first, the first time."""
    server = MCPServer(name="pages", version="1.0", log_level="WARNING")
    asked: list[str] = []

    @server.tool(structured_output=False)
    async def held() -> str:
        await released.wait()
        return "held: released"

    @server.tool(structured_output=False)
    async def guarded() -> str:
        if asked:
            return "guarded: done"
        asked.append("page")
        page = t.ElicitRequestURLParams(message="Authorize", url="https://auth.example/1", elicitation_id="page-1")
        raise UrlElicitationRequiredError([page], "needs authorization")

    return server


class SlowOnThePage(PageAsker):
    """Opens the page, says so (``page_seen``), and stays ``ON_THE_PAGE`` seconds before saying it is done."""

    def __init__(self, page_seen: asyncio.Event) -> None:
        super().__init__()
        self.page_seen = page_seen

    async def visit_url(self, server, message, url):
        self.page_seen.set()
        await asyncio.sleep(ON_THE_PAGE)
        return await super().visit_url(server, message, url)


async def test_a_call_whose_timeout_passes_while_the_page_dialog_is_open_still_answers_after_it():
    released, page_seen = asyncio.Event(), asyncio.Event()
    config = ServerConfig(name="pages", type="stdio", command=sys.executable, args=["-c", "pass"], timeout=TIMEOUT)
    memory = in_process_config(config, lambda: pages_server(released, page_seen))
    async with ServerHub([memory]) as hub:
        asker = SlowOnThePage(page_seen)
        hub.client_requests = AskingClientRequests(ScriptedEngine([]), asker, lambda event: None)
        await hub.start_all()
        running = asyncio.create_task(hub.call_tool("pages", "held", {}))
        guarded = asyncio.create_task(hub.call_tool("pages", "guarded", {}))
        await asyncio.wait_for(page_seen.wait(), 10)
        assert not running.done(), "the held call ended before the page was shown"
        guarded_result = await guarded  # the person has been on the page longer than a timeout
        released.set()
        held_result = await running
    assert guarded_result.ok and guarded_result.for_model() == "guarded: done", guarded_result.failure
    assert held_result.ok, held_result.failure
    assert held_result.for_model() == "held: released"
