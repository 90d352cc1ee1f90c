"""Vertex components between floats and the stored formats, rounded exactly as the reference compiler rounds.

Integer formats are normalised: unsigned ones store round(v * max) (ubyte 0.5 -> 128), signed ones the old
OpenGL convention v = (2c + 1) / (2^bits - 1), rounded to nearest (byte 1.0 -> 127, -1.0 -> -128, 0.0 -> 0).
`half` keeps the compiler's conversion, which truncates the mantissa instead of rounding it. Blend indices are
the only values stored as they are (not normalised).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .layout import FORMATS

Float64Array = npt.NDArray[np.float64]

_UNSIGNED_SCALE = {"ubyte": 255.0, "ushort": 65535.0, "uint": 4294967295.0}
_SIGNED_SCALE = {"byte": (255.0, -128.0, 127.0), "short": (65535.0, -32768.0, 32767.0),
                 "int": (4294967295.0, -2147483648.0, 2147483647.0)}  # fmt: skip


def stored_dtype(component: str) -> np.dtype[np.generic]:
    return next(dtype for name, dtype in FORMATS if name == component)


def encode(values: npt.ArrayLike, component: str, normalized: bool = True) -> npt.NDArray[np.generic]:
    """(V, size) floats in `component` format; out-of-range values are clamped as the compiler clamps them."""
    source = np.asarray(values, np.float64)
    dtype = stored_dtype(component)
    if component == "half":
        return _half_from_double(source)
    if component in ("float", "double"):
        return source.astype(dtype)
    if not normalized:  # blend indices: the integer itself, as C converts it
        return np.trunc(source).astype(dtype)
    if component in _UNSIGNED_SCALE:
        scale = _UNSIGNED_SCALE[component]
        with np.errstate(invalid="ignore"):
            return np.floor(np.clip(0.5 + source * scale, 0.0, scale)).astype(dtype)
    scale, low, high = _SIGNED_SCALE[component]
    halved = source * scale * 0.5
    rounded = np.where(halved < 0.0, np.ceil(halved - 1.0), np.floor(halved))
    return np.clip(rounded, low, high).astype(dtype)


def decode(stored: npt.NDArray[np.generic], component: str, normalized: bool = True) -> Float64Array:
    """The floats that `encode` maps back onto `stored` (for integers: the centre of each value's interval)."""
    with np.errstate(invalid="ignore"):  # (a signalling NaN a file holds: read as it is, then as the reader says)
        values = stored.astype(np.float64)
    if not normalized or component in ("half", "float", "double"):
        return values
    if component in _UNSIGNED_SCALE:
        result: Float64Array = values / _UNSIGNED_SCALE[component]
        return result
    scale = _SIGNED_SCALE[component][0]
    signed: Float64Array = (2.0 * values + 1.0) / scale
    return signed


def _half_from_double(values: Float64Array) -> npt.NDArray[np.float16]:
    """IEEE half bits as the compiler makes them: mantissa truncated, overflow (and NaN) to infinity."""
    bits = np.ascontiguousarray(values, np.float64).view(np.uint64)
    sign = ((bits >> np.uint64(63)) & np.uint64(1)).astype(np.uint16)
    mantissa = ((bits >> np.uint64(42)) & np.uint64(0x3FF)).astype(np.int64)
    exponent = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64) - 1023 + 15
    small = exponent <= 0
    shift = np.minimum(1 - exponent, 11)
    mantissa = np.where(small, (mantissa | 0x400) >> np.where(small, shift, 0), mantissa)
    large = exponent >= 0x1F
    mantissa = np.where(large, 0, mantissa)
    exponent = np.clip(exponent, 0, 0x1F)
    half_bits = (sign << np.uint16(15)) | (exponent.astype(np.uint16) << np.uint16(10)) | mantissa.astype(np.uint16)
    return half_bits.view(np.float16)
