"""Canaries for Textual's private names the app uses (all in ui/textual_private.py): each one still
exists in the installed Textual, or its test fails naming it and the module to adapt."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from mcp_chat_tui.ui.textual_private import INSTANCE_NAMES, PRIVATE_NAMES


def missing(owner: object, name: str) -> str | None:
    if hasattr(owner, name):
        return None
    where = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", repr(owner))
    return f"textual {version('textual')} has no {where}.{name}: ui/textual_private.py relies on it; adapt it there"


@pytest.mark.parametrize(
    ("owner", "name"), PRIVATE_NAMES, ids=[f"{getattr(o, '__name__', o)}.{n}" for o, n in PRIVATE_NAMES]
)
def test_textual_still_has(owner: object, name: str) -> None:
    assert missing(owner, name) is None, missing(owner, name)


@pytest.mark.parametrize(("make", "name"), INSTANCE_NAMES, ids=[name for _, name in INSTANCE_NAMES])
async def test_textual_objects_still_have_their_own(make, name: str) -> None:
    """Members each object sets for itself (a node's, a table's, a Markdown stream's), on a real one."""
    from textual.app import App

    class Holder(App[None]):
        pass

    async with Holder().run_test():
        made = make() if not isinstance(make, type) else make()
        assert missing(made, name) is None, missing(made, name)


def test_a_name_textual_lost_is_reported_with_the_module_to_adapt() -> None:
    from textual.widgets import DataTable

    said = missing(DataTable, "_a_method_an_upgrade_removed")
    assert said is not None and "DataTable._a_method_an_upgrade_removed" in said and "ui/textual_private.py" in said
