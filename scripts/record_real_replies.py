"""Record what a real model writes, as test data for the tool-call recogniser (tests/data/real_replies/).

Runs each question through the app's own engine (``MlxEngine``: the same loading, compute and
chat template as the app) with the tools of the servers in ``--mcp-config``, greedy, and keeps
every generation's raw text exactly as mlx-lm's detokenizer gave it (special tokens included,
before the engine drops or recognises anything), with the special tokens it generated. Calls the
engine recognises are run on the real servers (no approval: a recording run), their results go
back to the model, and the next generation is recorded too, up to ``--rounds`` generations. It runs
in a fresh temporary folder: the servers get the working directory as a root, and a small model
calls tools that write files.

Each line written is one generation: ``{"model", "tool_prompt", "tool_parser", "tools", "question", "round",
"raw", "pieces", "special", "stopped_by"}``: ``pieces`` are ``[token id, text]`` as the engine got
them, ``special`` the special tokens among them (id to text) other than the one that ended the
turn (``stopped_by``). What should be parsed from it (``expect``) is added by a person reading
the sample, never by this script.

    MCP_CHAT_TUI_CACHE_DIR=/work/cache .venv/bin/python scripts/record_real_replies.py \\
        MODEL --mcp-config /work/refservers/mcp-time.json --out replies.jsonl "What time is it in Tokyo?"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp_chat_tui.config.mcp_json import load_mcp_config
from mcp_chat_tui.engine import mlx_request
from mcp_chat_tui.engine.events import Done, TextDelta, ToolCallMalformed, ToolCallProposed
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.settings import EngineSettings
from mcp_chat_tui.servers.hub import ServerHub

_generated: list[tuple[int, str]] = []  # (token id, text) of the generation being recorded


def _tap_tokens() -> None:
    """Keep every token ``Run.take`` is given, before the engine handles it."""
    original = mlx_request.Run.take

    def take(self: Any, response: Any, load: Any) -> bool:
        _generated.append((int(response.token), response.text or ""))
        return original(self, response, load)

    mlx_request.Run.take = take  # type: ignore[method-assign]


def _special_ids(tokenizer: Any) -> dict[int, str]:
    decoder = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    return {int(i): token.content for i, token in decoder.items() if getattr(token, "special", False)}


async def _one_question(engine: MlxEngine, hub: ServerHub, question: str, args: argparse.Namespace) -> list[dict]:
    specs = hub.tools()
    tools = [spec.to_openai() for spec in specs]
    names = sorted(spec.model_name for spec in specs)
    special = _special_ids(engine.tokenizer)
    eos = set(engine.tokenizer.eos_token_ids)
    parser = getattr(engine.tokenizer, "tool_parser", None)
    parser_name = parser.__module__.rsplit(".", 1)[-1] if parser is not None else None
    messages: list[dict] = [{"role": "user", "content": question}]
    records = []
    for round_number in range(1, args.rounds + 1):
        _generated.clear()
        text, calls = "", []
        async for event in engine.stream(messages, tools, known_tools=set(names)):
            if isinstance(event, TextDelta):
                text += event.text
            elif isinstance(event, (ToolCallProposed, ToolCallMalformed)):
                calls.append(event)
            elif isinstance(event, Done):
                break
        tokens = list(_generated)
        last = tokens[-1][0] if tokens else None
        records.append(
            {
                "model": args.name,
                "tool_prompt": args.tool_prompt,
                "tool_parser": parser_name,
                "tools": names,
                "question": question,
                "round": round_number,
                "raw": "".join(piece for _, piece in tokens),
                "pieces": [[t, piece] for t, piece in tokens],
                "special": {str(t): special[t] for t, _ in tokens if t in special and t not in eos},
                "stopped_by": special.get(last, str(last)) if last in eos else None,
            }
        )
        print(json.dumps(records[-1], ensure_ascii=False), file=sys.stderr, flush=True)
        proposed = [c for c in calls if isinstance(c, ToolCallProposed)]
        if not proposed:
            break
        messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in proposed
                ],
            }
        )
        for call in proposed:
            spec = hub.find_tool(call.name)
            if spec is None:
                content = f"Error: no server offers a tool named {call.name!r}"
            else:
                content = (await hub.call_tool(spec.server, spec.name, call.arguments)).for_model()
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return records


async def main(args: argparse.Namespace) -> None:
    _tap_tokens()
    questions = list(args.questions)
    if args.questions_file:
        questions += [line.strip() for line in Path(args.questions_file).read_text().splitlines() if line.strip()]
    model = str(Path(args.model).resolve()) if Path(args.model).exists() else args.model
    args.out = str(Path(args.out).resolve())
    config = load_mcp_config(Path(args.mcp_config).resolve(), workspace_folder=Path.cwd())
    os.chdir(tempfile.mkdtemp(prefix="record-real-replies-"))  # the servers' root: what the model may write in
    engine = MlxEngine(model, EngineSettings(max_tokens=args.max_tokens, tool_prompt=args.tool_prompt))
    await engine.load()
    async with ServerHub(config.servers.values()) as hub:
        await hub.start_all()
        with open(args.out, "a", encoding="utf-8") as out:
            for question in questions:
                for record in await _one_question(engine, hub, question, args):
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    out.flush()
    await engine.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("questions", nargs="*")
    parser.add_argument("--questions-file")
    parser.add_argument("--name", default="qwen2.5-coder-0.5b-instruct", help="the model's name in the records")
    parser.add_argument("--mcp-config", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument("--tool-prompt", default="template", choices=["template", "text"])
    asyncio.run(main(parser.parse_intermixed_args()))
