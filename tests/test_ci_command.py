"""The CI script runs the README's test command, and that command runs the suite."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command() -> None:
    script = ROOT / ".ci" / "run"
    extracted = subprocess.run(
        ["awk", "/^## Run the tests/{f=1} f && /^python3 -m venv/{print; exit}",
         str(ROOT / "README.md")],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert extracted.startswith("python3 -m venv .venv && ")
    assert "torch==2.14.1 torchvision==0.29.1" in extracted
    assert ".[test,examples]" in extracted
    assert extracted.endswith(".venv/bin/python -m pytest -n 2")
    assert "awk '/^## Run the tests/" in script.read_text()
