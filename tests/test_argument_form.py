"""The argument editor (``e`` in the approval dialog) as a form built from the tool's input schema:
one form builder with the elicitation dialog, a JSON field for what a form cannot show, Ctrl+O for the
whole JSON, and nothing sent until the schema accepts the values (the error shown at the field)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Input, Static, TextArea

from mcp_chat_tui.agent.approval import EDITED_LABEL
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.servers import form_fields
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.edit_arguments import EditArgumentsScreen
from mcp_chat_tui.ui.widgets.schema_form import SchemaForm, filled
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

NESTED = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "mode": {"enum": ["fast", "exact"]},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
        "filter": {"type": "object", "properties": {"year": {"type": "integer"}}},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    },
    "required": ["query"],
}


def test_a_tool_schema_gives_a_field_of_each_kind_and_json_for_what_a_form_cannot_show():
    kinds = {field.name: field.kind for field in form_fields(NESTED)}
    assert kinds == {
        "query": "string",
        "limit": "integer",
        "mode": "enum",
        "tags": "multi",
        "filter": "json",
        "ids": "json",
        "either": "json",
    }
    [filter_field] = [field for field in form_fields(NESTED) if field.name == "filter"]
    assert filter_field.parse('{"year": 2024}') == ({"year": 2024}, "")
    assert filter_field.parse("{year}")[1].startswith("not JSON")
    [ids] = filled([f for f in form_fields(NESTED) if f.name == "ids"], {"ids": [1, 2]})
    assert ids.shown_default() == "[1, 2]"


class FormApp(App):
    def __init__(self, fields) -> None:
        super().__init__()
        self.fields = fields

    def compose(self) -> ComposeResult:
        yield SchemaForm(self.fields)


async def test_the_form_reads_each_field_back_as_its_json_type_and_a_json_field_as_json():
    arguments = {"query": "rain", "limit": 3, "filter": {"year": 2024}, "ids": [1, 2], "tags": ["b"]}
    app = FormApp(filled(form_fields(NESTED), arguments))
    async with app.run_test() as pilot:
        form = app.query_one(SchemaForm)
        assert form.values() == arguments  # untouched: the same arguments back, nothing added
        form.query_one("#field-4", Input).value = '{"year": 1999, "month": 5}'
        form.query_one("#field-1", Input).value = "0"
        assert form.values() is None
        await pilot.pause()
        assert str(form.query_one("#field-error-1", Static).render()) == "at least 1"
        form.query_one("#field-1", Input).value = "7"
        assert form.values() == arguments | {"limit": 7, "filter": {"year": 1999, "month": 5}}


async def _open_editor(pilot, app) -> None:
    await wait_ready(pilot, app)
    await send(pilot, "search")
    await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
    await pilot.press("e")
    await wait_for(pilot, lambda: isinstance(app.screen, EditArgumentsScreen), what="the editor")
    await wait_for(pilot, lambda: app.screen.focused is not None, what="the first field focused")


async def test_a_field_edited_in_the_form_is_what_runs_and_a_bad_one_sends_nothing(tmp_path):
    from mcp_chat_tui.transcript.media import read_conversation

    path = tmp_path / "chat.md"
    engine = ScriptedEngine([[call("web_search", {"query": "mcp", "max_results": 2})], "Found."])
    app = make_app(engine, [demo_config()], transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await _open_editor(pilot, app)
        screen = app.screen
        assert screen.query_one("#field-0", Input).value == "mcp" and screen.query_one("#field-1", Input).value == "2"
        assert not screen.query_one(TextArea).display  # the form comes first
        screen.query_one("#field-1", Input).value = "many"
        await pilot.press("ctrl+s")
        error = screen.query_one("#field-error-1", Static)
        await wait_for(pilot, lambda: str(error.render()) == "a whole number", what="the field's error")
        assert isinstance(app.screen, EditArgumentsScreen) and len(engine.prompts) == 1  # nothing sent
        [record] = app.calls_table.records.values()
        assert record.state is CallState.AWAITING
        screen.query_one("#field-0", Input).value = ""
        screen.query_one("#field-1", Input).value = "4"
        await pilot.press("ctrl+s")
        first = screen.query_one("#field-error-0", Static)
        await wait_for(pilot, lambda: str(first.render()) == "required", what="the required field's error")
        screen.query_one("#field-0", Input).value = "model context protocol"
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        [record] = app.calls_table.records.values()
        assert record.ran_with == {"query": "model context protocol", "max_results": 4}
    told = [m["content"] for m in engine.prompts[1] if m["role"] == "tool"]
    assert '"query": "model context protocol", "max_results": 4' in told[0]
    [proposal] = read_conversation(path).exchanges[0].steps[0].proposals
    assert proposal.ran_with == {"query": "model context protocol", "max_results": 4}
    assert proposal.allowed_by == EDITED_LABEL


async def test_ctrl_o_switches_to_the_whole_json_and_back_each_taking_the_others_values():
    engine = ScriptedEngine([[call("web_search", {"query": "mcp", "max_results": 2})], "Found."])
    app = make_app(engine, [demo_config()])
    async with app.run_test(size=SIZE) as pilot:
        await _open_editor(pilot, app)
        screen = app.screen
        screen.query_one("#field-1", Input).value = "3"
        await pilot.press("ctrl+o")
        editor = screen.query_one(TextArea)
        await wait_for(pilot, lambda: editor.display, what="the JSON view")
        assert '"max_results": 3' in editor.text
        editor.load_text('{"query": "tools", "max_results": 5}')
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not editor.display, what="the form again")
        await wait_for(pilot, lambda: screen.query_one("#field-0", Input).value == "tools", what="the JSON's query")
        assert screen.query_one("#field-1", Input).value == "5"
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: editor.display, what="the JSON view")
        editor.load_text("[1]")
        await pilot.press("ctrl+o")
        problem = screen.query_one("#edit-arguments-problem", Static)
        await wait_for(pilot, lambda: "JSON object" in str(problem.render()), what="the JSON refused")
        assert editor.display  # stays in the JSON view
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="back at the dialog")


def _editor_scene(size):
    engine = ScriptedEngine([[call("web_search", {"query": "the history of the terminal", "max_results": 5})], "ok"])

    async def run_before(pilot) -> None:
        app = pilot.app
        await _open_editor(pilot, app)
        await pilot.pause(0.2)

    return make_app(engine), run_before


def test_the_argument_form_at_80x24(snap_compare):
    app, run_before = _editor_scene((80, 24))
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_the_argument_form_at_60x16(snap_compare):
    app, run_before = _editor_scene((60, 16))
    assert snap_compare(app, terminal_size=(60, 16), run_before=run_before)
