"""The array type used in annotations throughout the package."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np

Array: TypeAlias = np.ndarray[Any, np.dtype[Any]]
