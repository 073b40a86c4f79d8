"""``pytest-fairness extract``, its Parquet shards and the gate that reads them.

One process (in this process, through ``cli.main``) for the format, the reader's checks and
resuming; ``torchrun --nproc-per-node 2`` on CPU (gloo) for the split, a rank killed part-way,
and a pytest run gated on the shards giving the results of a run with the model.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Import the heavy modules once, before pytester (see test_integration_fair_sa.py).
pads = pytest.importorskip("pyarrow.dataset")
import numpy as np  # noqa: E402
import torch  # noqa: E402

from pytest_fairness.cli import main  # noqa: E402
from pytest_fairness.data import load_manifest, load_utkface  # noqa: E402
from pytest_fairness.errors import MissingFeaturesError  # noqa: E402
from pytest_fairness.features import (  # noqa: E402
    DefaultTransform,
    extract_features,
    load_precomputed,
)
from pytest_fairness.features.job import load_model  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DATA = FIXTURES / "manifest"
SIZE = 32
PERTURBATIONS = (("gaussian_blur", 0.5), ("speckle_noise", 0.5))

#: The model factory, importable by torchrun's processes. With KILL_RANK set, that rank
#: SIGKILLs itself when its third extraction starts, once rank 0 has written its third shard
#: (so what survives is known: every shard but that rank's last one).
MODEL = '''
import os
import signal
import time
from pathlib import Path

import torch


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2)
        self.head = torch.nn.Linear(16, 6)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        rank = os.environ.get("RANK", "0")
        if os.environ.get("KILL_RANK") == rank and self.calls == 3:
            receipt = Path(os.environ["KILL_AFTER"])
            deadline = time.monotonic() + 60
            while not receipt.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGKILL)
        features = torch.nn.functional.adaptive_avg_pool2d(self.conv(x).relu(), 2)
        return features.flatten(1), self.head(features.flatten(1))


def build(checkpoint=None):
    torch.set_num_threads(1)
    model = Tiny()
    if checkpoint is not None:
        model.load_state_dict(torch.load(checkpoint))
    return model


def no_checkpoint():
    return Tiny()
'''


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``scale_model.py`` (the factory), importable by subprocesses."""
    folder = tmp_path_factory.mktemp("model")
    (folder / "scale_model.py").write_text(MODEL)
    return folder


@pytest.fixture(autouse=True)
def _importable(model_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(model_path))
    torch.set_num_threads(1)


def extract_args(out: Path, *extra: str) -> list[str]:
    """Arguments of ``pytest-fairness extract`` over the fixture manifest (16 images)."""
    words = ["extract", "--model", "scale_model:build", "--data", f"manifest={DATA}",
             "--out", str(out), "--image-size", str(SIZE), "--batch-size", "64"]
    for name, level in PERTURBATIONS:
        words += ["--perturbation", f"{name}:{level}"]
    return words + list(extra)


@pytest.fixture(scope="module")
def extracted(model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Features of the fixture manifest, clean and two perturbations, from one process."""
    sys.path.insert(0, str(model_path))
    try:
        out = tmp_path_factory.mktemp("features") / "features"
        assert main(extract_args(out)) == 0
    finally:
        sys.path.remove(str(model_path))
    return out


def copy(features: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(features, target)
    return target


def in_process(perturbation: tuple[str, float] | None) -> np.ndarray:
    """The embeddings ``fairness_features`` computes in this process, with the model."""
    model = load_model("scale_model:build")
    return extract_features(model, load_manifest(DATA), transform=DefaultTransform(SIZE),
                            perturbation=perturbation, progress=False).embeddings


# -- one process ------------------------------------------------------------------------------


@pytest.mark.parametrize("perturbation", [None, *PERTURBATIONS])
def test_shards_equal_in_process_features(extracted: Path,
                                          perturbation: tuple[str, float] | None) -> None:
    """Each extraction read back equals the in-process features of the same images."""
    features = load_precomputed(extracted, load_manifest(DATA), perturbation=perturbation)
    assert set(features.outputs) == {"embeddings", "logits"}
    assert np.abs(features.embeddings - in_process(perturbation)).max() <= 1e-6


def test_manifest_lists_every_shard(extracted: Path) -> None:
    """The manifest names the model, dataset, outputs and every shard with its sha256."""
    manifest = json.loads((extracted / "_manifest.json").read_text())
    assert manifest["dataset"]["fingerprint"] == load_manifest(DATA).fingerprint
    assert manifest["outputs"] == {"embeddings": {"dtype": "float32", "width": 16},
                                   "logits": {"dtype": "float32", "width": 6}}
    assert manifest["model"]["fingerprint"].startswith("state:")
    assert [e["directory"] for e in manifest["extractions"]] == [
        "clean", "gaussian_blur-0.5", "speckle_noise-0.5"]
    assert all(len(e["shards"]) == 1 and e["shards"][0]["rows"] == 16
               for e in manifest["extractions"])
    assert not (extracted / "_extract-command.txt").exists()


def test_rerun_keeps_every_shard(extracted: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The same command again extracts nothing: every checksum matches."""
    out = copy(extracted, tmp_path)
    assert main(extract_args(out)) == 0
    assert "extracted 0 shard(s), kept 3" in capsys.readouterr().out


def test_perturbation_not_extracted_names_the_command(extracted: Path) -> None:
    """Asking for another perturbation names the command that adds it."""
    with pytest.raises(MissingFeaturesError, match=r"not jpeg 0\.5.*--perturbation jpeg:0\.5"):
        load_precomputed(extracted, load_manifest(DATA), perturbation=("jpeg", 0.5))


def test_flipped_byte_is_caught(extracted: Path, tmp_path: Path) -> None:
    """One flipped byte in a shard fails its sha256."""
    out = copy(extracted, tmp_path)
    shard = out / "clean" / "part-00000-of-00001.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))
    with pytest.raises(MissingFeaturesError, match=r"part-00000-of-00001.*does not match its "
                                                   r"sha256.*pytest-fairness extract"):
        load_precomputed(out, load_manifest(DATA))


def test_shard_of_another_extraction_is_refused(extracted: Path, tmp_path: Path) -> None:
    """A shard copied over another one (same format, other content) is refused."""
    out = copy(extracted, tmp_path)
    shutil.copy(out / "gaussian_blur-0.5" / "part-00000-of-00001.parquet",
                out / "clean" / "part-00000-of-00001.parquet")
    with pytest.raises(MissingFeaturesError, match="does not match its sha256"):
        load_precomputed(out, load_manifest(DATA))


def test_features_of_another_dataset_are_refused(extracted: Path) -> None:
    """Reading the manifest's features for another dataset names both."""
    other = load_utkface(FIXTURES / "utkface")
    with pytest.raises(MissingFeaturesError, match=r"are of dataset 'manifest'.*--data utkface"):
        load_precomputed(extracted, other)


def test_missing_shard_and_missing_manifest(extracted: Path, tmp_path: Path) -> None:
    """A shard gone, or no manifest, is refused with the command to run."""
    out = copy(extracted, tmp_path)
    (out / "speckle_noise-0.5" / "part-00000-of-00001.parquet").unlink()
    with pytest.raises(MissingFeaturesError, match=r"is missing.*pytest-fairness extract"):
        load_precomputed(out, load_manifest(DATA), perturbation=("speckle_noise", 0.5))
    (out / "_manifest.json").unlink()
    with pytest.raises(MissingFeaturesError, match="no _manifest.json.*pytest-fairness extract"):
        load_precomputed(out, load_manifest(DATA))


def test_transform_mismatch_is_refused(extracted: Path) -> None:
    """Features extracted at 32 px are not served to a test that asks for 224 px."""
    with pytest.raises(MissingFeaturesError, match=r"DefaultTransform\(size=32\).*size=224"):
        load_precomputed(extracted, load_manifest(DATA), transform=DefaultTransform(224))


def test_cache_holds_one_memory_mapped_copy(extracted: Path, tmp_path: Path) -> None:
    """With a cache, the decoded matrices are written once and memory-mapped after that."""
    first = load_precomputed(extracted, load_manifest(DATA), cache_dir=tmp_path)
    sidecars = list((tmp_path / "shards").rglob("*.sha256"))
    assert len(sidecars) == 1  # one entry of the one cache
    assert sorted(json.loads(sidecars[0].read_text())["arrays"]) == ["embeddings", "logits"]
    assert len(list((tmp_path / "shards").rglob("*.npy"))) == 2
    second = load_precomputed(extracted, load_manifest(DATA), cache_dir=tmp_path)
    assert isinstance(second.embeddings.base, np.memmap)
    assert np.array_equal(first.embeddings, second.embeddings)


def test_factory_without_checkpoint_argument(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """--checkpoint with a factory that cannot take it is a usage error naming the fix."""
    args = extract_args(tmp_path / "f", "--checkpoint", "x.pt")
    args[args.index("scale_model:build")] = "scale_model:no_checkpoint"
    assert main(args) == 2
    assert "takes no `checkpoint` argument" in capsys.readouterr().err


# -- torchrun ---------------------------------------------------------------------------------


def torchrun(model_path: Path, out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``torchrun --standalone --nproc-per-node 2 -m pytest_fairness.cli extract ...``."""
    torchrun = Path(sys.executable).with_name("torchrun")
    if not torchrun.exists():
        pytest.skip("torchrun is not installed next to this Python")
    root = Path(__file__).resolve().parents[2]
    environment = {**os.environ, "OMP_NUM_THREADS": "1", **env,
                   "PYTHONPATH": os.pathsep.join([str(model_path), str(root)])}
    return subprocess.run(
        [str(torchrun), "--standalone", "--nproc-per-node", "2", "-m", "pytest_fairness.cli",
         *extract_args(out)], capture_output=True, text=True, env=environment, timeout=180,
        check=False)


SUITE = '''
import json
import os

import pytest

from pytest_fairness import indicators
from pytest_fairness.features import DefaultTransform


def test_sweep(fairness_features, fairness_manifest):
    def features(dataset, perturbation=None):
        return fairness_features(dataset, perturbation=perturbation,
                                 transform=DefaultTransform(32))

    result = indicators.fair_sa(
        features, fairness_manifest, attribute=fairness_manifest.frame["gender"].to_numpy(),
        perturbations=["gaussian_blur", "speckle_noise"], levels=[0.5], threshold=0.99,
        min_group_size=4)
    with open(os.environ["RESULT_FILE"], "w") as out:
        json.dump(result.to_dict(), out, sort_keys=True)
'''

CONFTEST = '''
import os

import pytest


@pytest.fixture(scope="session")
def fairness_model():
    if os.environ.get("NO_MODEL"):
        raise RuntimeError("the model was requested")
    import scale_model
    return scale_model.build()
'''


@pytest.mark.slow
def test_torchrun_two_ranks_match_one_process_and_gate(model_path: Path, tmp_path: Path,
                                                       pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Two ranks: two shards per extraction, each id once, features as in one process; a
    pytest run on the shards (no model, with -n 2) gives the results of a run with it."""
    out = tmp_path / "features"
    done = torchrun(model_path, out)
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((out / "_manifest.json").read_text())
    for extraction in manifest["extractions"]:
        assert [s["rows"] for s in extraction["shards"]] == [8, 8]
        assert len(list((out / extraction["directory"]).glob("*.parquet"))) == 2
    ids = pads.dataset(str(out / "clean"), format="parquet").to_table().column("image_id")
    assert sorted(ids.to_pylist()) == sorted(load_manifest(DATA).image_ids)
    for perturbation in (None, *PERTURBATIONS):
        features = load_precomputed(out, load_manifest(DATA), perturbation=perturbation)
        assert np.abs(features.embeddings - in_process(perturbation)).max() <= 1e-6

    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_gate=SUITE)
    root = Path(__file__).resolve().parents[2]  # this checkout's plugin, not an installed one
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(model_path), str(root)]))
    common = ["--fairness", "-p", "no:cacheprovider", f"--fairness-data=manifest={DATA}"]
    monkeypatch.setenv("RESULT_FILE", str(tmp_path / "with_model.json"))
    pytester.runpytest_subprocess(*common).assert_outcomes(passed=1)
    monkeypatch.setenv("RESULT_FILE", str(tmp_path / "from_shards.json"))
    monkeypatch.setenv("NO_MODEL", "1")
    pytester.runpytest_subprocess(*common, f"--fairness-features={out}", "-n", "2"
                                  ).assert_outcomes(passed=1)
    with_model = json.loads((tmp_path / "with_model.json").read_text())
    from_shards = json.loads((tmp_path / "from_shards.json").read_text())
    assert from_shards == with_model


@pytest.mark.slow
def test_killed_rank_leaves_no_manifest_and_rerun_extracts_only_its_shard(
        model_path: Path, tmp_path: Path) -> None:
    """Rank 1 SIGKILLed at its last extraction: no manifest, the reader refuses with the
    command; running it again extracts that one shard and keeps the five others."""
    out = tmp_path / "features"
    last = f"{PERTURBATIONS[-1][0]}-{PERTURBATIONS[-1][1]:g}"
    killed = torchrun(model_path, out, KILL_RANK="1",
                      KILL_AFTER=str(out / last / "_part-00000-of-00002.json"))
    assert killed.returncode != 0
    assert not (out / "_manifest.json").exists()
    with pytest.raises(MissingFeaturesError, match="has not finished.*Run `pytest-fairness "
                                                   "extract --model scale_model:build"):
        load_precomputed(out, load_manifest(DATA))
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}
    assert len(before) == 5
    again = torchrun(model_path, out)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "[rank 1/2] extracted 1 shard(s), kept 2" in again.stdout
    assert "[rank 0/2] extracted 0 shard(s), kept 3" in again.stdout
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    features = load_precomputed(out, load_manifest(DATA), perturbation=PERTURBATIONS[-1])
    assert np.abs(features.embeddings - in_process(PERTURBATIONS[-1])).max() <= 1e-6


# -- what the job may touch -------------------------------------------------------------------


def test_job_touches_only_its_own_files(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A user's files in --out are kept; a subfolder linked elsewhere is refused, not followed."""
    out, outside = tmp_path / "features", tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the job's\n")
    users = {"clean/part-list.txt": b"mine\n", "notes.md": b"# notes\n",
             "clean/part-00001-of-00002.parquet": b"a user's file with a shard's name"}
    for name, data in users.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    assert main(extract_args(out)) == 0
    assert all((out / name).read_bytes() == data for name, data in users.items())
    (out / "gaussian_blur-0.5" / "part-00000-of-00001.parquet").unlink()
    shutil.rmtree(out / "gaussian_blur-0.5")
    (out / "gaussian_blur-0.5").symlink_to(outside, target_is_directory=True)
    capsys.readouterr()
    assert main(extract_args(out)) == 2
    assert "gaussian_blur-0.5 is a link to" in capsys.readouterr().err
    assert [p.name for p in outside.iterdir()] == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "not the job's\n"
    assert all((out / name).read_bytes() == data for name, data in users.items())


@pytest.mark.parametrize("name", ["_extract.lock", "_extract-command.txt"])
def test_a_users_file_at_a_name_the_job_uses_is_kept(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The lock and the command file are the job's only when they hold what it writes."""
    out = tmp_path / "features"
    out.mkdir()
    (out / name).write_text("a user's notes\n")
    assert main(extract_args(out)) == 2
    assert f"{name} exists and was not written by pytest-fairness extract" in (
        capsys.readouterr().err)
    assert (out / name).read_text() == "a user's notes\n"


def test_two_concurrent_jobs_end_with_one_result(model_path: Path, tmp_path: Path) -> None:
    """Two jobs into one folder at once: one waits out or is refused; the result is whole."""
    out = tmp_path / "features"
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(model_path), str(root)])}
    code = ("import sys; from pytest_fairness.cli import main; "
            f"sys.exit(main({extract_args(out)!r}))")
    jobs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    done = [(job.wait(timeout=180), job.communicate()) for job in jobs]
    assert sorted(rc for rc, _ in done)[0] == 0, done
    for rc, (_, err) in done:
        assert rc == 0 or (rc == 2 and "another pytest-fairness extract" in err), err
    for perturbation in (None, *PERTURBATIONS):
        features = load_precomputed(out, load_manifest(DATA), perturbation=perturbation)
        assert np.abs(features.embeddings - in_process(perturbation)).max() <= 1e-6
    assert sorted(p.name for p in out.rglob("*.parquet")) == ["part-00000-of-00001.parquet"] * 3
