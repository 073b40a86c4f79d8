"""The pytest-fairness command: history, compare (exit codes), report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_fairness.baseline import save_baseline
from pytest_fairness.cli import main
from pytest_fairness.history import HistoryStore
from pytest_fairness.results import GroupStat, IndicatorResult


def record(nodeid: str, b: float, outcome: str = "passed") -> dict[str, Any]:
    r = IndicatorResult("group_metrics", "accuracy", (0.8 + b) / 2, min_group_size=1,
                        groups=(GroupStat("a", 10, 0.8), GroupStat("b", 10, b)))
    return {"nodeid": nodeid, "outcome": outcome, "results": [{**r.to_dict(), "key": None}]}


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "h.sqlite"
    with HistoryStore(path) as store:
        store.record_run({"checkpoint": "epoch1"}, [record("t.py::a", 0.7), record("t.py::b", 0.8)])
        store.record_run({"checkpoint": "epoch2"}, [record("t.py::a", 0.5, "failed"),
                                                    record("t.py::b", 0.8)])
    return path


def test_history_table(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rows are tests, columns checkpoints; failed cells are marked."""
    assert main(["--history", str(history), "history"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["test", "epoch1", "epoch2"]
    row_a = next(line for line in lines if line.startswith("t.py::a"))
    assert row_a.split()[-3:] == ["0.1", "0.3", "!"]
    assert main(["--history", str(history), "history", "--metric", "worst"]) == 0
    assert "0.5 !" in capsys.readouterr().out


def test_compare_exit_codes(history: Path, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 1 when B regressed from A, 0 the other way round and within tolerance."""
    h = ["--history", str(history)]
    assert main([*h, "compare", "epoch1", "epoch2"]) == 1
    out = capsys.readouterr().out
    assert ("REGRESSED: group_metrics (accuracy): headline (gap (DA)) baseline 0.1 → now 0.3"
            in out)
    assert "← worse" in out
    assert main([*h, "compare", "epoch2", "epoch1"]) == 0
    assert main([*h, "compare", "1", "2", "--fail", "gap:0.25"]) == 0
    assert "no regression: 2 comparisons within tolerance" in capsys.readouterr().out
    base = save_baseline(tmp_path / "base.json", [record("t.py::a", 0.7)])
    assert main([*h, "compare", str(base), "epoch2", "--fail", "worst:0.1"]) == 1
    assert "worst (group b) baseline 0.7 → now 0.5" in capsys.readouterr().out


def test_compare_lists_new_tests(history: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    base = save_baseline(tmp_path / "base.json", [record("t.py::a", 0.7)])
    assert main(["--history", str(history), "compare", str(base), "epoch1"]) == 0
    assert "new test (not in the baseline): t.py::b" in capsys.readouterr().out


def test_usage_errors(history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown runs and missing stores exit 2 with the fix; bad options are argparse errors."""
    assert main(["--history", str(history), "compare", "epoch1", "nope"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
    assert main(["--history", str(tmp_path / "none.sqlite"), "history"]) == 2
    assert "run `pytest --fairness` first" in capsys.readouterr().err
    assert main(["--history", str(history), "history", "--last", "0"]) == 2
    assert main(["--history", str(tmp_path / "none.sqlite"), "report", "1", "--html", "x"]) == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["--history", str(history), "compare", "1", "2", "--fail", "gap"])
    assert exit_info.value.code == 2
    assert "has no tolerance" in capsys.readouterr().err


def test_empty_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.sqlite"
    HistoryStore(path).close()
    assert main(["--history", str(path), "history"]) == 0
    assert "no fairness results" in capsys.readouterr().out


def test_report_of_a_run(history: Path, tmp_path: Path) -> None:
    """report RUN --html DIR rebuilds report.json and report.html from the store."""
    out = tmp_path / "out"
    assert main(["--history", str(history), "report", "epoch2", "--html", str(out)]) == 0
    document = json.loads((out / "report.json").read_text())
    assert [t["nodeid"] for t in document["tests"]] == ["t.py::a", "t.py::b"]
    assert document["run"]["checkpoint"] == "epoch2" and document["run"]["history_run_id"] == 2
    page = (out / "report.html").read_text()
    assert "t.py::a" in page and "Trends across checkpoints" in page


def test_console_script_is_installed() -> None:
    """The entry point resolves to main."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "pytest-fairness"]
    assert script.load() is main
