"""Seeds and resampling shared by the indicators.

Every stochastic computation takes ``seed: int | numpy.random.Generator | None`` and turns
it into a Generator here, so the seed that was used can be reported with the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_fairness.errors import FairnessConfigError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["as_generator"]


def as_generator(seed: Any) -> np.random.Generator:
    """Return a numpy Generator for ``seed`` (an int, a Generator, or None for fresh entropy).

    Raises
    ------
    FairnessConfigError
        When ``seed`` is of another type or a negative int.
    """
    import numpy as np

    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise FairnessConfigError(
            f"seed must be a non-negative int, a numpy.random.Generator or None; got "
            f"seed={seed!r} (type={type(seed).__name__})."
        )
    return np.random.default_rng(int(seed))
