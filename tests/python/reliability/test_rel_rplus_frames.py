"""x[key] = value with mode="r+" replaces chunks without writing over anything a reader uses
(src/storage/frame_update.cpp): a contiguous .b2nd file gets the new chunks appended and
its header switched to them in one write; a sparse directory gets each chunk file renamed
into place, and a new index when chunks become (or stop being) marks of zeros. The values
are NumPy's, python-blosc2 reads (and goes on updating) the array, its metadata survives,
and the dead space a file's replaced chunks leave is bounded by compaction."""

from __future__ import annotations

import os

import blosc2
import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from conftest import base_shapes, examples


@given(
    shape=base_shapes(min_ndim=1, max_ndim=3, allow_zero=False),
    dtype=st.sampled_from(["float64", "int16", "bool"]),
    contiguous=st.booleans(),
    data=st.data(),
)
@examples(60)
def test_updates_match_numpy_and_python_blosc2(shape, dtype, contiguous, data, tmp_path):
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    blocks = tuple(data.draw(st.integers(1, c)) for c in chunks)
    path = str(tmp_path / ("x.b2nd" if contiguous else "xdir"))
    ref = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    a = blosc2.asarray(ref, urlpath=path, mode="w", chunks=chunks, blocks=blocks, contiguous=contiguous)
    a.schunk.vlmeta["note"] = "kept"
    del a
    w = b2lazy.open(path, mode="r+")
    for _ in range(data.draw(st.integers(1, 4))):
        key = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=False, allow_ellipsis=True))
        value = data.draw(st.sampled_from([0, 1, 5]))  # zeros make special (index-only) chunks
        w[key] = value
        ref[key] = value
        np.testing.assert_array_equal(blosc2.open(path)[...], ref)
        np.testing.assert_array_equal(w.to_numpy(), ref)
    opened = blosc2.open(path)
    assert opened.schunk.vlmeta["note"] == "kept"
    del opened
    # python-blosc2 updates the file after b2lazy, and b2lazy after python-blosc2.
    b = blosc2.open(path, mode="a")
    b[...] = 3
    ref[...] = 3
    del b
    np.testing.assert_array_equal(b2lazy.open(path).to_numpy(), ref)
    w = b2lazy.open(path, mode="r+")
    w[...] = 2
    ref[...] = 2
    np.testing.assert_array_equal(blosc2.open(path)[...], ref)
    assert not [n for n in os.listdir(path if not contiguous else tmp_path) if ".tmp-" in n]


def test_a_directory_keeps_no_file_of_a_chunk_that_became_zeros(tmp_path):
    path = str(tmp_path / "xdir")
    blosc2.asarray(np.ones((64, 64)), urlpath=path, mode="w", chunks=(16, 64), blocks=(8, 64), contiguous=False)
    w = b2lazy.open(path, mode="r+")
    w[16:48] = 0.0  # two chunks of zeros: marks in the index, their files removed
    assert sorted(n for n in os.listdir(path) if n.endswith(".chunk")) == ["00000000.chunk", "00000003.chunk"]
    w[16:32] = 2.0  # a mark becomes a file again
    ref = np.ones((64, 64))
    ref[16:48] = 0
    ref[16:32] = 2
    np.testing.assert_array_equal(blosc2.open(path)[...], ref)
    np.testing.assert_array_equal(w.to_numpy(), ref)
    assert not [n for n in os.listdir(path) if ".tmp-" in n]


def test_dead_space_is_compacted(tmp_path):
    path = str(tmp_path / "x.b2nd")
    rng = np.random.default_rng(0)
    ref = rng.random((512, 512))  # incompressible: 2 MiB of chunks
    blosc2.asarray(ref, urlpath=path, mode="w", chunks=(64, 512), blocks=(16, 512))
    compact = os.path.getsize(path)
    w = b2lazy.open(path, mode="r+")
    for i in range(40):  # each statement replaces a quarter of the chunks
        rows = slice((i % 4) * 128, (i % 4) * 128 + 128)
        v = rng.random((128, 512))
        w[rows] = v
        ref[rows] = v
        assert os.path.getsize(path) <= 2 * compact + (1 << 20) + 64 * 1024
    np.testing.assert_array_equal(blosc2.open(path)[...], ref)
    np.testing.assert_array_equal(w.to_numpy(), ref)
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]


def test_an_array_opened_before_reads_the_old_frame_or_says_it_changed(tmp_path):
    path = str(tmp_path / "x.b2nd")
    blosc2.asarray(np.zeros((64, 64)), urlpath=path, mode="w", chunks=(16, 64))
    old = b2lazy.open(path)
    w = b2lazy.open(path, mode="r+")
    w[:8] = 1.0
    try:
        got = old.to_numpy()
    except OSError as e:
        assert "changed on disk" in str(e)
    else:
        np.testing.assert_array_equal(got, 0.0)
