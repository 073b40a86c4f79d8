"""Hostile inputs to ``pytest-fairness extract``: factories, models, options and ``--out``.

Each case runs ``cli.main(["extract", ...])`` over the 16-image fixture manifest and is
classified:

* **clear error**: exit 2 with one message naming the option it is about (``--model``,
  ``--out``, ...), no traceback;
* **recovered**: exit 0, the features read back (finite, one row per image) and every
  file the user put in ``--out`` kept;

and three are failures, each counted by the test (goal 0): **traceback** (any other
exception, or an exit 2 whose message does not name the option), **silent wrong** (exit 0
where the input was bad, or features that do not read back) and **data lost** (a file
outside ``--out``, or one the user put in it, changed or gone).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("pyarrow.parquet")
import numpy as np  # noqa: E402
import torch  # noqa: E402

from pytest_fairness.cli import main  # noqa: E402
from pytest_fairness.data import load_manifest  # noqa: E402
from pytest_fairness.features import DefaultTransform, load_precomputed  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "fixtures" / "manifest"

MODELS = '''
import torch

class Tiny(torch.nn.Module):
    def __init__(self, bad=None):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2)
        self.bad = bad

    def forward(self, x):
        f = torch.nn.functional.adaptive_avg_pool2d(self.conv(x), 2).flatten(1)
        if self.bad == "raise":
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")
        if self.bad == "scalar":
            return f.sum()
        if self.bad == "vary":
            return f[:, :len(x)]
        if self.bad == "no_tensor":
            return {"label": "cat"}
        if self.bad == "nan":
            f[0, 0] = float("nan")
        if self.bad == "inf":
            f[:, 1] = float("inf")
        if self.bad == "string":
            return "features"
        if self.bad == "rows":
            return f[:1]
        if self.bad == "empty":
            return f[:, :0]
        if self.bad == "triple":
            return f, f, f
        return f, f[:, :3]

def build(checkpoint=None):
    model = Tiny()
    if checkpoint is not None:
        model.load_state_dict(torch.load(checkpoint))
    return model

def bad(kind):
    return lambda: Tiny(kind)

raise_in_forward = bad("raise")
scalar = bad("scalar")
vary = bad("vary")
no_tensor = bad("no_tensor")
nan = bad("nan")
inf = bad("inf")
string = bad("string")
rows = bad("rows")
empty = bad("empty")
triple = bad("triple")

def raises():
    raise ValueError("unknown backbone 'resnet5'")

def returns_none():
    pass

def returns_int():
    return 3

def returns_dict():
    return {"model": Tiny()}

not_a_function = 42
'''


@dataclass(frozen=True)
class Case:
    """One hostile input: what to prepare, the extra arguments, what the message names."""

    name: str
    args: Callable[[Path, Path], list[str]]  # (case folder, --out) -> arguments
    expect: str | None  # a regex the one error message matches; None: the job succeeds
    prepare: Callable[[Path, Path], None] = lambda folder, out: None


def _args(out: Path, *extra: str, model: str = "job_models:build") -> list[str]:
    return ["extract", "--model", model, "--data", f"manifest={DATA}", "--out", str(out),
            "--image-size", "32", "--batch-size", "5", *extra]


def _model(name: str, *extra: str) -> Callable[[Path, Path], list[str]]:
    return lambda folder, out: _args(out, *extra, model=name)


def _extra(*extra: str) -> Callable[[Path, Path], list[str]]:
    return lambda folder, out: _args(out, *extra)


def _write(relative: str, data: bytes = b"the user's own file\n"
           ) -> Callable[[Path, Path], None]:
    def prepare(folder: Path, out: Path) -> None:
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        (out / relative).write_bytes(data)
    return prepare


def _link(relative: str, target: str) -> Callable[[Path, Path], None]:
    def prepare(folder: Path, out: Path) -> None:
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        (out / relative).symlink_to(folder / "outside" / target)
    return prepare


def _held_lock(folder: Path, out: Path) -> None:
    from filelock import FileLock
    out.mkdir(parents=True, exist_ok=True)
    lock = FileLock(out / "_extract.lock", timeout=0)
    lock.acquire()
    _HELD.append(lock)


_HELD: list[object] = []
_SHARD = "clean/part-00000-of-00001.parquet"

CASES = [
    # the factory and its module
    Case("factory raises", _model("job_models:raises"),
         r"--model job_models:raises: the factory raised ValueError: unknown backbone.*"
         r"job_models\.py"),
    Case("factory returns None", _model("job_models:returns_none"),
         r"--model .*returned None"),
    Case("factory returns an int", _model("job_models:returns_int"), r"--model .*returned 3"),
    Case("factory returns a dict", _model("job_models:returns_dict"), r"--model .*returned"),
    Case("not a function", _model("job_models:not_a_function"), r"--model .*not a function"),
    Case("no such module", _model("no_such_module:build"), r"--model no_such_module:build"),
    Case("no such function", _model("job_models:nope"), r"--model job_models:nope"),
    Case("no colon", _model("job_models"), r"--model must be package\.module:function"),
    Case("empty model", _model(":"), r"--model must be"),
    Case("module raises on import", _model("broken_models:build"),
         r"--model broken_models:build: importing broken_models raised ZeroDivisionError"),
    Case("module in the current folder", _model("cwd_models:build"), None),
    # the checkpoint
    Case("missing checkpoint", lambda f, o: _args(o, "--checkpoint", str(f / "missing.pt")),
         r"--model job_models:build: the factory raised with --checkpoint .*missing\.pt "
         r"FileNotFoundError"),
    Case("corrupt checkpoint", lambda f, o: _args(o, "--checkpoint", str(f / "corrupt.pt")),
         r"--checkpoint .*corrupt\.pt \w+Error"),
    Case("checkpoint of another model", lambda f, o: _args(o, "--checkpoint",
                                                           str(f / "other.pt")),
         r"--checkpoint .*other\.pt RuntimeError: Error\(s\) in loading state_dict"),
    # the forward pass and what it returns
    Case("forward raises", _model("job_models:raise_in_forward"),
         r"--model job_models:raise_in_forward: the forward pass raised RuntimeError: mat1"),
    Case("0-d output", _model("job_models:scalar"), r"--model .*one number for a batch"),
    Case("width varies", _model("job_models:vary"), r"--model .*the width must not vary"),
    Case("dict with no tensor", _model("job_models:no_tensor"), r"--model .*dict with no tensor"),
    Case("NaN features", _model("job_models:nan"),
         r"--model .*NaN or infinite values for 4 of 16 images \(clean\), ids \['"),
    Case("inf features", _model("job_models:inf"), r"--model .*NaN or infinite .*16 of 16"),
    Case("a string output", _model("job_models:string"), r"--model .*returned str"),
    Case("one row per batch", _model("job_models:rows"), r"--model .*has 1 rows for a batch"),
    Case("zero-width output", _model("job_models:empty"), r"--model .*shape \(16, 0\)"),
    Case("three outputs", _model("job_models:triple"), r"--model .*returned tuple"),
    # options
    Case("image size 0", _extra("--image-size", "0"), r"--image-size: must be an int from 1"),
    Case("image size 60000", _extra("--image-size", "60000"), r"--image-size: .*4096"),
    Case("image size -3", _extra("--image-size", "-3"), r"--image-size"),
    Case("image size text", _extra("--image-size", "big"), r"--image-size: .*'big'"),
    Case("batch size 0", _extra("--batch-size", "0"), r"--batch-size"),
    Case("num workers -1", _extra("--num-workers", "-1"), r"--num-workers: must be an int >= 0"),
    Case("device cuda without a GPU", _extra("--device", "cuda"),
         None if torch.cuda.is_available() else r"--device cuda: no CUDA GPU"),
    Case("device tpu", _extra("--device", "tpu"), r"--device"),
    Case("unknown perturbation", _extra("--perturbation", "sepia:0.5"), r"--perturbation"),
    Case("perturbation level text", _extra("--perturbation", "gaussian_blur:high"),
         r"--perturbation"),
    Case("data folder missing", lambda f, o: ["extract", "--model", "job_models:build",
                                              "--data", f"manifest={f / 'nowhere'}",
                                              "--out", str(o)], r"nowhere"),
    # --out
    Case("--out is a file", lambda f, o: _args(f / "outside" / "keep.txt"),
         r"--out .*keep\.txt: cannot write there"),
    Case("--out under a file", lambda f, o: _args(f / "outside" / "keep.txt" / "features"),
         r"--out .*cannot write there"),
    Case("another job holds the lock", _extra(), r"--out .*another pytest-fairness extract",
         _held_lock),
    Case("clean/ links outside", _extra(), r"--out .*clean is a link to .*outside",
         _link("clean", "")),
    Case("the shard links outside", _extra(), r"--out .*part-00000-of-00001\.parquet is a link",
         _link(_SHARD, "keep.txt")),
    Case("a user's file at the shard's name", _extra(), r"--out .*was not written by",
         _write(_SHARD)),
    Case("a user's file at the receipt's name", _extra(), r"--out .*was not written by",
         _write("clean/_part-00000-of-00001.json", b"{}")),
    Case("a user's _manifest.json", _extra(), r"--out .*_manifest\.json .*was not written by",
         _write("_manifest.json", b'{"mine": true}')),
    Case("a folder at the shard's name", _extra(), r"--out .*was not written by",
         lambda f, o: (o / _SHARD).mkdir(parents=True)),
    Case("a user's part-list.txt", _extra(), None, _write("clean/part-list.txt")),
    Case("a user's shard of another world size", _extra(), None,
         _write("clean/part-00001-of-00002.parquet")),
    Case("a user's notes in --out", _extra(), None, _write("notes.md")),
]


def _snapshot(folder: Path, out: Path) -> dict[str, bytes | str]:
    """Every file under ``folder`` except what the job writes under ``out`` (users' files)."""
    seen: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            seen[str(path)] = f"link:{os.readlink(path)}"
        elif path.is_file() and (not path.is_relative_to(out) or not re.search(
                r"(_?part-\d{5}-of-\d{5}\.(parquet|json)|_manifest\.json|_extract[.-].*)$",
                path.name) or path.name in _USER_NAMES):
            seen[str(path)] = path.read_bytes()
    return seen


_USER_NAMES: set[str] = set()


def _folder(tmp: Path, case: Case) -> tuple[Path, Path]:
    folder = tmp / re.sub(r"\W+", "_", case.name)
    (folder / "outside").mkdir(parents=True)
    (folder / "outside" / "keep.txt").write_text("outside --out\n")
    (folder / "cwd").mkdir()
    (folder / "cwd" / "cwd_models.py").write_text("from job_models import build\n")
    (folder / "corrupt.pt").write_bytes(b"\x80\x04not a pickle")
    torch.save({"weight": torch.zeros(1)}, folder / "other.pt")
    out = folder / "features"
    case.prepare(folder, out)
    return folder, out


def attempt(case: Case, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run one case; its outcome (clear error, recovered, traceback, silent wrong, data lost)."""
    folder, out = _folder(tmp, case)
    _USER_NAMES.clear()
    _USER_NAMES.update(p.name for p in out.rglob("*") if out.exists())
    before = _snapshot(folder, out)
    monkeypatch.chdir(folder / "cwd")
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(case.args(folder, out))
            except SystemExit as exit_:  # argparse's usage errors
                code = int(exit_.code or 0)
    except Exception as error:  # noqa: BLE001 - what the test counts
        _FAILURES.append(f"{case.name}: {type(error).__name__}: {error}")
        return "traceback"
    finally:
        while _HELD:
            _HELD.pop().release()  # type: ignore[attr-defined]
    after = _snapshot(folder, out)
    if after != before:
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        _FAILURES.append(f"{case.name}: changed or gone: {changed}")
        return "data lost"
    message = stderr.getvalue()
    if case.expect is None:
        if code != 0:
            _FAILURES.append(f"{case.name}: exit {code}: {message}")
            return "traceback"
        features = load_precomputed(out, load_manifest(DATA), transform=DefaultTransform(32))
        if features.embeddings.shape != (16, 16) or not np.isfinite(features.embeddings).all():
            _FAILURES.append(f"{case.name}: features {features.embeddings.shape}")
            return "silent wrong"
        return "recovered"
    if code == 0:
        _FAILURES.append(f"{case.name}: exit 0")
        return "silent wrong"
    if code != 2 or "Traceback" in message or not re.search(case.expect, message, re.S):
        _FAILURES.append(f"{case.name}: exit {code}, message {message!r}")
        return "traceback"
    return "clear error"


_FAILURES: list[str] = []
OUTCOMES = ("clear error", "recovered", "traceback", "silent wrong", "data lost")


def test_hostile_job_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """Every hostile input is a clear error or recovered; no traceback, no wrong data, no loss."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "job_models.py").write_text(MODELS)
    (models / "broken_models.py").write_text("1 / 0\n")
    monkeypatch.setattr(sys, "path", [str(models), *sys.path])
    torch.set_num_threads(1)
    _FAILURES.clear()
    counts = Counter(attempt(case, tmp_path, monkeypatch) for case in CASES)
    with capsys.disabled():
        print(f"\nextract job: {len(CASES)} inputs, " + ", ".join(
            f"{outcome}: {counts[outcome]}" for outcome in OUTCOMES))
    assert len(CASES) >= 30
    assert not _FAILURES, "\n".join(_FAILURES)
    assert counts["clear error"] + counts["recovered"] == len(CASES)
