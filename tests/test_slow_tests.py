"""scripts/slow_tests.py: which tests the everyday loop leaves out, from their measured cost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scripts.slow_tests import choose, read_costs

TOP = Path(__file__).resolve().parent.parent


def test_tests_over_either_limit_are_slow_but_the_cheapest_of_each_file_stays():
    costs = {
        "tests/test_a.py::cheap": (0.2, 0.5),
        "tests/test_a.py::costly": (3.0, 4.0),
        "tests/test_a.py::waits": (0.3, 9.0),
        "tests/test_b.py::only_costly": (5.0, 6.5),  # the cheapest of its file, however costly
        "tests/test_b.py::costlier": (6.0, 7.0),
        "tests/test_c.py::whole": (9.0, 9.0),  # a file slow whole is left as it is
        "tests/test_c.py::whole_too": (8.0, 9.0),
    }
    slow = choose(costs, cpu=1.0, wall=6.0, whole_files={"test_c.py"})
    assert slow == {"tests/test_a.py::costly", "tests/test_a.py::waits", "tests/test_b.py::costlier"}


def test_the_report_is_read_from_every_workers_file(tmp_path):
    (tmp_path / "r.101").write_text("tests/test_a.py::x[a\tb]\t1.500\t2.000\n", encoding="utf-8")
    (tmp_path / "r.102").write_text("tests/test_a.py::y@test_a.py\t0.100\t0.200\n", encoding="utf-8")
    costs = read_costs(str(tmp_path / "r"))
    assert costs == {"tests/test_a.py::x[a\tb]": (1.5, 2.0), "tests/test_a.py::y": (0.1, 0.2)}


def test_without_a_report_it_says_how_to_make_one(tmp_path):
    run = [sys.executable, str(TOP / "scripts" / "slow_tests.py"), str(tmp_path / "none")]
    result = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "run the tests with MCT_TEST_COST=" in result.stderr


def test_every_test_the_list_names_exists():
    """A test renamed or removed leaves a line that marks nothing: the list is chosen again."""
    from tests.conftest import slow_tests

    listed = slow_tests()
    assert listed
    for test in listed:
        file, name = test.split("::", 1)[0], test.split("::")[-1].split("[", 1)[0]
        source = (TOP / file).read_text(encoding="utf-8")
        assert f"def {name}(" in source, f"{test} is not in {file}: run scripts/slow_tests.py again"
