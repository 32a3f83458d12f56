"""A table whose rendered cells are kept until their own row changes.

Textual's ``DataTable`` keys every cell it has rendered on one count of the table's changes: one
cell updated or one row added renders every visible row's cells again through Rich. In a sidebar
of 1,000 calls that is 40 rows of 6 cells for each new call and each change of a call's state:
about 10 ms of a frame, twice on the way to an approval dialog (the new row, then its state). Here
a cell updated or a row added is a change of its row alone; a cell is rendered again when its row
changed, moved, got another width or height, or when anything else changed the table (Textual's
count less the changes of one row counted here: columns, sorting, removing rows, a resize...).

Textual also drops every rendered cell when the table's styles change (a theme, the focus coming
or going). The cells kept here are keyed on the styles they were rendered with, so they are kept
through it: a theme or a focus state that comes back finds its cells rendered (people go back and
forth between themes and panes), and one that is new renders them anew.

A row's lines (its cells put side by side) are kept the same way, and, with a row cursor, whatever
row the cursor is on when it is not that one: the cursor following a new call assembles two rows
again (the new one and the one it left), not every row in view.
"""

from __future__ import annotations

from typing import Any, Self

from rich.style import Style
from rich.text import TextType
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.widgets import DataTable
from textual.widgets.data_table import CellType, ColumnKey, RowKey

ELSEWHERE = Coordinate(-2, -2)  # the cursor or the mouse, on a row other than the one rendered (or none)


class RowCachedTable(DataTable[CellType]):
    """``DataTable`` with each row's rendered cells kept until that row changes (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._row_versions: dict[RowKey, int] = {}  # changes of each row since it was added
        self._row_changes = 0  # how much of Textual's count of changes came from one row's changes
        self._styles: tuple[Any, ...] | None = None  # what a cell's look depends on in the table's styles
        self._true_count: int | None = None  # Textual's count, while a row's line is rendered

    def update_cell(
        self, row_key: RowKey | str, column_key: ColumnKey | str, value: CellType, *, update_width: bool = False
    ) -> None:
        super().update_cell(row_key, column_key, value, update_width=update_width)
        if not update_width:  # a column that may take another width changes every row: the table's count
            key = RowKey(row_key) if isinstance(row_key, str) else row_key
            self._row_versions[key] = self._row_versions.get(key, 0) + 1
            self._row_changes += 1

    def add_row(
        self,
        *cells: CellType,
        height: int | None = 1,
        key: str | None = None,
        label: TextType | None = None,
    ) -> RowKey:
        row_key = super().add_row(*cells, height=height, key=key, label=label)
        self._row_versions.pop(row_key, None)  # a key used again starts anew (its cells are new)
        self._row_changes += 1
        return row_key

    def clear(self, columns: bool = False) -> Self:
        self._row_versions.clear()
        return super().clear(columns)

    def notify_style_update(self) -> None:
        kept = self._cell_render_cache  # Textual's drops it: its cells are keyed on their styles here
        self._cell_render_cache = LRUCache(1)
        try:
            super().notify_style_update()
        finally:
            self._cell_render_cache = kept
            self._styles = None

    def _cell_styles(self) -> tuple[Any, ...]:
        """The styles a cell is rendered with besides its row's (which its key holds): the cursor's,
        the header's and the rest of the table's parts, as they are now."""
        if self._styles is None:
            parts = sorted(self.COMPONENT_CLASSES)
            self._styles = (
                self.cursor_foreground_priority,
                self.cursor_background_priority,
                *(self.get_component_rich_style(part) for part in parts),
            )
        return self._styles

    def _epoch(self) -> int:
        """Textual's count of the table's changes, less those of one row counted here."""
        count = self._true_count if self._true_count is not None else self._update_count
        return count - self._row_changes

    def _render_line_in_row(
        self,
        row_key: RowKey,
        line_no: int,
        base_style: Style,
        cursor_location: Coordinate,
        hover_location: Coordinate,
    ) -> Any:
        # A row's line is kept as its cells are (``_render_cell``), and, with a row cursor, whatever
        # the row the cursor or the mouse is on when it is not this one: the cursor moving to a new
        # call assembles that row and the one it left, not every row in view.
        if self.cursor_type != "row" or self._true_count is not None:
            return super()._render_line_in_row(row_key, line_no, base_style, cursor_location, hover_location)
        row_index = self._row_locations.get(row_key)
        row_index = -1 if row_index is None else row_index  # the header's
        cursor_location = cursor_location if cursor_location.row == row_index else ELSEWHERE
        hover_location = hover_location if hover_location.row == row_index else ELSEWHERE
        count = self._update_count
        self._true_count = count
        self._update_count = (  # type: ignore[assignment]
            self._epoch(),
            self._row_versions.get(row_key, 0),
            row_index,
            tuple(column.get_render_width(self) for column in self.ordered_columns),
            self._row_label_column_width,
            self.size.width,
            (self.fixed_rows, self.fixed_columns, self.show_row_labels, self._labelled_row_exists, self.zebra_stripes),
            self._cell_styles(),
        )
        try:
            return super()._render_line_in_row(row_key, line_no, base_style, cursor_location, hover_location)
        finally:
            self._update_count = count
            self._true_count = None

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> Any:
        # Textual's cache keys hold ``_update_count``: for the time of this cell, it holds what the
        # cell's rendering depends on besides the rest of the key (the cell, its style, cursor, hover).
        count = self._update_count
        row_key = self._row_locations.get_key(row_index) if row_index >= 0 else None
        row = self.rows.get(row_key) if row_key is not None else None
        version = self._row_versions.get(row_key, 0) if row_key is not None else 0
        self._update_count = (  # type: ignore[assignment]
            self._epoch(),
            version,
            row_index,
            width,
            row.height if row is not None else 0,
            self._cell_styles(),
        )
        try:
            return super()._render_cell(row_index, column_index, base_style, width, cursor=cursor, hover=hover)
        finally:
            self._update_count = count
