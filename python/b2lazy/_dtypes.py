"""Data types of the Array API namespace: the dtype objects (NumPy dtypes, so that
``x.dtype == b2lazy.float64`` holds for b2lazy and NumPy arrays alike), ``finfo``,
``iinfo``, ``isdtype``, ``result_type`` and ``can_cast`` with NumPy 2's rules, which are
the standard's where the standard defines them."""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np

# The dtypes b2lazy computes with, by name (the Array API's names).
DTYPE_NAMES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
DTYPES = {name: np.dtype(name) for name in DTYPE_NAMES}
# float16 is not an Array API dtype (so not in the namespace's dtypes()), but b2lazy stores
# and computes with it as NumPy does (math of bool / int8 / uint8 gives float16).
ACCEPTED = {**DTYPES, "float16": np.dtype("float16")}

int8, int16, int32, int64 = (DTYPES[n] for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (DTYPES[n] for n in ("uint8", "uint16", "uint32", "uint64"))
float32, float64 = DTYPES["float32"], DTYPES["float64"]
complex64, complex128 = DTYPES["complex64"], DTYPES["complex128"]
float16 = ACCEPTED["float16"]
# `bool` is served by the package's module __getattr__ (b2lazy.bool), so that the
# package's own code keeps Python's bool.

_KINDS = {
    "bool": ("b",),
    "signed integer": ("i",),
    "unsigned integer": ("u",),
    "integral": ("i", "u"),
    "real floating": ("f",),
    "complex floating": ("c",),
    "numeric": ("i", "u", "f", "c"),
}


def non_native_order(dtype):
    """'>' or '<' when `dtype` names a byte order other than this machine's ('>f4' on
    little-endian machines), else None."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        return None
    return d.byteorder if d.byteorder in "<>" else None


def as_dtype(dtype, what="dtype"):
    """One of b2lazy's dtypes from anything NumPy takes as a dtype (a dtype object, a type
    such as ``float``, a name); TypeError naming `what` for the others (a non-native byte
    order too: astype and asarray take those, see non_native_order)."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{what}: {dtype!r} is not a data type") from None
    if d.name not in ACCEPTED or d.byteorder == ">":
        raise TypeError(f"{what}: unsupported dtype {d} (supported: {', '.join(ACCEPTED)})")
    return ACCEPTED[d.name]


def _dtype_of(x, what):
    """The dtype of an array, or `x` itself taken as a dtype."""
    from . import Array  # the package defines Array before importing this module's users

    if isinstance(x, (Array, np.ndarray, np.generic)):
        return as_dtype(x.dtype, what)
    return as_dtype(x, what)


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a floating-point dtype (Python floats, as the standard asks)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:
    """Machine limits of an integer dtype."""

    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type, /):
    """Limits of a floating-point dtype (or of an array's dtype).

    Of a complex dtype, those of its parts (the Array API's rule: ``dtype`` is then the
    part's real dtype).

    Parameters
    ----------
    type : dtype or Array
        A floating-point or complex dtype, or an array of one.

    Returns
    -------
    finfo_object
        bits, eps, max, min, smallest_normal and dtype.

    Raises
    ------
    TypeError
        Not a floating-point dtype.

    Examples
    --------
    >>> bl.finfo(bl.float32).eps
    1.1920928955078125e-07
    >>> bl.finfo(bl.complex128).dtype
    dtype('float64')
    """
    d = _dtype_of(type, "finfo")
    if d.kind not in "fc":
        raise TypeError(f"finfo: {d} is not a floating-point dtype")
    f = np.finfo(d)
    return finfo_object(
        int(f.bits), float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), ACCEPTED[f.dtype.name]
    )


def iinfo(type, /):
    """Limits of an integer dtype (or of an array's dtype).

    Parameters
    ----------
    type : dtype or Array
        An integer dtype, or an array of one.

    Returns
    -------
    iinfo_object
        bits, max, min and dtype.

    Raises
    ------
    TypeError
        Not an integer dtype.

    Examples
    --------
    >>> bl.iinfo(bl.int8).max
    127
    """
    d = _dtype_of(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo: {d} is not an integer dtype")
    i = np.iinfo(d)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), d)


def isdtype(dtype, kind):
    """Whether `dtype` is of `kind`.

    Parameters
    ----------
    dtype : dtype or Array
        The dtype to test (or an array's).
    kind : dtype, str or tuple
        A dtype, one of the Array API's kind names ("bool", "signed integer", "unsigned
        integer", "integral", "real floating", "complex floating", "numeric"), or a tuple of
        those (any of them).

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        An unknown kind name.

    Examples
    --------
    >>> bl.isdtype(bl.float32, "real floating")
    True
    >>> bl.isdtype(bl.int8, ("bool", "unsigned integer"))
    False
    """
    d = _dtype_of(dtype, "isdtype")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r} (known: {', '.join(_KINDS)})")
            if d.kind in _KINDS[k]:
                return True
        elif isinstance(k, tuple):
            raise TypeError("isdtype: a tuple of kinds cannot contain tuples")
        elif d == _dtype_of(k, "isdtype: kind"):
            return True
    return False


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on these arrays, dtypes and Python scalars.

    By NumPy 2's promotion rules; Python scalars are weak (NEP 50).

    Parameters
    ----------
    *arrays_and_dtypes : Array, dtype or scalar
        At least one array or dtype.

    Returns
    -------
    numpy.dtype

    Raises
    ------
    ValueError
        Nothing given, or scalars only.

    Examples
    --------
    >>> bl.result_type(bl.int8, bl.uint8)
    dtype('int16')
    >>> bl.result_type(bl.float32, 1.0)
    dtype('float32')
    """
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array, dtype or scalar is required")
    args = []
    for a in arrays_and_dtypes:
        if type(a) in (builtins.bool, int, float, complex):
            args.append(a)
        else:
            args.append(_dtype_of(a, "result_type"))
    if builtins.all(type(a) in (builtins.bool, int, float, complex) for a in args):
        raise ValueError("result_type: at least one array or dtype is required (scalars alone have no dtype)")
    return as_dtype(np.result_type(*args), "result_type")


def can_cast(from_, to, /):
    """Whether `from_` can be cast to `to` without losing values (NumPy's casting='safe').

    Parameters
    ----------
    from_ : dtype or Array
        The dtype (or an array's) to cast from.
    to : dtype
        The dtype to cast to.

    Returns
    -------
    bool

    Examples
    --------
    >>> bl.can_cast(bl.int8, bl.int64)
    True
    >>> bl.can_cast(bl.float64, bl.int64)
    False
    """
    return builtins.bool(np.can_cast(_dtype_of(from_, "can_cast"), as_dtype(to, "can_cast: to"), casting="safe"))
