"""The idle cycle collector: garbage collected at settle, survivors frozen, a full pass every N."""

from __future__ import annotations

import gc
import weakref

from mcp_chat_tui.core.collector import IdleCollector


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> tuple[Node, weakref.ref]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a, weakref.ref(b)


def test_settle_collects_cycles_and_freezes_what_survives():
    collector = IdleCollector(full_every=3)
    try:
        garbage, garbage_ref = cycle()
        del garbage
        kept, kept_ref = cycle()
        collector.settle()
        assert garbage_ref() is None  # the cycle nobody held was collected
        assert kept_ref() is not None and gc.get_freeze_count() > 0
        del kept  # now garbage, but frozen: the collector does not see it ...
        collector.settle()
        gc.collect()
        assert kept_ref() is not None
        collector.settle()  # ... until the third settle, a full pass, unfreezes everything first
        assert kept_ref() is None
        assert collector.settles == 3 and collector.last_seconds > 0
    finally:
        collector.release()
    assert gc.get_freeze_count() == 0


def test_set_aside_mid_turn_collects_what_is_new_and_makes_the_next_settle_a_full_pass():
    collector = IdleCollector(full_every=100)
    try:
        collector.settle()
        garbage, garbage_ref = cycle()
        del garbage
        kept, kept_ref = cycle()
        frozen_before = gc.get_freeze_count()
        collector.set_aside()
        assert garbage_ref() is None  # made since the last freeze and dropped: collected
        assert kept_ref() is not None and gc.get_freeze_count() > frozen_before
        assert collector.set_asides == 1 and collector.settles == 1
        del kept  # dropped after it was set aside: frozen, so no collection frees it ...
        gc.collect()
        assert kept_ref() is not None
        collector.settle()  # ... until the settle after the turn, a full pass although not the 100th
        assert kept_ref() is None
        still, still_ref = cycle()
        collector.settle()
        del still
        collector.settle()  # and the settles after that are partial again
        assert still_ref() is not None
    finally:
        collector.release()
    gc.collect()
    assert still_ref() is None
