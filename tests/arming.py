"""A short arming delay for the app's dialogs, for tests whose dialogs are not about it.

Each dialog that decides something takes keys only ``ARMING_DELAY`` (half a second) after it is drawn
(ui/screens/deciding.py), and a test waits that out in full at every dialog it answers. A test about
requests, forms or approvals, not about keys typed as a dialog appears, uses the ``quick_arming``
fixture (``pytestmark = pytest.mark.usefixtures("quick_arming")``, with ``from tests.arming import
quick_arming``): its dialogs still arm, after their first frame, and still take only keys pressed
since, a fortieth of a second later. tests/test_dialog_keys.py and the other tests of arming keep it.
"""

from __future__ import annotations

import pytest

from mcp_chat_tui.ui.screens import deciding

QUICK_ARMING_DELAY = 0.025  # seconds: a dialog still arms after its frame, in its own timer


@pytest.fixture
def quick_arming(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deciding, "ARMING_DELAY", QUICK_ARMING_DELAY)
