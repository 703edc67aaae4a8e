"""Checks shared by the statistics: bad input raises ValueError with a message that names
the argument and what was wrong, so the reports API can show it as it is."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray


def check_confidence(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) \
            or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a number strictly between 0 and 1, "
                         f"got {confidence!r}")
    return float(confidence)


def check_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 100:
        raise ValueError(f"n_resamples must be an integer of at least 100, got {n_resamples!r}")
    return n_resamples


def check_count(value: Any, name: str) -> int:
    """A non-negative whole number (an int, or a float with no fraction)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer) \
            or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value!r}")
    return int(value)


def finite(value: Any, name: str) -> float:
    """One finite number; bools count as 0/1 (pass/fail)."""
    if not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def finite_array(values: Iterable[Any], name: str) -> NDArray[np.float64]:
    """A 1-D float array of finite numbers, or a ValueError naming the first bad one."""
    items = list(values)
    try:
        array = np.asarray(items, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim != 1 or not np.isfinite(array).all() \
            or any(isinstance(v, str) for v in items):
        for index, value in enumerate(items):
            finite(value, f"{name}[{index}]")
        raise ValueError(f"{name} must be a flat sequence of numbers")
    return array
