"""Runs the official MCP conformance suite's client scenarios against mcp-chat-tui.

    python scripts/conformance.py                   every client scenario of both spec versions
    python scripts/conformance.py --spec 2026-07-28 --scenario auth/scope-step-up
    python scripts/conformance.py --list            the scenarios, without running them

The suite (``@modelcontextprotocol/conformance`` on npm: 0.1.16 for 2025-11-25, 0.2.0-alpha for
2026-07-28) and the Node 22 it needs (npm's ``node-<os>-<arch>@22``) are installed into a cache
folder (``$MCP_CHAT_TUI_CONFORMANCE_CACHE``, else ``~/.cache/mcp-chat-tui-conformance``) and reused.
For each scenario the suite starts its scenario server and runs this script's ``client`` command
with the server's URL; that wrapper (``conformance_client.py``) writes an mcp.json for the URL and
drives the real ``mcp-chat-tui`` CLI with a scripted model. One line is printed per scenario, then
a last JSON line ``{"passed": N, "total": M, "failed": [...]}`` (a warning counts as a failure).
Scenarios that a spec version runs without scoring them (extensions, added after the release) are
printed as ``not scored`` and left out of the count. Exit 0 when every scored scenario passed,
1 when one did not, 77 when Node 22 cannot be had (the run is skipped, and says so).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLIENT = Path(__file__).resolve().with_name("conformance_client.py")
SUITE_PACKAGE = "@modelcontextprotocol/conformance"
SUITES = {"2025-11-25": "0.1.16", "2026-07-28": "0.2.0-alpha.12"}  # spec version -> suite version
NODE_MAJOR = 22
SKIPPED = 77  # the exit code for "could not run" (no Node 22)
SCENARIO_TIMEOUT_MS = (
    300_000  # generous: a loaded machine starts the CLI slowly, and a scenario may start it five times
)


@dataclass
class Scenario:
    spec: str
    name: str
    scored: bool = True
    why_not_scored: str = ""


@dataclass
class Outcome:
    scenario: Scenario
    verdict: str  # pass, fail, warning
    seconds: float
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        label = self.verdict if self.scenario.scored else f"{self.verdict} (not scored: {self.scenario.why_not_scored})"
        why = f"  {'; '.join(self.problems)}" if self.problems and self.verdict != "pass" else ""
        return f"{self.scenario.spec}  {self.scenario.name:<42} {label:<8} {self.seconds:5.1f}s{why}"


# ----- installing ---------------------------------------------------------------------------


def cache_dir() -> Path:
    configured = os.environ.get("MCP_CHAT_TUI_CONFORMANCE_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "mcp-chat-tui-conformance"


def npm_install(folder: Path, spec: str) -> None:
    """``npm install spec`` into ``folder`` (its own package.json), unless done before."""
    marker = folder / ".installed"
    if marker.exists() and marker.read_text() == spec:
        return
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "package.json").exists():
        (folder / "package.json").write_text('{"name": "cache", "private": true}\n')
    command = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--engine-strict=false", spec]
    subprocess.run(command, cwd=folder, check=True, stdout=subprocess.DEVNULL)
    marker.write_text(spec)


def node_22(cache: Path) -> str | None:
    """A Node 22 (or newer) binary: the machine's own, else npm's ``node-<os>-<arch>@22`` in the cache."""
    system = shutil.which("node")
    if system and _major(system) >= NODE_MAJOR:
        return system
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    os_name = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    if machine is None or os_name is None or shutil.which("npm") is None:
        return None
    package = f"node-{os_name}-{machine}"
    try:
        npm_install(cache / "node", f"{package}@{NODE_MAJOR}")
    except subprocess.CalledProcessError:
        return None
    binary = cache / "node" / "node_modules" / package / "bin" / "node"
    return str(binary) if binary.exists() and _major(str(binary)) >= NODE_MAJOR else None


def _major(node: str) -> int:
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    found = re.match(r"v(\d+)", version.strip())
    return int(found.group(1)) if found else 0


def node_env(cache: Path) -> dict[str, str]:
    """The environment Node runs the suite in: with its compile cache in the cache folder, so that each
    scenario's runner (a Node process each) reads the suite's code compiled once (Node 22.1 and later)."""
    return os.environ | {"NODE_COMPILE_CACHE": str(cache / "node-compile-cache")}


def suite_entry(cache: Path, version: str) -> Path:
    folder = cache / f"suite-{version}"
    npm_install(folder, f"{SUITE_PACKAGE}@{version}")
    return folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


# ----- listing ------------------------------------------------------------------------------


def list_scenarios(node: str, entry: Path, spec: str) -> list[Scenario]:
    """The client scenarios the suite runs for ``spec``: its frozen requirement set where the suite
    has one (scored, then the ones it runs without scoring), else every client scenario of ``spec``."""
    listed = subprocess.run(
        [node, str(entry), "list", "--client", "--requirements", spec], capture_output=True, text=True
    )
    if listed.returncode == 0 and "Client scenarios" in listed.stdout:
        return _from_requirements(listed.stdout, spec)
    listed = subprocess.run(
        [node, str(entry), "list", "--client", "--spec-version", spec], capture_output=True, text=True, check=True
    )
    return [Scenario(spec, name) for name in re.findall(r"^\s+- (\S+)", listed.stdout, re.M)]


def _from_requirements(text: str, spec: str) -> list[Scenario]:
    scenarios: list[Scenario] = []
    section, reason = "", ""
    for line in text.splitlines():
        if line.startswith("Client scenarios"):
            section = "client"
        elif line.startswith("Server scenarios"):
            section = "server"
        elif line.startswith("Run and reported, but never scored"):
            section = "not scored"
        elif section == "not scored" and re.match(r"\s+([\w-]+) \(\d+\):", line):
            reason = line.split("(")[0].strip()
        elif found := re.match(r"\s+- (\S+)(?: \[(\w+)\])?", line):
            name, role = found.groups()
            if section == "client":
                scenarios.append(Scenario(spec, name))
            elif section == "not scored" and role == "client":
                scenarios.append(Scenario(spec, name, scored=False, why_not_scored=reason))
    return scenarios


# ----- running ------------------------------------------------------------------------------


def run_scenario(node: str, entry: Path, scenario: Scenario, results: Path, env: dict[str, str]) -> Outcome:
    """One scenario through the suite's runner (in ``env``), judged as the runner judges it (its exit
    code), with the checks that failed or warned."""
    out = results / scenario.spec / scenario.name.replace("/", "_")
    shutil.rmtree(out, ignore_errors=True)
    command = f"{sys.executable} {CLIENT}"
    started = time.monotonic()
    runner = subprocess.run(
        [
            node, str(entry), "client", "--command", command, "--scenario", scenario.name,
            "--spec-version", scenario.spec, "--timeout", str(SCENARIO_TIMEOUT_MS), "-o", str(out),
            *([] if scenario.scored else ["--force"]),  # an extension is on no spec's timeline: run it anyway
        ],
        capture_output=True, text=True, cwd=REPO, env=env | {"PYTHONPATH": str(REPO)},
    )  # fmt: skip
    seconds = time.monotonic() - started
    (out).mkdir(parents=True, exist_ok=True)
    (out / "runner.txt").write_text(runner.stdout + runner.stderr)
    problems, only_warned = _problems(out, runner.stderr)
    if runner.returncode == 0:
        verdict = "pass"
    else:
        verdict = "warning" if only_warned else "fail"
    return Outcome(scenario, verdict, seconds, problems)


def _problems(out: Path, stderr: str) -> tuple[list[str], bool]:
    """The failed checks (and the warned ones) of the scenario's checks.json, and the runner's word
    on the client (timed out, exited with an error); True when checks only warned."""
    problems: list[str] = []
    warned = failed = False
    for checks_file in out.rglob("checks.json"):
        for check in json.loads(checks_file.read_text()):
            if check.get("status") == "FAILURE":
                failed = True
                problems.append(f"{check.get('id')}: {check.get('errorMessage') or check.get('description')}")
            elif check.get("status") == "WARNING":
                warned = True
                problems.append(f"{check.get('id')} (warning): {check.get('description')}")
    for sign in ("CLIENT TIMED OUT", "CLIENT EXITED WITH ERROR"):
        if sign in stderr:
            line = next(line for line in stderr.splitlines() if sign in line)
            problems.append(line.strip(" ⚠️"))
    return problems, warned and not failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", choices=sorted(SUITES), action="append", help="only this spec version")
    parser.add_argument("--scenario", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--scored-only", action="store_true", help="skip the scenarios a version does not score")
    parser.add_argument("--jobs", type=int, default=2, help="scenarios run at once (default 2)")
    parser.add_argument("--results", type=Path, help="where the suite's results go (default: a temporary folder)")
    args = parser.parse_args()

    cache = cache_dir()
    if shutil.which("npm") is None:
        print("skipped: npm is not installed, so Node 22 and the suite cannot be installed", flush=True)
        return SKIPPED
    node = node_22(cache)
    if node is None:
        print(f"skipped: no Node {NODE_MAJOR} here and none could be installed from npm", flush=True)
        return SKIPPED
    scenarios: list[tuple[Path, Scenario]] = []
    for spec in args.spec or sorted(SUITES):
        try:
            entry = suite_entry(cache, SUITES[spec])
        except subprocess.CalledProcessError:
            print(f"skipped: npm could not install {SUITE_PACKAGE}@{SUITES[spec]} (is the npm registry reachable?)")
            return SKIPPED
        for scenario in list_scenarios(node, entry, spec):
            if args.scenario and scenario.name not in args.scenario:
                continue
            if args.scored_only and not scenario.scored:
                continue
            scenarios.append((entry, scenario))
    if args.list:
        for _, scenario in scenarios:
            print(scenario.spec, scenario.name, "" if scenario.scored else f"(not scored: {scenario.why_not_scored})")
        return 0

    results = args.results or Path(tempfile.mkdtemp(prefix="mcp-chat-tui-conformance-"))
    print(f"suite results in {results}", flush=True)
    outcomes: list[Outcome] = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        env = node_env(cache)
        running = [pool.submit(run_scenario, node, entry, scenario, results, env) for entry, scenario in scenarios]
        for future in running:
            outcome = future.result()
            outcomes.append(outcome)
            print(outcome.line(), flush=True)
    scored = [outcome for outcome in outcomes if outcome.scenario.scored]
    failed = [f"{o.scenario.spec} {o.scenario.name}" for o in scored if o.verdict != "pass"]
    summary = {"passed": len(scored) - len(failed), "total": len(scored), "failed": failed}
    print(json.dumps(summary), flush=True)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
