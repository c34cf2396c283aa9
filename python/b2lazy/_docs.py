"""numpydoc docstrings of the registry's functions, built from the registry's facts.

Each function of the C++ function registry (b2lazy/_registry.py) gets its docstring here,
at import: its signature gives the Parameters (types and descriptions from PARAMS, the one
table of parameter names, which scripts/gen_stubs.py reads for the stubs' annotations too),
its dtype rule the Returns, and its family an Examples template whose expected output is
NumPy's own result for the same call (so the doctest checks b2lazy against NumPy). The
summary is the body's own docstring when it has one, else SUMMARIES' line. A new registry
row thus gets a complete docstring without a line here: elementwise functions and
reductions from their family's template, other families from EXAMPLES (a row without an
entry there gets no Examples, which tests/python/interop/test_docstrings.py reports).
A body whose docstring already has a Parameters section is left as written.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

# --- parameters: numpydoc type, stub annotation, description ---------------------------
# The annotation names the stub's aliases (_ArrayLike, _DTypeLike, _Shape, _Axes); a
# parameter whose default is None gets "| None" (and ", optional" when it has a default).
A = "_ArrayLike"
PARAMS = {
    "x": ("array_like", A, "Input array: a b2lazy Array, a NumPy or python-blosc2 array, or a Python scalar."),
    "x1": ("array_like", A, "First input array (broadcast against `x2`)."),
    "x2": ("array_like", A, "Second input array (broadcast against `x1`)."),
    "condition": ("array_like of bool", A, "Where true, take `x`; elsewhere `y`."),
    "y": ("array_like", A, "Values where `condition` is false."),
    "arrays": ("sequence of array_like", "_Sequence[_ArrayLike]", "The arrays to join."),
    "axis": ("int", "int", "The axis to work along (negative counts from the last)."),
    "keepdims": ("bool", "bool", "Keep the reduced axes as axes of length 1."),
    "dtype": ("dtype", "_DTypeLike", "The result's dtype (see Returns for the default)."),
    "device": ("str", "str", "b2lazy's one device, ``'cpu'``, or None."),
    "chunks": (
        "tuple of int",
        "_Shape",
        "The chunk shape the array reports (Array.chunks) and is cheapest to evaluate in; None: one chunk per axis.",
    ),
    "shape": ("int or tuple of int", "_Shape", "The result's shape."),
    "copy": (
        "bool",
        "bool",
        "As the Array API's: b2lazy arrays are immutable, so a copy is a new Array over the same graph.",
    ),
    "correction": (
        "float",
        "float",
        "Degrees of freedom subtracted from the number of elements (the Array "
        "API's name; NumPy's `ddof` is the same — give one of them).",
    ),
    "ddof": ("float", "float", "NumPy's name for `correction`."),
    "q": ("float or array_like of float", "float | _ArrayLike", "The quantile(s) to compute."),
    "method": ("str", "str", "Interpolation: 'linear', 'lower', 'higher', 'nearest' or 'midpoint'."),
    "indices": ("array_like of int", A, "Integer positions (NumPy semantics; negative ones count from the end)."),
    "axes": ("sequence of int", "_Sequence[int]", "The new order of the axes."),
    "source": ("int or sequence of int", "int | _Sequence[int]", "Axes to move."),
    "destination": ("int or sequence of int", "int | _Sequence[int]", "Where they go."),
    "shift": ("int or sequence of int", "int | _Sequence[int]", "Positions to shift by (per axis of `axis`)."),
    "repetitions": ("sequence of int", "int | _Sequence[int]", "Repetitions along each axis."),
    "repeats": ("int or array_like of int", "int | _ArrayLike", "Repetitions of each element."),
    "offset": ("int", "int", "The diagonal: 0 the main one, > 0 above it, < 0 below."),
    "axis1": ("int", "int", "First axis of the matrices."),
    "axis2": ("int", "int", "Second axis of the matrices."),
    "k": ("int", "int", "The diagonal: 0 the main one, > 0 above it, < 0 below."),
    "n": ("int", "int", "How many times to difference."),
    "prepend": ("array_like", A, "Values put before `x` along `axis` first."),
    "append": ("array_like", A, "Values put after `x` along `axis` first."),
    "fill_value": ("scalar", "complex", "The value of every element."),
    "start": ("int or float", "complex", "First value (with `stop` None: the end, starting from 0)."),
    "stop": ("int or float", "complex", "The end of the range."),
    "step": ("int or float", "float", "Spacing between values."),
    "num": ("int", "int", "Number of values."),
    "endpoint": ("bool", "bool", "Whether `stop` is the last value."),
    "n_rows": ("int", "int", "Number of rows."),
    "n_cols": ("int", "int", "Number of columns (default: `n_rows`)."),
    "indexing": ("{'xy', 'ij'}", "_Literal['xy', 'ij']", "Cartesian ('xy') or matrix ('ij') indexing."),
    "min": ("array_like", A, "Lower bound (None: none)."),
    "max": ("array_like", A, "Upper bound (None: none)."),
    "descending": ("bool", "bool", "Sort in descending order."),
    "stable": ("bool", "bool", "Keep equal elements in their order (b2lazy's sorts always do)."),
    "side": ("{'left', 'right'}", "_Literal['left', 'right']", "The first suitable place, or the last."),
    "sorter": ("array_like of int", A, "The positions that sort `x1` (argsort(x1)), if it is not sorted."),
    "include_initial": ("bool", "bool", "Start with the initial value (0 for sums, 1 for products)."),
    "s": ("sequence of int", "_Sequence[int]", "Lengths of the transforms along `axes`."),
    "norm": (
        "{'backward', 'ortho', 'forward'}",
        "_Literal['backward', 'ortho', 'forward']",
        "Which direction of a transform is scaled by 1/n.",
    ),
    "d": ("float", "float", "The sample spacing."),
}
# Where a family or a function gives a parameter another meaning or type.
PARAM_OVERRIDES = {
    ("reduction", "axis"): ("None, int or tuple of int", "_Axes", "The axes to reduce (None: all of them)."),
    ("holistic reduction", "axis"): ("None, int or tuple of int", "_Axes", "The axes to reduce (None: all)."),
    ("scan", "axis"): ("int", "int", "The axis to scan (None: `x` flattened in C order)."),
    ("squeeze", "axis"): ("None, int or tuple of int", "_Axes", "Length-1 axes to remove (None: all)."),
    ("flip", "axis"): ("None, int or tuple of int", "_Axes", "Axes to reverse (None: all)."),
    ("roll", "axis"): ("None, int or tuple of int", "_Axes", "Axes to shift along (None: `x` flattened)."),
    ("concat", "axis"): ("int", "int | None", "The axis to join along (None: the arrays flattened)."),
    ("sort", "axis"): ("int", "int", "The axis to sort along."),
    ("argsort", "axis"): ("int", "int", "The axis to sort along."),
    ("stack", "axis"): ("int", "int", "Position of the new axis in the result."),
    ("expand_dims", "axis"): ("int", "int", "Position of the new axis in the result."),
    ("take", "axis"): ("int", "int", "Axis to take along (None: `x` flattened)."),
    ("take_along_axis", "axis"): ("int", "int", "Axis to take along (None: `x` flattened)."),
    ("repeat", "axis"): ("int", "int", "Axis to repeat along (None: `x` flattened)."),
    ("transpose", "axes"): ("sequence of int", "_Sequence[int]", "The new order of the axes (None: reversed)."),
    ("tensordot", "axes"): (
        "int or pair of sequences of int",
        "int | tuple[_Sequence[int], _Sequence[int]]",
        "Contract the last `axes` axes of `x1` with the first of `x2`, or these axes.",
    ),
    ("astype", "dtype"): ("dtype", "_DTypeLike", "The dtype to cast to."),
    ("astype", "copy"): ("bool", "bool", "False returns `x` itself when it has that dtype."),
    ("reshape", "copy"): ("bool", "bool", "False is refused (a lazy reshape is never a view)."),
    ("moving_reduce", "window"): ("int", "int", "The window length, at least 1."),
    ("moving_reduce", "func"): ("str", "str", "sum, mean, min, max, var, std or count."),
    ("moving_reduce", "axis"): ("int", "int", "The axis the window moves along."),
    ("moving_reduce", "center"): ("bool", "bool", "Centre the window on each position."),
    ("moving_reduce", "min_periods"): ("int", "int", "Valid values a window needs (None: the window)."),
    ("moving_reduce", "skipna"): ("bool", "bool", "NaNs are missing values (False: a NaN gives NaN)."),
    ("broadcast_arrays", "arrays"): ("array_like", A, "The arrays to broadcast together."),
    ("meshgrid", "arrays"): ("array_like", A, "1-d coordinate vectors."),
    ("linspace", "stop"): ("int or float", "complex", "The last value (with `endpoint`) or the end."),
    ("arange", "stop"): ("int or float", "float", "The end of the range (excluded)."),
    ("arange", "start"): ("int or float", "float", "First value (with `stop` None: the end, starting from 0)."),
    ("arange", "shape"): ("tuple of int", "_Shape", "Reshape the values to this shape (lazily)."),
    ("linspace", "shape"): ("tuple of int", "_Shape", "Reshape the values to this shape (lazily)."),
    ("percentile", "q"): ("float or array_like of float", "float | _ArrayLike", "The percentile(s), 0 to 100."),
    ("searchsorted", "x1"): ("array_like", A, "A 1-d array sorted in ascending order (or by `sorter`)."),
    ("searchsorted", "x2"): ("array_like", A, "The values to place."),
    ("vecdot", "axis"): ("int", "int", "The axis of the vectors."),
}
# Functions that return a tuple of arrays.
MULTI_OUTPUT = {"nonzero", "broadcast_arrays", "unstack", "meshgrid"}


def param(fn, family, name):
    """(numpydoc type, annotation, description) of parameter `name` of `fn`, or None."""
    return PARAM_OVERRIDES.get((fn, name)) or PARAM_OVERRIDES.get((family, name)) or PARAMS.get(name)


# --- summaries of the functions whose bodies have none -----------------------------------
_U = {  # unary elementwise
    "negative": "Numerical negative, element by element.",
    "positive": "Numerical positive (a copy of `x`).",
    "abs": "Absolute value (the modulus for complex numbers).",
    "square": "The square of each element.",
    "sign": "The sign of each element (-1, 0 or 1; ``x / abs(x)`` for complex).",
    "reciprocal": "1/x, element by element.",
    "floor": "The largest integer not greater than each element.",
    "ceil": "The smallest integer not less than each element.",
    "trunc": "Each element rounded towards zero.",
    "round": "Each element rounded to the nearest integer (halves to even, as NumPy).",
    "bitwise_invert": "Bitwise NOT of each integer (logical NOT of bools).",
    "sqrt": "Square root.",
    "cbrt": "Cube root.",
    "exp": "e to the power of each element.",
    "exp2": "2 to the power of each element.",
    "expm1": "exp(x) - 1, accurate for small x.",
    "log": "Natural logarithm.",
    "log2": "Base-2 logarithm.",
    "log10": "Base-10 logarithm.",
    "log1p": "log(1 + x), accurate for small x.",
    "sin": "Sine (radians).",
    "cos": "Cosine (radians).",
    "tan": "Tangent (radians).",
    "asin": "Inverse sine, in radians.",
    "acos": "Inverse cosine, in radians.",
    "atan": "Inverse tangent, in radians.",
    "sinh": "Hyperbolic sine.",
    "cosh": "Hyperbolic cosine.",
    "tanh": "Hyperbolic tangent.",
    "asinh": "Inverse hyperbolic sine.",
    "acosh": "Inverse hyperbolic cosine.",
    "atanh": "Inverse hyperbolic tangent.",
    "isnan": "True where an element is NaN.",
    "isinf": "True where an element is infinite.",
    "isfinite": "True where an element is neither infinite nor NaN.",
    "signbit": "True where the sign bit is set (negative numbers, -0.0).",
    "real": "The real part of each element.",
    "imag": "The imaginary part of each element.",
    "conj": "The complex conjugate of each element.",
    "angle": "The argument (phase angle) of each element, in radians.",
    "logical_not": "Logical NOT of each element.",
}
_B = {  # binary elementwise
    "add": "x1 + x2, element by element.",
    "subtract": "x1 - x2, element by element.",
    "multiply": "x1 * x2, element by element.",
    "divide": "x1 / x2 (true division), element by element.",
    "floor_divide": "x1 // x2: the floor of the quotient.",
    "remainder": "x1 % x2, with the sign of x2 (as Python).",
    "pow": "x1 to the power x2.",
    "maximum": "The larger of x1 and x2 (NaN if either is).",
    "minimum": "The smaller of x1 and x2 (NaN if either is).",
    "atan2": "The angle of the point (x2, x1), in radians.",
    "hypot": "sqrt(x1**2 + x2**2), without overflow.",
    "copysign": "The magnitude of x1 with the sign of x2.",
    "logaddexp": "log(exp(x1) + exp(x2)), without overflow.",
    "nextafter": "The next floating-point value after x1 towards x2.",
    "bitwise_and": "Bitwise AND.",
    "bitwise_or": "Bitwise OR.",
    "bitwise_xor": "Bitwise XOR.",
    "bitwise_left_shift": "x1 << x2.",
    "bitwise_right_shift": "x1 >> x2 (arithmetic for signed integers).",
    "equal": "x1 == x2.",
    "not_equal": "x1 != x2.",
    "less": "x1 < x2.",
    "less_equal": "x1 <= x2.",
    "greater": "x1 > x2.",
    "greater_equal": "x1 >= x2.",
    "logical_and": "Logical AND of the truth values.",
    "logical_or": "Logical OR of the truth values.",
    "logical_xor": "Logical XOR of the truth values.",
}
_R = {  # reductions
    "sum": "Sum of the elements over `axis`.",
    "prod": "Product of the elements over `axis`.",
    "min": "Minimum over `axis` (NaN if any element is).",
    "max": "Maximum over `axis` (NaN if any element is).",
    "mean": "Arithmetic mean over `axis`.",
    "var": "Variance over `axis`.",
    "std": "Standard deviation over `axis`.",
    "any": "Whether any element over `axis` is true.",
    "all": "Whether every element over `axis` is true.",
    "count_nonzero": "Number of nonzero elements over `axis`.",
    "argmin": "Position of the first minimum along `axis` (None: in `x` flattened).",
    "argmax": "Position of the first maximum along `axis` (None: in `x` flattened).",
    "nansum": "Sum over `axis`, NaNs counted as zero.",
    "nanprod": "Product over `axis`, NaNs counted as one.",
    "nanmin": "Minimum over `axis`, ignoring NaNs.",
    "nanmax": "Maximum over `axis`, ignoring NaNs.",
    "nanmean": "Mean over `axis`, ignoring NaNs.",
    "nanvar": "Variance over `axis`, ignoring NaNs.",
    "nanstd": "Standard deviation over `axis`, ignoring NaNs.",
    "nanargmin": "Position of the first minimum along `axis`, ignoring NaNs.",
    "nanargmax": "Position of the first maximum along `axis`, ignoring NaNs.",
    "logsumexp": "log(sum(exp(x))) over `axis` (scipy.special.logsumexp), without overflow.",
}
SUMMARIES = {
    "tril": "The lower triangle (on and below diagonal `k`) of the last two axes, zeros above.",
    "triu": "The upper triangle (on and above diagonal `k`) of the last two axes, zeros below.",
    "matmul": "Matrix product (NumPy semantics: 1-d promotion, broadcast batch axes); lazy.",
    "outer": "Outer product of the flattened operands; lazy.",
    "matrix_transpose": "Swap the last two axes; lazy.",
    "permute_dims": "The array with its axes in the order `axes`; lazy.",
    "flip": "Reversed along `axis` (all axes by default); lazy.",
    "squeeze": "Without the given length-1 axes (all of them by default); lazy.",
    "moveaxis": "Axes moved from `source` to `destination`, the others in order; lazy.",
    "expand_dims": "A new axis of length 1 at `axis`; lazy.",
    "unstack": "The slices of `x` along `axis`, as a tuple of arrays (lazy views).",
    "sort": "x sorted along `axis` (ascending unless `descending`; stable, NaNs last).",
    "argsort": "The int64 positions that sort x along `axis` (stable: equal values keep their order).",
    **_U,
    **_B,
    **_R,
    "clip": "`x` with its elements limited to [min, max].",
    "arange": "Evenly spaced values in [start, stop), by `step` (never materialised).",
    "linspace": "`num` evenly spaced values from `start` to `stop` (never materialised).",
    "cumulative_prod": "The Array API's cumulative product along `axis`.",
    "cumprod": "NumPy's cumprod: axis=None scans `x` flattened in C order.",
    "empty_like": "An array of x's shape whose values are unspecified (zeros here).",
    "zeros_like": "Zeros in x's shape and (by default) x's dtype.",
    "ones_like": "Ones in x's shape and (by default) x's dtype.",
}

# --- examples ------------------------------------------------------------------------------
# (operands, arguments): operands are NumPy expressions, shown wrapped in bl.asarray(); the
# call is bl.NAME(arguments). The expected output is NumPy's result of NUMPY.get(name, name)
# with the same arguments over the NumPy operands.
_F = "x = np.array([0.25, 0.5, 0.75])"
_S = "x = np.array([-1.5, 0.5, 2.25])"
_C = "x = np.array([1+2j, -3j])"
_X2 = "x = np.array([[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]])"
_I2 = "x = np.arange(6).reshape(2, 3)"
EXAMPLES = {
    **{
        n: (_S, "x")
        for n in (
            "negative",
            "positive",
            "abs",
            "square",
            "sign",
            "reciprocal",
            "floor",
            "ceil",
            "trunc",
            "round",
            "signbit",
        )
    },
    **{n: (_C, "x") for n in ("real", "imag", "conj", "angle")},
    **{n: ("x = np.array([1.0, np.nan, np.inf])", "x") for n in ("isnan", "isinf", "isfinite")},
    "acosh": ("x = np.array([1.0, 1.5, 2.0])", "x"),
    "logical_not": ("x = np.array([True, False])", "x"),
    "bitwise_invert": ("x = np.array([0, 1, 12], dtype=np.int8)", "x"),
    **{
        n: ("x1 = np.array([1, 6, 12]); x2 = np.array([3, 2, 1])", "x1, x2")
        for n in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")
    },
    **{
        n: ("x1 = np.array([True, True, False]); x2 = np.array([True, False, False])", "x1, x2")
        for n in ("logical_and", "logical_or", "logical_xor")
    },
    "where": ("c = np.array([True, False, True]); x = np.array([1, 2, 3]); y = np.array([10, 20, 30])", "c, x, y"),
    "clip": ("x = np.array([-2, 0, 5])", "x, 0, 3"),
    "astype": ("x = np.array([1.5, -2.7])", "x, np.int32"),
    **{
        n: ("x = np.array([[1.0, np.nan, 2.0], [4.0, 3.0, np.nan]])", "x, axis=0")
        for n in ("nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd", "nanargmin", "nanargmax")
    },
    "any": ("x = np.array([[True, False, True], [False, False, True]])", "x, axis=0"),
    "all": ("x = np.array([[True, False, True], [False, False, True]])", "x, axis=0"),
    "count_nonzero": ("x = np.array([[0, 1, 2], [3, 0, 0]])", "x, axis=1"),
    "var": (_X2, "x, axis=1, correction=1"),
    "median": (_X2, "x, axis=1"),
    "quantile": (_X2, "x, 0.25, axis=1"),
    "percentile": (_X2, "x, 75, axis=1"),
    "sort": ("x = np.array([[3, 1, 2], [0, 5, 4]])", "x"),
    "argsort": ("x = np.array([[3, 1, 2], [0, 5, 4]])", "x"),
    "searchsorted": ("x1 = np.array([1, 3, 5, 7]); x2 = np.array([0, 3, 6])", "x1, x2"),
    "cumsum": (_I2, "x, axis=1"),
    "cumprod": ("x = np.array([[1, 2, 3], [4, 5, 6]])", "x, axis=1"),
    "cumulative_sum": (_I2, "x, axis=1, include_initial=True"),
    "cumulative_prod": ("x = np.array([[1, 2, 3], [4, 5, 6]])", "x, axis=1"),
    "matmul": ("x1 = np.arange(6.0).reshape(2, 3); x2 = np.array([1.0, 0.0, 2.0])", "x1, x2"),
    "tensordot": ("x1 = np.arange(6.0).reshape(2, 3); x2 = np.arange(6.0).reshape(3, 2)", "x1, x2, axes=1"),
    "vecdot": ("x1 = np.array([[1.0, 2.0], [3.0, 4.0]]); x2 = np.array([1.0, 1.0])", "x1, x2"),
    "outer": ("x1 = np.array([1, 2]); x2 = np.array([1, 10, 100])", "x1, x2"),
    "trace": ("x = np.arange(9).reshape(3, 3)", "x"),
    "permute_dims": (_I2, "x, (1, 0)"),
    "transpose": (_I2, "x"),
    "matrix_transpose": (_I2, "x"),
    "expand_dims": ("x = np.array([1, 2])", "x, axis=0"),
    "squeeze": ("x = np.array([[1, 2, 3]])", "x"),
    "flip": (_I2, "x, axis=1"),
    "moveaxis": ("x = np.arange(6).reshape(1, 2, 3)", "x, 0, 2"),
    "broadcast_to": ("x = np.array([1, 2, 3])", "x, (2, 3)"),
    "broadcast_arrays": ("x = np.array([[1], [2]]); y = np.array([10, 20])", "x, y"),
    "reshape": (_I2, "x, (3, 2)"),
    "flatten": (_I2, "x"),
    "concat": ("x = np.array([[1, 2]]); y = np.array([[3, 4]])", "[x, y], axis=0"),
    "stack": ("x = np.array([1, 2]); y = np.array([3, 4])", "[x, y], axis=1"),
    "unstack": (_I2, "x, axis=0"),
    "roll": ("x = np.arange(5)", "x, 2"),
    "tile": ("x = np.array([1, 2])", "x, (2, 2)"),
    "repeat": ("x = np.array([1, 2, 3])", "x, 2"),
    "diagonal": ("x = np.arange(9).reshape(3, 3)", "x"),
    "tril": ("x = np.arange(1, 10).reshape(3, 3)", "x"),
    "triu": ("x = np.arange(1, 10).reshape(3, 3)", "x"),
    "diff": ("x = np.array([1, 4, 9, 16])", "x"),
    "take": ("x = np.array([10, 20, 30, 40])", "x, [3, 0]"),
    "take_along_axis": ("x = np.array([[10, 30, 20], [60, 40, 50]])", "x, np.array([[0], [2]]), axis=1"),
    "nonzero": ("x = np.array([[0, 1], [2, 0]])", "x"),
    "zeros": ("", "(2, 3)"),
    "ones": ("", "(2, 3), dtype=np.int32"),
    "empty": ("", "(2, 3)"),
    "full": ("", "(2, 2), 7"),
    "zeros_like": ("x = np.array([[1, 2], [3, 4]])", "x"),
    "ones_like": ("x = np.array([[1, 2], [3, 4]])", "x, dtype=np.float32"),
    "empty_like": ("x = np.array([[1, 2], [3, 4]])", "x"),
    "full_like": ("x = np.array([[1, 2], [3, 4]])", "x, 9"),
    "arange": ("", "0, 1, 0.25"),
    "linspace": ("", "0, 1, num=5"),
    "eye": ("", "2, 3, k=1"),
    "meshgrid": ("x = np.array([1, 2, 3]); y = np.array([4, 5])", "x, y, indexing='ij'"),
}
# NumPy's function for the expected output, where its name differs (empty: b2lazy's values
# are zeros, NumPy's whatever memory held).
NUMPY = {"flatten": "np.ravel", "empty": "np.zeros", "empty_like": "np.zeros_like", "logsumexp": "_logsumexp"}
_FAMILY_EXAMPLES = {
    ("elementwise", 1): (_F, "x"),
    ("elementwise", 2): ("x1 = np.array([1.0, 2.0, 3.0]); x2 = np.array([2.0, 2.0, 0.5])", "x1, x2"),
    ("reduction", 3): (_X2, "x, axis=0"),
}


def _logsumexp(x, axis=None):
    return np.log(np.sum(np.exp(x), axis=axis))


def _example_spec(name, family, nparams):
    spec = EXAMPLES.get(name) or _FAMILY_EXAMPLES.get((family, min(nparams, 3)))
    if spec is None and family == "reduction":
        spec = _FAMILY_EXAMPLES[("reduction", 3)]
    return spec


def _oracle_source(name, spec):
    """A function computing NumPy's result of the example (its setup, then the call)."""
    setup, args = spec
    body = [f"    {stmt.strip()}" for stmt in setup.split(";") if stmt.strip()]
    return "\n".join([f"def {name}():", *body, f"    return {NUMPY.get(name, 'np.' + name)}({args})"])


def numpy_results(specs):
    """{name: NumPy's result of the example} for {name: spec}, compiled in one go (one
    compile per example would cost 30 ms at import); an exception where NumPy fails."""
    ns = {"np": np, "_logsumexp": _logsumexp}
    exec(
        compile(
            "\n\n".join(_oracle_source(n, s) for n, s in specs.items()),  # noqa: S102 - this table's own code
            "<b2lazy._docs examples>",
            "exec",
        ),
        ns,
    )
    out = {}
    with np.errstate(all="ignore"):
        for name in specs:
            try:
                out[name] = ns[name]()
            except Exception as e:  # noqa: BLE001 - the doctest then fails, naming the function
                out[name] = e
    return out


def example(name, spec, want):
    """The Examples section's lines: the spec's operands through bl.asarray, the call, and
    NumPy's result `want` as the expected output."""
    setup, args = spec
    lines = [">>> import numpy as np", ">>> import b2lazy as bl"]
    for stmt in filter(None, (s.strip() for s in setup.split(";"))):
        var, expr = (s.strip() for s in stmt.split("=", 1))
        lines.append(f">>> {var} = bl.asarray({expr})")
    call = f"bl.{name}({args})"
    multi = name in MULTI_OUTPUT
    lines.append(f">>> [a.to_numpy() for a in {call}]" if multi else f">>> {call}.to_numpy()")
    if isinstance(want, Exception):
        text = f"<NumPy has no oracle for this example: {want}>"
    else:
        text = repr([np.asarray(a) for a in want] if multi else np.asarray(want))
    return lines + [line or "<BLANKLINE>" for line in text.splitlines()]


# --- the docstring ---------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _wrap(text, width=88, indent="    "):
    """`text` in indented lines of at most `width` columns (greedy; textwrap's regular
    expressions cost more than all the rest of the import's docstrings)."""
    lines, line = [], indent
    for word in text.split():
        if len(line) > len(indent) and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = indent
        line += (" " if len(line) > len(indent) else "") + word
    return tuple(lines + [line])


def _has_section(doc, section):
    return f"\n{section}\n{'-' * len(section)}" in "\n" + inspect.cleandoc(doc or "")


def registry_doc(entry, sig, body_doc, examples=None):
    """The numpydoc docstring of registry function `entry` (b2lazy/_registry.py's dict),
    of signature `sig`, whose body's docstring is `body_doc`; `examples` its Examples
    section's lines, if any."""
    if body_doc and _has_section(body_doc, "Parameters"):
        return body_doc  # written in full by hand
    name, family = entry["name"], entry["family"]
    # the families' generated bodies carry one generic line: SUMMARIES' comes first
    text = SUMMARIES.get(name) or (inspect.cleandoc(body_doc) if body_doc else f"The {family} function {name}.")
    out = [text, ""]
    if entry["aliases"]:
        out += [f"Also available as {', '.join(entry['aliases'])}.", ""]
    if sig.parameters:
        out += ["Parameters", "----------"]
        for p in sig.parameters.values():
            t, _, desc = param(name, family, p.name) or ("object", "", "")
            shown = f"*{p.name}" if p.kind is p.VAR_POSITIONAL else p.name
            optional = "" if p.default is p.empty else f", optional (default {p.default!r})"
            if p.kind is p.VAR_POSITIONAL:
                optional = ""
            out += [f"{shown} : {t}{optional}", *_wrap(desc)]
        out.append("")
    rtype = "tuple of Array" if name in MULTI_OUTPUT else "Array"
    returns = f"Lazy: computed by compute() or to_numpy(). dtype: {entry['dtype_rule']}."
    out += ["Returns", "-------", f"out : {rtype}", *_wrap(returns), ""]
    if examples:
        out += ["Examples", "--------", *examples]
    return "\n".join(out).rstrip() + "\n"


def document_registry(namespace, entries):
    """Give every registry function in `namespace` its docstring (before the recording
    wrappers copy it)."""
    sigs = {name: inspect.signature(namespace[name]) for name in entries}  # the registry's
    todo = {name: e for name, e in entries.items() if not _has_section(namespace[name].__doc__, "Parameters")}
    specs = {
        name: spec for name, e in todo.items() if (spec := _example_spec(name, e["family"], len(sigs[name].parameters)))
    }
    wants = numpy_results(specs)
    for name, entry in todo.items():
        fn = namespace[name]
        ex = example(name, specs[name], wants[name]) if name in specs else None
        fn.__doc__ = registry_doc(entry, sigs[name], fn.__doc__, ex)
