"""report.html in headless Chromium (Debian's ``chromium``): it renders, with no console errors.

In CI this needs ``apt-get install -y chromium``; without it the test is skipped.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None,
                       reason="headless Chromium is not installed (apt-get install -y chromium)"),
]

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--enable-logging=stderr", "--v=0", "--window-size=1200,2400")


def screenshot(page: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """Render ``page`` in a fresh profile; return the screenshot and the console lines."""
    assert CHROMIUM is not None
    shot = tmp_path / f"{page.stem}.png"
    profile = tmp_path / f"profile-{page.stem}"
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}",
                           f"--screenshot={shot}", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return shot, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def test_console_errors_are_detected(tmp_path: Path) -> None:
    """Control: a page with a script error does produce console lines."""
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    _, console = screenshot(bad, tmp_path)
    assert any("Uncaught ReferenceError" in line for line in console)


def test_report_renders_without_console_errors(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """A real report (figures, a hostile group name) renders to a non-blank screenshot."""
    image = pytest.importorskip("matplotlib.image")
    pytester.makepyfile("""
from pytest_fairness import fairness, indicators as ind
Y = [1, 0, 1, 1, 0, 1, 0, 0] * 5
P = [1, 0, 1, 0, 0, 0, 0, 1] * 5
G = (["a"] * 4 + ["<script>alert(1)</script>"] * 4) * 5

@fairness.threshold(max_gap=0.1)
def test_gap():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)
""")
    pytester.runpytest_subprocess("--fairness", "--fairness-report", "out")
    page = pytester.path / "out" / "report.html"
    shot, console = screenshot(page, tmp_path)
    assert console == []
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 10_000
    pixels = image.imread(shot)
    assert pixels.shape[0] >= 1000 and float(pixels[..., :3].std()) > 0.02  # not blank
