"""A call's clock and its progress, through the hub with real SDK server processes
(tests/servers/flood_server.py, tests/servers/asking_server.py): progress keeps a call alive, up to
ten times its timeout; log messages do not; a person's time answering a form is not the call's;
100,000 progress notifications reach the caller as a few updates, and the result follows."""

from __future__ import annotations

import asyncio
import time

import pytest
from mcp_types import ElicitResult

from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub
from tests.test_client_requests import asking_config
from tests.test_floods import flood_config

FRAMES_PER_SECOND = 30  # servers/call_clock.py FRAME_SECONDS


async def test_progress_keeps_a_call_alive_past_its_timeout_and_log_messages_do_not():
    async with ServerHub([flood_config(timeout=1)]) as hub:
        await hub.start_all()
        kept = await hub.call_tool("flood", "keep_busy", {"seconds": 2, "every": 0.2})  # twice its timeout
        assert kept.ok, kept.for_model()
        assert kept.text == "worked 2 s" and kept.duration >= 2
        started = time.perf_counter()
        logged = await hub.call_tool("flood", "keep_busy", {"seconds": 30, "every": 0.2, "by": "log"})
        took = time.perf_counter() - started
        assert logged.failure is not None and logged.failure.kind == FailureKind.TIMEOUT
        assert "gave no result within 1 s, nor any progress" in logged.failure.message
        assert 1 <= took < 20
        assert hub.status("flood").log.total >= 4  # the log messages came, and did not count


async def test_a_call_that_reports_progress_without_end_is_given_up_at_ten_times_its_timeout():
    async with ServerHub([flood_config(timeout=0.4)]) as hub:
        await hub.start_all()
        started = time.perf_counter()
        result = await hub.call_tool("flood", "keep_busy", {"seconds": 60, "every": 0.1})
        took = time.perf_counter() - started
    assert result.failure is not None and result.failure.kind == FailureKind.TIMEOUT
    assert "within 4 s, the most a call may take however often it reports progress" in result.failure.message
    assert 4 <= took < 30


async def test_progress_sent_while_this_process_was_not_running_is_read_before_the_call_is_given_up():
    """This process stops for longer than the call's timeout (a loaded machine, a long collection:
    here its progress listener blocks the loop), while the server goes on saying the call is under
    way: those notes wait unread in the pipe when the clock runs out, and they keep the call alive."""
    stalled: list[float] = []

    def stall_once(progress) -> None:
        if not stalled:
            stalled.append(progress.progress)
            time.sleep(1.0)  # the whole process stands still: 2.5 times the timeout, ten notes sent meanwhile

    async with ServerHub([flood_config(timeout=0.4)]) as hub:
        await hub.start_all()
        result = await hub.call_tool("flood", "keep_busy", {"seconds": 2, "every": 0.1}, on_progress=stall_once)
    assert stalled == [1.0]
    assert result.ok, result.for_model()
    assert result.text == "worked 2 s"


class SlowPerson:
    """Answers every form after ``seconds``, declining it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.asked = 0

    async def sample(self, server, params):
        raise AssertionError("no sampling expected")

    async def elicit(self, server, params):
        self.asked += 1
        await asyncio.sleep(self.seconds)
        return ElicitResult(action="decline")


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_the_time_a_person_takes_to_answer_a_form_is_not_the_calls(era):
    config = asking_config("legacy" if era == "2025-11-25" else "modern", timeout=1)
    async with ServerHub([config]) as hub:
        await hub.start_all()
        assert hub.status("asking").protocol_version == era
        person = SlowPerson(1.5)  # half as long again as the call may take: a clock that counted it would end the call
        hub.client_requests = person
        result = await hub.call_tool("asking", "sign_up", {})
    assert person.asked == 1
    assert result.ok, result.for_model()
    assert '"action": "decline"' in result.text


async def test_100000_progress_notifications_reach_the_caller_as_a_few_updates_and_the_result_follows():
    async with ServerHub([flood_config(timeout=120)]) as hub:
        await hub.start_all()
        heard = []
        started = time.perf_counter()
        result = await hub.call_tool("flood", "burst", {"count": 100_000}, on_progress=heard.append)
        took = time.perf_counter() - started
    assert result.ok, result.for_model()
    assert result.text == "sent 100000 progress notifications"
    assert heard[-1].describe() == "100000/100000 tick 100000" and result.progress == heard[-1]
    assert [p.progress for p in heard] == sorted({p.progress for p in heard})
    assert len(heard) <= took * FRAMES_PER_SECOND + 2, f"{len(heard)} updates in {took:.1f} s"
