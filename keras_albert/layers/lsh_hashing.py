"""Hashing, sorting and chunking helpers for LSH self-attention.

Pure functions on `keras.ops`, written for XLA and TFLite: int32 indices,
no data-dependent Python control flow, the sort done with `top_k` (TFLite's
`TOPK_V2`, XLA's sort), its inverse with a `scatter` (`SCATTER_ND`) and
every permutation applied with a flat `take` (one `GATHER`). Shapes may be static or, while Keras traces a functional
model, partly unknown; Python branches look only at static shapes.
"""

import numpy as np
from keras import ops

# Sort keys are `bucket * length + position` in int32 (XLA on TPU cannot sort
# int64), so `(num_buckets + 1) * length` must stay below this.
INT32_LIMIT = 2**31 - 1


def bucket_factors(num_buckets):
    """`num_buckets` (an int or a list of ints) as a tuple of factors."""
    if isinstance(num_buckets, (list, tuple)):
        return tuple(int(factor) for factor in num_buckets)
    return (int(num_buckets),)


def total_buckets(num_buckets):
    """Number of buckets: the product of the factors."""
    return int(np.prod(bucket_factors(num_buckets)))


def rotation_width(num_buckets):
    """Rotation columns one hash round needs: the sum of the half factors."""
    return sum(factor // 2 for factor in bucket_factors(num_buckets))


def reformer_num_buckets(sequence_length, chunk_length):
    """Reformer's choice of buckets for a sequence length: two per chunk;
    once that exceeds `2 * chunk_length`, a power of two split into two
    factors.

    Hashing with one factor costs `length * buckets / 2` rotation columns,
    which grows with the square of the length (buckets grow with it); with
    two factors it costs about the square root of that (Reformer's
    factorised buckets; Hugging Face's Reformer splits at the same point).

    Example:
    >>> reformer_num_buckets(2048, 64)
    64
    >>> reformer_num_buckets(16384, 64)
    [16, 32]
    """
    count = 2 * -(-int(sequence_length) // int(chunk_length))
    if count <= 2 * chunk_length:
        return max(2, count)
    # Rounded down to a power of two (as Hugging Face's Reformer does), so
    # that it splits into two even factors, the first the smaller.
    power = count.bit_length() - 1
    return [2 ** (power // 2), 2 ** (power - power // 2)]


def _plus_minus_argmax(rotated, half):
    """`argmax([x, -x])` over the last axis of `rotated` [..., half].

    The winner is the largest x unless the most negative one is larger in
    magnitude (ties go to x, the first half, as argmax would); within a
    half, the first index holding the winning value (argmax's tie rule).
    Plain reductions rather than ops.argmax, whose float version adds a
    bitwise sign check that TFLite has no built-in for, or top_k, which XLA
    runs as a sort of every row (twice as slow here).
    """
    largest = ops.max(rotated, axis=-1, keepdims=True)
    smallest = ops.min(rotated, axis=-1, keepdims=True)
    positive = largest >= -smallest
    winner = ops.where(positive, largest, smallest)
    index = ops.arange(half, dtype="int32")
    first = ops.min(ops.where(ops.equal(rotated, winner), index, half), axis=-1)
    return first + ops.where(positive[..., 0], 0, half)


def hash_buckets(vectors, rotations, num_hashes, num_buckets):
    """Angular LSH: `argmax([xR, -xR])` for each hash round.

    With `num_buckets` a list of factors `[b0, b1, ...]` (Reformer's
    factorised buckets), each factor hashes with its own `b_i / 2` rotation
    columns and the bucket is `h0 + b0 * (h1 + b1 * ...)`: `prod(b_i)`
    buckets for `sum(b_i) / 2` columns instead of `prod(b_i) / 2`. Hashing
    costs length x columns, so with buckets growing with the length a
    single factor makes it quadratic; two factors keep it near length^1.5.

    Args:
        vectors: float tensor [batch, heads, length, head_dim].
        rotations: float tensor [heads, head_dim, num_hashes * width], with
            `width = rotation_width(num_buckets)`.
        num_hashes: int, rounds of hashing.
        num_buckets: int, 1 (everything in bucket 0) or even; or a list of
            even factors.

    Returns:
        int32 tensor [batch, heads, num_hashes, length] of bucket ids.
    """
    shape = ops.shape(vectors)
    batch, heads, length = shape[0], shape[1], shape[2]
    factors = bucket_factors(num_buckets)
    if total_buckets(num_buckets) == 1:
        return ops.zeros((batch, heads, num_hashes, length), "int32")
    width = rotation_width(num_buckets)
    # A broadcast batched matmul, [b, n, l, d] x [1, n, d, k]: the einsum
    # moved the heads to the front and back (two transposes of a tensor
    # that grows as length * num_buckets) and ran 3x slower without XLA.
    rotated = ops.matmul(vectors, ops.cast(rotations, vectors.dtype)[None])
    rotated = ops.reshape(rotated, (-1, length, num_hashes, width))
    if len(factors) == 1:
        buckets = _plus_minus_argmax(rotated, width)
    else:
        buckets, offset, scale = None, 0, 1
        for factor in factors:
            half = factor // 2
            part = _plus_minus_argmax(rotated[..., offset:offset + half], half)
            part = part * scale
            buckets = part if buckets is None else buckets + part
            offset, scale = offset + half, scale * factor
    buckets = ops.transpose(buckets, (0, 2, 1))
    return ops.reshape(buckets, (batch, heads, num_hashes, length))


def sort_by_bucket(buckets, valid, num_buckets):
    """Sorts positions by `(bucket, position)` with unique int32 keys.

    Invalid (padded) positions go to an extra bucket `num_buckets`, so they
    sort after every real token and never change which real tokens share a
    chunk.

    Args:
        buckets: int32 [..., length].
        valid: bool [..., length] broadcastable to `buckets`, or None.
        num_buckets: int.

    Returns:
        `(positions, sorted_valid)`: int32 [..., length], the original
        position of each sorted slot, and bool [..., length], whether that
        slot holds a real token (None when `valid` is None).
    """
    length = ops.shape(buckets)[-1]
    if valid is not None:
        buckets = ops.where(valid, buckets, num_buckets)
    keys = buckets * length + ops.arange(length, dtype="int32")
    # Keys are non-negative, so negating them cannot overflow; top_k of the
    # negated keys is an ascending sort that TFLite runs natively.
    negated, positions = ops.top_k(-keys, length, sorted=True)
    positions = ops.cast(positions, "int32")
    if valid is None:
        return positions, None
    return positions, -negated < num_buckets * length


def invert_permutation(permutation):
    """Inverse of a permutation along the last axis.

    A scatter (`inverse[permutation[i]] = i`), linear in the length; a
    second sort would be n log n, and under XLA it cost as much as the
    bucket sort itself.
    """
    shape = ops.shape(permutation)
    length = shape[-1]
    flat = ops.reshape(permutation, (-1, length))
    groups = ops.shape(flat)[0]
    offsets = ops.arange(groups, dtype="int32")[:, None] * length
    indices = ops.reshape(flat + offsets, (-1, 1))
    values = ops.broadcast_to(ops.arange(length, dtype="int32"), (groups, length))
    inverse = ops.scatter(indices, ops.reshape(values, (-1,)), (groups * length,))
    return ops.reshape(inverse, shape)


def gather_rows(values, indices):
    """`values[g, indices[g, ...], :]` for every leading row `g`.

    Args:
        values: [groups, length, depth].
        indices: int32 [groups, ..., length'] with entries in [0, length).

    Returns:
        [groups, ..., length', depth].
    """
    shape = ops.shape(values)
    length, depth = shape[1], shape[2]
    index_shape = ops.shape(indices)
    groups = ops.shape(indices)[0]
    offsets = ops.arange(groups, dtype="int32") * length
    offsets = ops.reshape(offsets, (-1,) + (1,) * (len(index_shape) - 1))
    flat = ops.reshape(values, (-1, depth))
    gathered = ops.take(flat, ops.reshape(indices + offsets, (-1,)), axis=0)
    return ops.reshape(gathered, tuple(index_shape) + (depth,))


def neighbour_chunks(num_chunks, num_chunks_before, num_chunks_after):
    """Which chunks each chunk attends to, and which of those are outside.

    The own chunk comes first, then `num_chunks_before` chunks back, then
    `num_chunks_after` ahead. Unlike Reformer, the window does not wrap
    around the ends: the first chunk would then see the last one only when
    a text fills every padded position, so a text's outputs would depend on
    how far it is padded (length buckets, batches of other lengths).
    Neighbours past an end get an index clipped into range (shapes stay
    static) and are flagged for the caller to mask; no chunk is ever seen
    twice.

    Args:
        num_chunks: int or scalar int32 tensor.
        num_chunks_before: int.
        num_chunks_after: int.

    Returns:
        `(indices, outside)`: int32 [num_chunks, window] chunk indices and
        bool [num_chunks, window] (None when the window is the own chunk
        alone), NumPy arrays when `num_chunks` is a Python int, else
        tensors.
    """
    offsets = [0]
    offsets += [-i for i in range(1, num_chunks_before + 1)]
    offsets += list(range(1, num_chunks_after + 1))
    offsets = np.array(offsets, dtype="int32")
    if isinstance(num_chunks, int):
        # Static shapes (the normal case): constants, no ops in the graph.
        wanted = np.arange(num_chunks, dtype="int32")[:, None] + offsets[None, :]
        outside = (wanted < 0) | (wanted >= num_chunks)
        indices = np.clip(wanted, 0, num_chunks - 1).astype("int32")
        return indices, (outside if len(offsets) > 1 else None)
    wanted = ops.arange(num_chunks, dtype="int32")[:, None] + offsets[None, :]
    outside = ops.logical_or(ops.less(wanted, 0), ops.greater_equal(wanted, num_chunks))
    indices = ops.clip(wanted, 0, num_chunks - 1)
    return indices, (outside if len(offsets) > 1 else None)


def look_around(chunked, indices):
    """Concatenates each chunk with its neighbours along the slot axis.

    Args:
        chunked: [groups, num_chunks, chunk_length, ...].
        indices: int32 [num_chunks, window] from `neighbour_chunks`.

    Returns:
        [groups, num_chunks, window * chunk_length, ...].
    """
    shape = ops.shape(chunked)
    window = int(indices.shape[1])
    if window == 1:
        return chunked
    gathered = ops.take(chunked, ops.reshape(indices, (-1,)), axis=1)
    return ops.reshape(
        gathered,
        (shape[0], shape[1], window * shape[2]) + tuple(shape[3:]),
    )
