"""A features folder (``pytest-fairness extract``'s layout) damaged in every realistic way.

Each case copies one valid folder of two extractions (clean, gaussian_blur 0.5), two shards
each, damages it (the manifest truncated, keys missing or of the wrong kind, sizes out of
range, shard paths with ``..`` or absolute, shards and folders linked outside, shards
truncated, of another dtype, of another extraction, with NaN or nulls) and reads it. Two
outcomes are allowed:

* ``clear``: a :class:`~pytest_fairness.errors.FairnessError` whose message names what and
  where (the case's fragment: a key path, a shard, a value);
* ``recovered``: the features read back equal to the ones written (a harmless change);

and four are failures: ``unclear`` (a FairnessError that does not name the fragment),
``traceback`` (any other exception), ``silent wrong`` (features read that are not the ones
written, or read through a link leaving the folder) and ``data lost`` (a file inside or
outside the folder changed by the reader).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from pytest_fairness.data import FairnessDataset  # noqa: E402
from pytest_fairness.errors import FairnessError  # noqa: E402
from pytest_fairness.features import load_precomputed, read_manifest  # noqa: E402
from tests.fuzz import harness  # noqa: E402

IDS = [f"img{k}" for k in range(6)]
DATASET = FairnessDataset(pd.DataFrame({"image_id": IDS, "path": IDS}), name="tiny")
VALUES = np.arange(12, dtype=np.float32).reshape(6, 2) / 7
BLUR = {"name": "gaussian_blur", "level": 0.5, "seed": 0}
OUTCOMES = ("clear", "recovered", "unclear", "traceback", "silent wrong", "data lost")
Manifest = dict[str, Any]


def _table(ids: list[str], values: Any, column: Any = None, *, meta: Any = None,
           ids_type: Any = None) -> Any:
    embeddings = column if column is not None else pa.FixedSizeListArray.from_arrays(
        pa.array(np.asarray(values).reshape(-1)), 2)
    table = pa.table({"image_id": pa.array(ids, ids_type or pa.string()),
                      "embeddings": embeddings})
    return table if meta is None else table.replace_schema_metadata(
        {"pytest_fairness": meta if isinstance(meta, str) else json.dumps(meta)})


def _write(path: Path, table: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="none")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _meta(perturbation: Any) -> dict[str, Any]:
    return {"key": "k", "perturbation": perturbation, "dataset": DATASET.fingerprint}


def build(folder: Path) -> Manifest:
    """A valid folder, as the job writes it; returns its manifest."""
    extractions = []
    for perturbation, directory, scale in ((None, "clean", 1), (BLUR, "gaussian_blur-0.5", 2)):
        shards = []
        for part, rows in enumerate((slice(0, 3), slice(3, 6))):
            file = f"{directory}/part-{part:05d}-of-00002.parquet"
            digest = _write(folder / file, _table(IDS[rows], VALUES[rows] * scale,
                                                  meta=_meta(perturbation)))
            shards.append({"file": file, "rows": 3, "sha256": digest})
        extractions.append({"perturbation": perturbation and dict(perturbation),
                            "directory": directory, "shards": shards})
    manifest = {
        "format": "pytest-fairness-features", "version": 1, "command": "extract-again",
        "model": {"factory": "m:f", "fingerprint": "abc", "checkpoint": None,
                  "checkpoint_fingerprint": None},
        "dataset": {"name": DATASET.name, "fingerprint": DATASET.fingerprint, "rows": 6},
        "transform": "DefaultTransform(size=224)", "normalize": "imagenet",
        "outputs": {"embeddings": {"dtype": "float32", "width": 2}}, "id_column": "image_id",
        "extractions": extractions}
    save(folder, manifest)
    return manifest


def save(folder: Path, manifest: Any) -> None:
    (folder / "_manifest.json").write_text(json.dumps(manifest))


def shard0(folder: Path, m: Manifest) -> Path:
    return folder / m["extractions"][0]["shards"][0]["file"]


def replace_shard(folder: Path, m: Manifest, table: Any = None, raw: bytes | None = None) -> None:
    """Shard 0 of the clean extraction rewritten, its sha256 in the manifest updated."""
    path = shard0(folder, m)
    if raw is None:
        _write(path, table)
    else:
        path.write_bytes(raw)
    m["extractions"][0]["shards"][0]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    save(folder, m)


def edit(change: Callable[[Manifest], object]) -> Callable[[Path, Manifest], None]:
    def damage(folder: Path, m: Manifest) -> None:
        change(m)
        save(folder, m)
    return damage


def raw(text: str | bytes) -> Callable[[Path, Manifest], None]:
    def damage(folder: Path, m: Manifest) -> None:
        data = text.encode() if isinstance(text, str) else text
        (folder / "_manifest.json").write_bytes(data)
    return damage


def _set(path: str, value: Any) -> Callable[[Manifest], None]:
    """Set the key at ``a.b[0].c`` (``del`` for a missing key when value is ...)."""
    def change(m: Manifest) -> None:
        keys: list[Any] = [int(k) if k.isdigit() else k
                           for k in path.replace("[", ".").replace("]", "").split(".")]
        target: Any = m
        for key in keys[:-1]:
            target = target[key]
        if value is ...:
            del target[keys[-1]]
        else:
            target[keys[-1]] = value
    return change


def _link_shard(folder: Path, m: Manifest) -> None:
    path = shard0(folder, m)
    outside = folder.parent / "outside" / "part.parquet"
    shutil.copy(path, outside)
    path.unlink()
    path.symlink_to(outside)


def _link_dir(folder: Path, m: Manifest) -> None:
    target = folder.parent / "outside" / "clean"
    shutil.move(str(folder / "clean"), target)
    (folder / "clean").symlink_to(target, target_is_directory=True)


def _link_manifest(folder: Path, m: Manifest) -> None:
    outside = folder.parent / "outside" / "_manifest.json"
    shutil.move(str(folder / "_manifest.json"), outside)
    (folder / "_manifest.json").symlink_to(outside)


def _link_inside(folder: Path, m: Manifest) -> None:
    path = shard0(folder, m)
    kept = folder / "clean" / "_kept.parquet"
    shutil.move(str(path), kept)
    path.symlink_to(kept)


def _absolute(folder: Path, m: Manifest) -> None:
    outside = folder.parent / "outside" / "part.parquet"
    shutil.copy(shard0(folder, m), outside)
    m["extractions"][0]["shards"][0]["file"] = str(outside)
    save(folder, m)


def _dotdot(folder: Path, m: Manifest) -> None:
    shutil.copy(shard0(folder, m), folder.parent / "outside" / "part.parquet")
    m["extractions"][0]["shards"][0]["file"] = "clean/../../outside/part.parquet"
    save(folder, m)


def _job_file_outside(folder: Path, m: Manifest) -> None:
    (folder / "_manifest.json").unlink()
    (folder / "_extract-command.txt").symlink_to(folder.parent / "outside" / "secret.txt")


def _shard_of(table: Callable[[], Any]) -> Callable[[Path, Manifest], None]:
    return lambda folder, m: replace_shard(folder, m, table())


def _bytes_of(make: Callable[[bytes], bytes]) -> Callable[[Path, Manifest], None]:
    return lambda folder, m: replace_shard(folder, m, raw=make(shard0(folder, m).read_bytes()))


def _without_column() -> Any:
    return pa.table({"image_id": pa.array(IDS[:3])})


def _with(values: Any) -> Callable[[], Any]:
    return lambda: _table(IDS[:3], values, meta=_meta(None))


_NAN = VALUES[:3].copy()
_NAN[1, 0] = np.nan
_INF = VALUES[:3].copy()
_INF[2, 1] = -np.inf
_NULL = pa.array([[0.0, 1.0], None, [4.0, 5.0]], pa.list_(pa.float32()))
_RAGGED = pa.array([[0.0, 1.0], [2.0], [4.0, 5.0]], pa.list_(pa.float32()))
_DEEP = "[" * 200 + "]" * 200

#: name: (damage, fragment the message must hold, or None when the read must succeed)
CASES: dict[str, tuple[Callable[[Path, Manifest], None], str | None]] = {
    "manifest truncated": (lambda f, m: (f / "_manifest.json").write_bytes(
        (f / "_manifest.json").read_bytes()[:100]), "not valid JSON"),
    "manifest empty": (raw(""), "empty"),
    "manifest not UTF-8": (raw(b"\xff\xfe\x00{"), "UTF-"),
    "manifest a list": (raw("[1, 2]"), "not a pytest-fairness features manifest"),
    "manifest NaN": (raw('{"format": "pytest-fairness-features", "version": NaN}'), "NaN"),
    "manifest nested deep": (edit(_set("command", json.loads(_DEEP))), "nests"),
    "manifest key twice": (raw('{"format": "x", "format": "y"}'), "repeats the key"),
    "format missing": (edit(_set("format", ...)), "not a pytest-fairness"),
    "version a string": (edit(_set("version", "1")), "version '1'"),
    "version 2": (edit(_set("version", 2)), "version 2"),
    "command missing": (edit(_set("command", ...)), "has no command"),
    "dataset missing": (edit(_set("dataset", ...)), "has no dataset"),
    "dataset rows a string": (edit(_set("dataset.rows", "6")), "dataset.rows is '6'"),
    "dataset rows null": (edit(_set("dataset.rows", None)), "dataset.rows is None"),
    "dataset rows negative": (edit(_set("dataset.rows", -6)), "dataset.rows is -6"),
    "model fingerprint a number": (edit(_set("model.fingerprint", 5)), "model.fingerprint"),
    "outputs empty": (edit(_set("outputs", {})), "outputs"),
    "outputs a list": (edit(_set("outputs", [1])), "outputs is [1]"),
    "width 10**9": (edit(_set("outputs.embeddings.width", 10**9)), "4000000000 bytes"),
    "width 10**12": (edit(_set("outputs.embeddings.width", 10**12)), "width is 10000"),
    "width 10**400": (edit(_set("outputs.embeddings.width", 10**400)), "width is 10000"),
    "width negative": (edit(_set("outputs.embeddings.width", -1)), "width is -1"),
    "width a float": (edit(_set("outputs.embeddings.width", 2.0)), "width is 2.0"),
    "width 3 for 2": (edit(_set("outputs.embeddings.width", 3)), "3"),
    "dtype object": (edit(_set("outputs.embeddings.dtype", "object")), "dtype is 'object'"),
    "dtype float64 for float32": (edit(_set("outputs.embeddings.dtype", "float64")),
                                  "as float32, the manifest says float64"),
    "output named like the ids": (edit(lambda m: m["outputs"].update(
        image_id={"dtype": "float32", "width": 2})), "image_id"),
    "id column a number": (edit(_set("id_column", 3)), "id_column is 3"),
    "extractions null": (edit(_set("extractions", None)), "extractions is None"),
    "extractions empty": (edit(_set("extractions", [])), "extractions is []"),
    "perturbation missing": (edit(_set("extractions[0].perturbation", ...)),
                             "extractions[0].perturbation"),
    "perturbation level a string": (edit(_set("extractions[1].perturbation.level", "0.5")),
                                    "extractions[1].perturbation.level"),
    "shard rows a string": (edit(_set("extractions[0].shards[1].rows", "3")),
                            "extractions[0].shards[1].rows is '3'"),
    "shard rows huge": (edit(_set("extractions[0].shards[1].rows", 10**30)),
                        "extractions[0].shards[1].rows"),
    "shard rows moved": (edit(lambda m: (_set("extractions[0].shards[0].rows", 2)(m),
                                         _set("extractions[0].shards[1].rows", 4)(m))),
                         "holds 3 rows; the manifest says 2"),
    "shard rows do not add up": (edit(_set("extractions[0].shards[0].rows", 2)),
                                 "extractions[0].shards[*].rows"),
    "sha256 not hex": (edit(_set("extractions[0].shards[0].sha256", "zz")),
                       "extractions[0].shards[0].sha256"),
    "shards missing": (edit(_set("extractions[0].shards", ...)), "extractions[0].shards"),
    "shard entry null": (edit(_set("extractions[0].shards[0]", None)),
                         "extractions[0].shards[0] is None"),
    "file ../ outside": (_dotdot, "extractions[0].shards[0].file"),
    "file absolute": (_absolute, "extractions[0].shards[0].file"),
    "file with NUL": (edit(_set("extractions[0].shards[0].file", "clean/a\x00b")),
                      "extractions[0].shards[0].file"),
    "file in another directory": (edit(_set("extractions[0].shards[0].file",
                                            "gaussian_blur-0.5/part-00000-of-00002.parquet")),
                                  "extractions[0].shards[0].file"),
    "directory ..": (edit(_set("extractions[0].directory", "..")),
                     "extractions[0].directory"),
    "directory twice": (edit(_set("extractions[1].directory", "clean")),
                        "extractions[1].directory"),
    "shard linked outside": (_link_shard, "outside the features folder"),
    "folder linked outside": (_link_dir, "outside the features folder"),
    "manifest linked outside": (_link_manifest, "outside the features folder"),
    "job file linked outside": (_job_file_outside, "has no _manifest.json"),
    "shard missing": (lambda f, m: shard0(f, m).unlink(), "is missing"),
    "shard a directory": (lambda f, m: (shard0(f, m).unlink(), shard0(f, m).mkdir()),
                          "is missing"),
    "shard damaged": (lambda f, m: shard0(f, m).write_bytes(shard0(f, m).read_bytes()[:-9]),
                      "does not match its sha256"),
    "shard truncated": (_bytes_of(lambda b: b[: len(b) // 2]), "part-00000-of-00002"),
    "shard empty": (_bytes_of(lambda b: b""), "part-00000-of-00002"),
    "shard not Parquet": (_bytes_of(lambda b: b"x" * len(b)), "cannot be read as Parquet"),
    "shard footer flipped": (_bytes_of(lambda b: b[:-12] + bytes(8) + b[-4:]),
                             "cannot be read as Parquet"),
    "shard without the column": (_shard_of(_without_column), "'embeddings'"),
    "shard of float64": (_shard_of(_with(VALUES[:3].astype(np.float64))), "as float64"),
    "shard of another extraction": (_shard_of(lambda: _table(IDS[:3], VALUES[:3],
                                                             meta=_meta(BLUR))),
                                    "belongs to the extraction gaussian_blur 0.5"),
    "shard of another dataset": (_shard_of(lambda: _table(IDS[:3], VALUES[:3], meta={
        "perturbation": None, "dataset": "0" * 64})), "another dataset"),
    "shard metadata not JSON": (_shard_of(lambda: _table(IDS[:3], VALUES[:3], meta="{")),
                                "metadata"),
    "shard with NaN": (_shard_of(_with(_NAN)), "img1"),
    "shard with -inf": (_shard_of(_with(_INF)), "img2"),
    "shard with a null row": (_shard_of(lambda: _table(IDS[:3], None, _NULL, meta=_meta(None))),
                              "null"),
    "shard with a short list": (_shard_of(lambda: _table(IDS[:3], None, _RAGGED,
                                                         meta=_meta(None))), "another length"),
    "shard ids numbers": (_shard_of(lambda: pa.table({"image_id": pa.array([0, 1, 2]),
                                                      "embeddings": _table(IDS[:3], VALUES[:3])
                                                      .column(1)})), "image_id"),
    "shard ids twice": (_shard_of(lambda: _table(IDS[3:], VALUES[3:], meta=_meta(None))),
                        "twice"),
    "shard of other ids": (_shard_of(lambda: _table(["x", "y", "z"], VALUES[:3],
                                                    meta=_meta(None))), "'x'"),
    "unknown key added": (edit(lambda m: m.update(note="by hand")), None),
    "shard linked inside": (_link_inside, None),
    "shard without metadata": (_shard_of(lambda: _table(IDS[:3], VALUES[:3])), None),
    "shard of plain lists": (_shard_of(lambda: _table(IDS[:3], None, pa.array(
        VALUES[:3].tolist(), pa.list_(pa.float32())), meta=_meta(None))), None),
}


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def attempt(name: str, root: Path) -> tuple[str, str]:
    """Damage a fresh folder under ``root`` as case ``name``, read it: (outcome, detail)."""
    damage, fragment = CASES[name]
    folder = root / "features"
    (root / "outside").mkdir(parents=True)
    (root / "outside" / "secret.txt").write_text("SECRET-COMMAND")
    manifest = build(folder)
    damage(folder, manifest)
    before = _snapshot(root)
    try:
        read_manifest(folder)
        features = load_precomputed(folder, DATASET)
    except FairnessError as error:
        message = str(error)
        if _snapshot(root) != before:
            return "data lost", message
        if fragment is None or fragment not in message or "SECRET" in message:
            return "unclear", f"the message does not say {fragment!r}: {message}"
        return "clear", message
    except Exception as error:  # noqa: BLE001 - the point: no other exception escapes
        return "traceback", f"{type(error).__name__}: {error}"
    if _snapshot(root) != before:
        return "data lost", "a file changed"
    if fragment is not None or not np.array_equal(features.embeddings, VALUES):
        return "silent wrong", f"read without error (expected {fragment!r})"
    return "recovered", ""


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_damaged_features_folder(name: str, tmp_path: Path) -> None:
    """One clear error naming what and where, or the features as written; nothing else."""
    outcome, detail = attempt(name, tmp_path)
    assert outcome in ("clear", "recovered"), f"{name}: {outcome}: {detail}"


def test_the_table_of_outcomes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every case at once: the counts the issue asks for (tracebacks, silent wrong, lost: 0)."""
    counts: Counter[str] = Counter()
    for i, name in enumerate(CASES):
        counts[attempt(name, tmp_path / str(i))[0]] += 1
    with capsys.disabled():
        print("\n" + harness.table({"features folder": counts}, OUTCOMES))
    assert sum(counts.values()) >= 30
    failed = {o: counts[o] for o in OUTCOMES[2:] if counts[o]}
    assert not failed, failed


if __name__ == "__main__":  # pragma: no cover - a quick look without pytest
    import tempfile
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            print(case, "->", *attempt(case, Path(tmp)))
    os._exit(0)
