"""Features: model outputs for a dataset's images, computed once and kept.

Importing this package is cheap: torch, numpy and pyarrow load when a function needs them.
"""

from __future__ import annotations

from pytest_fairness.features.cache import file_sha256
from pytest_fairness.features.extraction import (
    DefaultTransform,
    Features,
    extract_features,
    extract_rows,
)
from pytest_fairness.features.fingerprint import (
    cache_key,
    callable_fingerprint,
    model_fingerprint,
    normalize_spec,
)
from pytest_fairness.features.forward import forward_batches
from pytest_fairness.features.perturbed import perturbed_features
from pytest_fairness.features.precomputed import load_precomputed
from pytest_fairness.features.progress import ExtractionProgress, ProgressSink, progress_to
from pytest_fairness.features.shards import (
    perturbation_dir,
    perturbation_key,
    perturbation_label,
    read_manifest,
    read_shards,
    shard_name,
)

__all__ = [
    "DefaultTransform", "ExtractionProgress", "Features", "ProgressSink", "cache_key",
    "callable_fingerprint", "extract_features", "extract_rows", "file_sha256",
    "forward_batches", "load_precomputed", "model_fingerprint", "normalize_spec",
    "perturbation_dir", "perturbation_key", "perturbation_label", "perturbed_features",
    "progress_to", "read_manifest", "read_shards", "shard_name",
]
