"""Every check CI runs (.ci/run, through the README's test command), one step at a time.

The steps: ``lint`` (ruff), ``types`` (mypy), ``imports`` (import-linter's contracts, when
pyproject.toml has them), ``dead code`` (vulture, with pyproject.toml's ``[tool.vulture]``), ``packaging`` (the sdist and the wheel built from it, and the wheel
installed: scripts/check_package.py), ``tests`` (pytest, without the tests marked ``step``, which
check by hand what the steps above check), ``conformance`` (the official MCP conformance suite's
scored client scenarios of both spec versions: scripts/conformance.py; skipped, saying why, where
Node 22 or the suite cannot be installed) and ``benches`` (each bench in bench/ in its smoke mode:
it still runs, its figures are not judged). Each step prints the commands it runs and its time; all
steps run, and the exit status is 1 when any failed. ``--only`` / ``--skip`` take step names;
arguments after ``--`` go to pytest.

The tests run beside the other steps: the test step (two pytest workers) leaves about a quarter of
two cores idle while its tests wait on apps, servers and processes, which the other steps use. The
test step's output is kept and printed whole when it ends; ``--one-at-a-time`` runs every step in
turn instead.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SKIPPED = 77  # a command's exit code for "could not run here" (it says why): the step is not failed

# The benches' smoke runs: small sizes, one round (bench/README.md says what each measures).
BENCH_SMOKE = [
    ["bench/transcript.py", "--smoke"],
    ["bench/mcp_overhead.py", "--smoke"],
    ["bench/ui_stream.py", "--smoke"],
    ["bench/engine_overhead.py", "--runs", "2", "--tokens", "8"],
    ["bench/cpu_speed.py", "--smoke"],
    ["bench/options.py", "--smoke"],
    ["bench/gguf_speed.py", "--smoke"],
    ["bench/tool_use.py", "demo", "--questions", "1", "--timeout", "300"],
]


def import_contracts() -> list[list[str]]:
    """import-linter's run, when pyproject.toml declares contracts (none: nothing to run)."""
    pyproject = tomllib.loads((TOP / "pyproject.toml").read_text(encoding="utf-8"))
    if "importlinter" not in pyproject.get("tool", {}):
        print("  (pyproject.toml has no [tool.importlinter] contracts; tests/test_imports.py checks for circles)")
        return []
    return [[str(Path(PYTHON).with_name("lint-imports"))]]


def steps(pytest_args: list[str]) -> dict[str, object]:
    """Each step's commands (a list, or a function giving it when the step starts)."""
    return {
        "lint": [[PYTHON, "-m", "ruff", "check", "."], [PYTHON, "-m", "ruff", "format", "--check", "."]],
        "types": [[PYTHON, "-m", "mypy", "--config-file", "pyproject.toml"]],
        "imports": import_contracts,
        "dead code": [[PYTHON, "-m", "vulture"]],
        "packaging": [[PYTHON, "scripts/check_package.py"]],
        "tests": [[PYTHON, "-m", "pytest", "-q", "-m", "not step", *pytest_args]],
        "conformance": [[PYTHON, "scripts/conformance.py", "--scored-only"]],
        "benches": [[PYTHON, *command] for command in BENCH_SMOKE],
    }


def compile_checkout() -> None:
    """Write the checkout's bytecode once, here: with ``PYTHONDONTWRITEBYTECODE`` set (as where CI runs)
    Python writes none, and every process the steps start (the CLI in tests, the conformance client,
    the benches) would compile the app's 200-odd modules again, 0.3-0.45 s of CPU each time."""
    for folder in ("mcp_chat_tui", "tests", "bench", "scripts"):
        compileall.compile_dir(TOP / folder, quiet=1)


def run_step(name: str, commands, out=None) -> bool:
    """Run one step's commands in turn, printing to ``out`` (a file; standard output when None)."""
    stream = out if out is not None else sys.stdout

    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    say(f"\n== {name}")
    started = time.monotonic()
    ok, skipped, cpu = True, False, 0.0
    listed = commands() if callable(commands) else commands
    for command in listed:
        shown = " ".join(Path(part).name if part == PYTHON else part for part in command)
        say(f"+ {shown}")
        began = time.monotonic()
        code, used = run_command(command, out)
        cpu += used
        if len(listed) > 1:  # each command's share of the step
            say(f"   ({time.monotonic() - began:.0f} s, {used:.0f} s of CPU)")
        if code == SKIPPED:
            say(f"-- skipped: {shown} (it said why above)")
            skipped = True
        elif code != 0:
            say(f"!! failed: {shown}")
            ok = False
    verdict = "FAILED" if not ok else "skipped" if skipped else "passed"
    say(f"== {name}: {verdict} in {time.monotonic() - started:.0f} s ({cpu:.0f} s of CPU)")
    return ok


def run_command(command: list[str], out) -> tuple[int, float]:
    """Run one command; its exit code and the CPU time (user and system) of it and of every process it
    waited for (pytest's workers and the processes the tests start), from ``wait4``: the machine has two
    cores, so CPU, not wall time, says what a step costs the others beside it."""
    process = subprocess.Popen(command, cwd=TOP, env=os.environ, stdout=out, stderr=out)
    try:
        _, status, usage = os.wait4(process.pid, 0)
    except BaseException:
        process.kill()
        process.wait()
        raise
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_utime + usage.ru_stime


def run_beside(name: str, commands, others: dict[str, object]) -> dict[str, bool]:
    """Run step ``name`` on a thread, its output kept in a file, while ``others`` run in turn here;
    then print its output whole. Each step's result by name."""
    results: dict[str, bool] = {}
    with tempfile.TemporaryFile("w+", encoding="utf-8") as kept:
        print(f"\n== {name}: running beside the steps below; its output follows them", flush=True)
        beside = threading.Thread(target=lambda: results.update({name: run_step(name, commands, kept)}))
        beside.start()
        for other, other_commands in others.items():
            results[other] = run_step(other, other_commands)
        beside.join()
        kept.seek(0)
        sys.stdout.write(kept.read())
        sys.stdout.flush()
    return results


def main() -> int:
    arguments = sys.argv[1:]
    pytest_args = arguments[arguments.index("--") + 1 :] if "--" in arguments else []
    arguments = arguments[: arguments.index("--")] if "--" in arguments else arguments
    every = steps(pytest_args)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(every), help="run only these steps")
    parser.add_argument("--skip", nargs="+", choices=list(every), default=[], help="leave these steps out")
    parser.add_argument("--one-at-a-time", action="store_true", help="run the tests in turn with the other steps")
    args = parser.parse_args(arguments)
    chosen = [name for name in (args.only or every) if name not in args.skip]
    started = time.monotonic()
    compile_checkout()
    if "tests" in chosen and len(chosen) > 1 and not args.one_at_a_time:
        results = run_beside("tests", every["tests"], {name: every[name] for name in chosen if name != "tests"})
    else:
        results = {name: run_step(name, every[name]) for name in chosen}
    failed = [name for name, ok in results.items() if not ok]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"\nall steps in {time.monotonic() - started:.0f} s ({children.ru_utime + children.ru_stime:.0f} s of CPU); "
        + (f"FAILED: {', '.join(failed)}" if failed else "passed")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
