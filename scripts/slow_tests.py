"""Choose the tests the everyday loop (``pytest -m "not slow"``) leaves out, from what each one cost.

Run the tests with ``MCT_TEST_COST=PREFIX`` (tests/cost_report.py writes each test's CPU and wall time
to ``PREFIX.<pid>``), then ``python scripts/slow_tests.py PREFIX --write``: every test over the CPU or
wall limit is written to tests/slow_tests.txt, which tests/conftest.py marks ``slow``, except the cheapest
test of each file, which stays in the everyday loop so that every file is still run there. Files that
tests/conftest.py marks slow whole (SLOW_FILES) are left as they are. The whole suite runs in CI.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
LIST = TOP / "tests" / "slow_tests.txt"
HEADER = """\
# Tests the everyday loop (pytest -m "not slow") leaves out, chosen by scripts/slow_tests.py from what each
# cost in a run of the whole suite ({when}): over {cpu} s of CPU or {wall} s of wall time, except the
# cheapest test of each file. Each line: the test, its CPU and wall seconds. CI runs every test.
"""


def read_costs(prefix: str) -> dict[str, tuple[float, float]]:
    """Each test's (CPU, wall) seconds from the report files ``prefix.*``."""
    costs: dict[str, tuple[float, float]] = {}
    files = sorted(Path(prefix).parent.glob(Path(prefix).name + ".*"))
    if not files:
        sys.exit(f"no report files {prefix}.*: run the tests with MCT_TEST_COST={prefix} first")
    for report in files:
        for line in report.read_text(encoding="utf-8").splitlines():
            test, cpu, wall = line.rsplit("\t", 2)
            costs[test.split("@", 1)[0]] = (float(cpu), float(wall))  # as tests/conftest.py sees it
    return costs


def choose(costs: dict[str, tuple[float, float]], cpu: float, wall: float, whole_files: set[str]) -> set[str]:
    """The tests over either limit, but not the cheapest of its file nor any in a file slow whole."""
    by_file: dict[str, list[str]] = defaultdict(list)
    for test in costs:
        by_file[test.split("::", 1)[0]].append(test)
    slow: set[str] = set()
    for file, tests in by_file.items():
        if Path(file).name in whole_files:
            continue
        cheapest = min(tests, key=lambda test: costs[test])
        slow.update(t for t in tests if t != cheapest and (costs[t][0] > cpu or costs[t][1] > wall))
    return slow


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", help="the MCT_TEST_COST the tests were run with")
    parser.add_argument("--cpu", type=float, default=1.0, help="CPU seconds over which a test is slow")
    parser.add_argument("--wall", type=float, default=6.0, help="wall seconds over which a test is slow")
    parser.add_argument("--when", default="", help="when and where the run was made, for the list's header")
    parser.add_argument("--write", action="store_true", help=f"write {LIST.relative_to(TOP)}")
    args = parser.parse_args()
    sys.path.insert(0, str(TOP))
    from tests.conftest import SLOW_FILES, STEP_FILES

    costs = read_costs(args.prefix)
    whole = SLOW_FILES | STEP_FILES
    slow = choose(costs, args.cpu, args.wall, whole)
    everyday = [t for t in costs if t not in slow and Path(t.split("::", 1)[0]).name not in whole]
    total = sum(costs[t][0] for t in everyday)
    print(
        f"{len(costs)} tests reported; {len(slow)} chosen slow; the everyday loop: {len(everyday)} tests, "
        f"{total:.0f} s of CPU, {sum(costs[t][1] for t in everyday):.0f} s of wall time summed"
    )
    if args.write:
        lines = [f"{t}\t{costs[t][0]:.2f}\t{costs[t][1]:.2f}" for t in sorted(slow)]
        LIST.write_text(
            HEADER.format(when=args.when, cpu=args.cpu, wall=args.wall) + "\n".join(lines) + "\n", encoding="utf-8"
        )
        print(f"wrote {LIST.relative_to(TOP)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
