"""What vulture (tests/test_dead_code.py) cannot see used: names a library calls or reads by name,
fields kept for people and tests to read, and parameters a caller's signature imposes.

Each line names the thing and says who uses it. Code only this file keeps alive is dead: when a
line's reason stops being true, delete the line and the code.
"""

from mcp_chat_tui.agent.events import SummariesEnded
from mcp_chat_tui.cli.report import ExitCode
from mcp_chat_tui.engine.events import Stats
from mcp_chat_tui.engine.loading import _ReportingBar
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.toolcalls import ParsedReply
from mcp_chat_tui.servers.oauth_storage import ServerTokenStorage
from mcp_chat_tui.servers.state import ServerStatus
from mcp_chat_tui.servers.stdout_lines import MessageLines
from mcp_chat_tui.servers.task_session import TaskClient
from mcp_chat_tui.ui.app import ChatApp
from mcp_chat_tui.ui.format import FrozenClock
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.arguments import ServerSuggester
from mcp_chat_tui.ui.themes import ThemeFile
from mcp_chat_tui.ui.widgets.completion import CompletionMenu
from mcp_chat_tui.ui.widgets.sidebar import FittedTable
from mcp_chat_tui.ui.widgets.status import StatusBar
from mcp_chat_tui.ui.workspace import Workspace


class _OtherLibrarysObject:
    """Stands for an object of another library: vulture counts ``_.name`` as a use of ``name``."""

    def __getattr__(self, name: str) -> None:
        return None


_ = _OtherLibrarysObject()

# The MCP SDK calls these by name.
ServerTokenStorage.get_tokens  # the SDK's TokenStorage protocol (OAuth)
ServerTokenStorage.set_tokens
ServerTokenStorage.get_client_info
ServerTokenStorage.set_client_info
TaskClient._build_session  # mcp.Client builds its session through it (servers/sdk_private.py)
_.token_expiry_time  # the SDK's OAuth context reads it (servers/oauth.py sets it)
_.redirect_uris  # the SDK's client metadata reads it
_.PROCESS_TERMINATION_TIMEOUT  # the SDK's stdio transport reads these module settings when it stops a server
_.FORCE_KILL_TIMEOUT

# huggingface_hub drives a tqdm-shaped progress bar by these names.
_ReportingBar.disable
_ReportingBar.set_description_str
_ReportingBar.set_postfix_str
_ReportingBar.set_postfix
_ReportingBar.format_dict

# Textual's Stylesheet reads these (ui/textual_private.py's use_rules sets them as its reparse leaves them).
_._rules
_._rules_map
_._require_parse

# Textual reads these by name.
ChatApp.TITLE
ApprovalScreen.VERTICAL_BREAKPOINTS
CompletionMenu.can_focus
StatusBar.COMPONENT_CLASSES
Workspace.SCOPED_CSS
ServerSuggester.get_suggestion
FittedTable._get_row_region
ChatApp.delay_update  # the command palette calls it as it closes
ThemeFile.primary  # a theme file's fields, handed to Textual's Theme by name
ThemeFile.secondary
ThemeFile.accent
ThemeFile.foreground
ThemeFile.background
ThemeFile.surface
ThemeFile.panel
ThemeFile.boost
ThemeFile.success

# Parameters a caller's signature imposes.
_.option_string  # argparse.Action.__call__
_.frame  # a signal handler's

# Kept for people and tests to read: a vocabulary, figures, state a test observes.
ExitCode.BAD_INPUT  # exit codes, in docs/reference.md
ExitCode.TERMINATED
Stats.peak_memory_gb
SummariesEnded.in_use
ParsedReply.thinking
ServerStatus.call_count
ServerStatus.total_latency
ServerStatus.restarts
MessageLines.bytes_searched  # tests check every byte is looked at once
MlxEngine.cached_tokens  # tests check what the KV cache holds
FrozenClock  # snapshot tests and scripts/make_screenshots.py show a fixed time

# Read by the canary tests (tests/test_sdk_private.py, tests/test_textual_private.py).
from mcp_chat_tui.servers import sdk_private  # noqa: E402
from mcp_chat_tui.ui import textual_private  # noqa: E402

sdk_private.PRIVATE_NAMES
sdk_private.SESSION_NAMES
sdk_private.CLIENT_NAMES
textual_private.PRIVATE_NAMES
textual_private.INSTANCE_NAMES
textual_private.TEXTUAL_GET_INNER_OUTER  # tests/test_textual_private.py compares the replacement with it
textual_private.focus_rules_inside  # tests/test_focus_restyle.py: why the chat restyles itself alone

# Read by tests/test_prompt_frame.py: whether Enter's hold of the frames was let go.
from mcp_chat_tui.ui.frame_hold import FrameHold  # noqa: E402

FrameHold.holding

# Textual's Footer hook, called by the screen when its keys change (ui/widgets/footer.py overrides it).
from mcp_chat_tui.ui.widgets.footer import KeyFooter  # noqa: E402

KeyFooter.bindings_changed

# Rich reads a Text's no_wrap when it lays a table cell out (ui/widgets/call_columns.py sets it).
from rich.text import Text  # noqa: E402

Text.no_wrap
