"""Chunk forms shared with xarray and Dask (no import of either)."""


def normalized(chunks, shape):
    """Dask's normalized form: one tuple of block lengths per axis."""
    out = []
    for c, s in zip(chunks, shape):
        c = max(1, min(int(c), s)) if s else 0
        out.append(tuple([c] * (s // c) + ([s % c] if s % c else [])) if c else (0,))
    return tuple(out)


def sizes(chunks, shape):
    """One block length per axis from any of xarray's chunk forms (int, -1, None, "auto",
    a tuple of lengths, a dict by axis)."""
    if isinstance(chunks, dict):
        chunks = tuple(chunks.get(i, -1) for i in range(len(shape)))
    if not isinstance(chunks, (tuple, list)):
        chunks = (chunks,) * len(shape)
    out = []
    for c, s in zip(chunks, shape):
        if isinstance(c, (tuple, list)):
            c = max(c) if c else s
        if c is None or c == -1 or c == "auto" or isinstance(c, str):
            c = s
        out.append(max(1, min(int(c), s)) if s else 1)
    return tuple(out)
