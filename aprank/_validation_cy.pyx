# distutils: language = c++
"""Compiled part of ``aprank.validation``: grouping samples by small integer query ids.

A stable argsort of the ids costs O(n log n) and dominates a batch of many small queries whose
samples come shuffled; ids that are integers in a range not much wider than n are grouped by a
counting sort instead, in two passes over the samples, one where each id's samples form one
block (the same groups, in the same order); the second pass can also write the inverse of the
order it builds.
"""
from libc.stdint cimport int64_t
import numpy as np

ctypedef int64_t i64


def count_groups(const i64[::1] ids, i64 n_values, bint with_slot=False):
    """Group samples by ``ids``, each in [0, n_values) (validated by the caller).

    Returns (order, offsets, slot): group g owns samples order[offsets[g]:offsets[g+1]], in
    input order, groups by ascending id, exactly as a stable argsort of the ids would give
    them. When every id occupies one contiguous block, order is None and the groups are the
    blocks in input order (nothing to gather). slot: with ``with_slot`` and an order, each
    sample's position in it (the inverse permutation), written by the pass that places the
    samples, in input order; else None.
    """
    cdef i64 n = ids.shape[0], k, v, g = 0, blocks = 0, groups = 0, total = 0, c, start = 0
    counts_buf = np.zeros(n_values, dtype=np.int64)
    cdef i64[::1] counts = counts_buf
    # the blocks' starts, the first n_values of them (past n_values blocks, some id spans
    # several blocks, and the starts are not needed)
    starts_buf = np.empty(n_values + 1, dtype=np.int64)
    cdef i64[::1] starts = starts_buf
    with nogil:
        # counted run by run: one addition per block of equal ids, not a chain of increments of
        # one counter through memory when the ids come in blocks
        for k in range(1, n + 1):
            if k == n or ids[k] != ids[k - 1]:
                counts[ids[k - 1]] += k - start
                if blocks < n_values:
                    starts[blocks] = start
                blocks += 1
                start = k
        for v in range(n_values):
            if counts[v] != 0:
                groups += 1
    if blocks == groups:
        starts[blocks] = n
        return None, starts_buf[:blocks + 1].copy(), None
    offsets_buf = np.empty(groups + 1, dtype=np.int64)
    cdef i64[::1] offsets = offsets_buf
    order_buf = np.empty(n, dtype=np.int64)
    cdef i64[::1] order = order_buf
    slot_buf = np.empty(n if with_slot else 0, dtype=np.int64)
    cdef i64[::1] slot = slot_buf
    with nogil:
        # counts[v] becomes the next free slot of id v
        for v in range(n_values):
            c = counts[v]
            if c != 0:
                offsets[g] = total
                g += 1
                counts[v] = total
                total += c
        offsets[g] = n
        if with_slot:
            for k in range(n):
                v = ids[k]
                order[counts[v]] = k
                slot[k] = counts[v]
                counts[v] += 1
        else:
            for k in range(n):
                v = ids[k]
                order[counts[v]] = k
                counts[v] += 1
    return order_buf, offsets_buf, slot_buf if with_slot else None
