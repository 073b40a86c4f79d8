"""report.html in headless Chromium (Debian's ``chromium``): it renders, with no console errors.

Also the demo's Fair SA sweep: ``examples/test_fair_sa.py`` (dlib's face embedder on real
faces) run with ``--fairness-report``; its report holds an α(δ) curve over δ = 0 … 1 (six
points) per perturbation and lighting group, and its "Fair SA curves" figure, rendered
alone, draws one panel per perturbation (the nine families) and is not blank.

In CI this needs ``apt-get install -y chromium``; without it the test is skipped.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Imported before any pytester run: one restores sys.modules afterwards, and numpy (which
# matplotlib.image loads) cannot be imported twice in one process.
numpy = pytest.importorskip("numpy")

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


ROOT = Path(__file__).resolve().parents[2]
#: The nine families of Fair SA; exposure and saturation run in both directions.
FAMILIES = {
    "gaussian blur": ("gaussian_blur",), "gamma contrast": ("gamma_contrast",),
    "rotation": ("rotation",), "speckle noise": ("speckle_noise",),
    "exposure": ("exposure_low", "exposure_high"),
    "saturation": ("saturation_low", "saturation_high"),
    "motion blur": ("motion_blur",), "jpeg": ("jpeg",), "vignette": ("vignette",),
}


def test_demo_report_shows_the_nine_fair_sa_curves(tmp_path: Path) -> None:
    pytest.importorskip("dlib")
    image = pytest.importorskip("matplotlib.image")
    out = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--fairness", "examples/test_fair_sa.py",
         "--fairness-report", str(out), "--fairness-no-history", "--fairness-cache-dir",
         str(tmp_path / "cache"), "-p", "no:cacheprovider", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    (test,) = json.loads((out / "report.json").read_text())["tests"]
    (result,) = test["results"]
    assert result["name"] == "fair_sa"
    perturbations = [p for family in FAMILIES.values() for p in family]
    for perturbation in perturbations:
        for group in ("brighter", "darker"):
            curve = result["curves"][f"fair_sa/{group}/{perturbation}"]
            assert curve["x"] == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert set(result["matrices"]["auc"]["columns"]) == set(perturbations)

    page = (out / "report.html").read_text(encoding="utf-8")
    (encoded,) = re.findall(r'alt="Fair SA curves" src="data:image/svg\+xml;base64,([^"]+)"',
                            page)
    svg = base64.b64decode(encoded)
    panels = re.findall(rb'<g id="axes_\d+">', svg)
    assert len(panels) == len(perturbations), len(panels)  # one panel per perturbation

    alone = tmp_path / "fair_sa_curves.html"
    alone.write_text(f'<html><body style="margin:0;background:white">'
                     f'<img style="width:1100px" src="data:image/svg+xml;base64,{encoded}">'
                     f"</body></html>")
    shot, console = screenshot(alone, tmp_path)
    assert console == []
    pixels = image.imread(shot)[..., :3]
    colourful = (pixels.max(axis=-1) - pixels.min(axis=-1)) > 0.3  # the coloured curves
    assert float(pixels.std()) > 0.02 and int(colourful.sum()) > 2_000
