"""The command line: what ``mcp-chat-tui`` accepts."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import get_args

from mcp_chat_tui import __version__
from mcp_chat_tui.config.model_options import KV_BITS, KV_GROUP_SIZES, ToolPrompt
from mcp_chat_tui.engine.blas import BLAS_ENV, blas_in_use
from mcp_chat_tui.engine.compute import FLOAT32_ON_CPU

DEMO_MODEL = "demo"

EPILOG = """\
examples:
  mcp-chat-tui --demo                        the bundled toy model and demo server
  mcp-chat-tui mlx-community/Qwen3-4B-4bit   a model from the Hugging Face hub
  mcp-chat-tui ./my-model --plain            the plain console interface
  mcp-chat-tui ./my-model -p "what is 12*7"  one turn; only the answer on stdout (for scripts)
  echo "what is 12*7" | mcp-chat-tui ./my-model -p - --json   the prompt from stdin, a JSON report
  mcp-chat-tui --check-servers               start the configured servers and report
  mcp-chat-tui ./my-model --check-tools      does the model call each of the servers' tools right?
  mcp-chat-tui --sign-in NAME                sign in to an HTTP server that needs it (OAuth)
  mcp-chat-tui --search "tokyo"              find an earlier conversation that says it

files:
  mcp.json     --mcp-config, else ./mcp.json, ./.vscode/mcp.json, the user config
               directory's mcp.json, else the bundled one (the demo server);
               with --demo: --mcp-config, else the bundled one. The working folder's
               file starts servers only once you trust it (asked; --trust-folder, --yes)
  config.toml  --config, else $MCP_CHAT_TUI_CONFIG, else the user config directory

exit codes: 0 answered (or ok), 1 the engine or a server failed, 2 a bad command line,
  configuration or prompt, or a folder's mcp.json nobody could be asked to trust, 3 the answer
  may be incomplete (a tool call was denied, timed out or stopped, a server's request was
  refused, or the turn ended without an answer: no text, max_tool_rounds, repeated calls); with
  --check-tools, some tool was not called correctly, 4 a server needs sign-in (run --sign-in
  NAME, then again), 130 Ctrl+C, 143 SIGTERM
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-chat-tui",
        description="Chat with a local MLX model that uses tools from MCP servers; every tool call is shown "
        "and needs your approval.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model_flags(parser)
    add_generation_flags(parser)
    add_turn_flags(parser)
    add_server_flags(parser)
    add_endpoint_flags(parser)
    add_engine_flag(parser)
    add_transcript_flags(parser)
    add_blas_flag(parser)
    add_tool_prompt_flag(parser)
    add_thinking_flag(parser)
    add_cache_flags(parser)
    return parser


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    """The model and how the conversation is shown."""
    parser.add_argument(
        "model", nargs="?", help="a Hugging Face repo id or a local model folder (with --endpoint: the model name)"
    )
    parser.add_argument("--version", action=VersionAction, help="show the versions, the BLAS in use, and exit")
    parser.add_argument(
        "--demo", action="store_true", help="use the bundled toy model with the bundled mcp.json (unless --mcp-config)"
    )
    parser.add_argument("--plain", action="store_true", help="the plain console interface instead of the full screen")
    parser.add_argument(
        "--context-length",
        type=positive_int,
        metavar="TOKENS",
        help="how many tokens the model takes (prompt and reply; default: config.toml's context_length, else "
        "the model's own files)",
    )


def positive_int(text: str) -> int:
    """A whole number of at least 1, for argparse (it names the flag in its error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def add_generation_flags(parser: argparse.ArgumentParser) -> None:
    """How the model samples and how long it may write (over config.toml's ``[model]``; cli/chat.py applies them)."""
    parser.add_argument(
        "--temp",
        type=number_at_least(0.0, float),
        metavar="T",
        help="sampling temperature (0: greedy, the default unless the model's generation_config.json says otherwise)",
    )
    parser.add_argument(
        "--max-tokens", type=number_at_least(1, int), metavar="N", help="the most tokens one reply may have"
    )
    parser.add_argument(
        "--seed", type=number_at_least(0, int), metavar="N", help="seed each reply's sampling: the same reply again"
    )


def number_at_least(lowest: float, kind: type, highest: int = 2**63 - 1) -> Callable[[str], float]:
    """An argparse type: a finite number of ``kind`` (int or float) from ``lowest`` to ``highest``
    (by default the largest whole number config.toml can hold)."""

    def parse(text: str) -> float:
        what = "a whole number" if kind is int else "a number"
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not (math.isfinite(value) and lowest <= value <= highest):
            upper = f" and at most {highest}" if value > highest else ""
            raise argparse.ArgumentTypeError(f"expected {what} of at least {lowest:g}{upper}, got {text!r}")
        return value

    return parse


def add_turn_flags(parser: argparse.ArgumentParser) -> None:
    """One turn for scripts, saving, and approvals."""
    parser.add_argument(
        "-p",
        "--prompt",
        metavar="PROMPT",
        help="run one turn with PROMPT ('-': read it from stdin), print only the answer on stdout "
        "(the rest goes to stderr), exit",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="with -p: print one JSON object (answer, every call, token figures) instead of the answer",
    )
    parser.add_argument("--no-save", action="store_true", help="do not save the conversation")
    parser.add_argument("-y", "--yes", action="store_true", help="run every tool call without asking")
    parser.add_argument(
        "--max-tool-rounds",
        type=positive_int,
        metavar="N",
        help="the most rounds of tool calls one turn may take; then the model is told to answer (over "
        "config.toml's max_tool_rounds; default 8)",
    )


def add_server_flags(parser: argparse.ArgumentParser) -> None:
    """Checking and signing in to the servers, and the configuration files."""
    parser.add_argument(
        "--check-servers", action="store_true", help="start the configured servers, print a table, exit"
    )
    parser.add_argument(
        "--check-tools",
        action="store_true",
        help="ask the model one generated question per offered tool (nothing runs), print a table of its "
        "calls, exit (0: every tool called correctly, 3: not; --json for an object)",
    )
    parser.add_argument(
        "--sign-in",
        metavar="NAME",
        help="sign in to the HTTP server NAME of mcp.json (OAuth: shows the address to open)",
    )
    parser.add_argument(
        "--sign-out", metavar="NAME", help="forget the sign-in (tokens, registered client) kept for the server NAME"
    )
    parser.add_argument("--mcp-config", type=Path, metavar="PATH", help="the mcp.json to use")
    parser.add_argument(
        "--trust-folder",
        action="store_true",
        help="start the servers of the working folder's mcp.json (./mcp.json, ./.vscode/mcp.json) without asking, "
        "for this run (--yes does too)",
    )
    parser.add_argument("--config", type=Path, metavar="PATH", help="the config.toml to use")


def add_engine_flag(parser: argparse.ArgumentParser) -> None:
    """Which local engine runs the model (``auto``: llama.cpp for a GGUF file on a Linux CPU when installed)."""
    parser.add_argument(
        "--engine",
        choices=("auto", "mlx", "llama.cpp"),
        default="auto",
        help="the local engine: mlx, or llama.cpp for a GGUF file (auto: llama.cpp for a GGUF file on a "
        "CPU when llama-cpp-python is installed, else mlx)",
    )


def add_endpoint_flags(parser: argparse.ArgumentParser) -> None:
    """A model served elsewhere, over the OpenAI protocol."""
    parser.add_argument(
        "--endpoint", metavar="URL", help="an OpenAI-compatible server (mlx_lm.server, vLLM, llama.cpp)"
    )
    parser.add_argument(
        "--api-key-env", metavar="VAR", default="OPENAI_API_KEY", help="environment variable holding the endpoint's key"
    )


def add_transcript_flags(parser: argparse.ArgumentParser) -> None:
    """Which conversation to continue."""
    parser.add_argument(
        "--transcript",
        type=Path,
        metavar="FILE",
        help="open this conversation file and continue it (created if missing)",
    )
    parser.add_argument("--resume", action="store_true", help="start by picking a saved conversation to continue")
    parser.add_argument(
        "--search",
        metavar="TEXT",
        help="search every saved conversation's prompts, replies and tool results for TEXT, print the matches "
        "(newest first; --json for a list), exit (0: found, 3: none)",
    )


def add_blas_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--blas",
        metavar="WHICH",
        help=f"the BLAS MLX computes with on the CPU: auto (the fastest found), none (MLX's own), or a library's "
        f"path (default: ${BLAS_ENV}, else auto)",
    )


def add_thinking_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-thinking",
        dest="thinking",
        action="store_const",
        const=False,
        default=None,
        help="ask the model not to think before it answers, for this run (where its chat template has the "
        "switch, enable_thinking; config.toml: thinking = false in [model])",
    )


def add_tool_prompt_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tool-prompt",
        choices=get_args(ToolPrompt),
        metavar="HOW",
        help="how the model learns of the tools: template (its chat template; one without tools means plain chat) "
        "or text (described in the system prompt, for models whose template takes none); over config.toml's "
        "tool_prompt (default: template)",
    )


def add_cache_flags(parser: argparse.ArgumentParser) -> None:
    """The local model's KV cache and draft model (over config.toml's ``[model]`` keys of the same names)."""
    group = parser.add_argument_group("local model speed (over config.toml's [model] keys of the same names)")
    group.add_argument(
        "--kv-bits", type=int, choices=KV_BITS, help="quantize the KV cache to this many bits (less memory)"
    )
    group.add_argument(
        "--kv-group-size", type=int, choices=KV_GROUP_SIZES, help="with --kv-bits: values quantized together (64)"
    )
    group.add_argument(
        "--draft-model",
        metavar="MODEL",
        help="a small model with the same tokenizer that drafts tokens for the model to check (speculative decoding)",
    )
    group.add_argument(
        "--num-draft-tokens", type=positive_int, metavar="N", help="with --draft-model: tokens drafted at a time (3)"
    )


def blas_setting(argv: list[str] | None) -> str | None:
    """``--blas``'s value, read before the rest of the command line: the BLAS loads before anything else."""
    parser = argparse.ArgumentParser(add_help=False)
    add_blas_flag(parser)
    known, _ = parser.parse_known_args(argv)
    return known.blas


def version_text() -> str:
    """``--version``: this app's version, MLX's, the BLAS in use, and the dtype it computes in on the CPU."""
    versions = [f"mcp-chat-tui {__version__}"]
    for package in ("mlx", "mlx-lm"):
        try:
            versions.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            versions.append(f"{package} not installed")
    blas = blas_in_use()
    lines = [", ".join(versions), f"BLAS: {blas.describe() if blas is not None else 'not loaded yet'}"]
    kinds = ", ".join(sorted(FLOAT32_ON_CPU))
    lines.append(f"compute on the CPU: float32 for {kinds} weights (as stored on a GPU)")
    return "\n".join(lines)


class VersionAction(argparse.Action):
    """Prints ``version_text()`` and exits, like argparse's own ``version`` action."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(version_text())
        parser.exit()
