"""The base of the widget mixins (``OneLayoutPass``, ``ScrollbarInPlace``): ``Widget`` to the type
checker, so that a mixin's methods are checked against the widget's, and a plain class when the app
runs. Textual inherits a widget's styles and component classes along its first base that is a
widget: that must stay the class the mixin is mixed into (``Static``, ``Markdown``, ``DataTable``…)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widget import Widget

if TYPE_CHECKING:
    WidgetMixin = Widget
else:
    WidgetMixin = object
