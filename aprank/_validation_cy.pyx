# distutils: language = c++
"""Compiled part of ``aprank.validation``: grouping samples by small integer query ids.

A stable argsort of the ids costs O(n log n) and dominates a batch of many small queries whose
samples come shuffled; ids that are integers in a range not much wider than n are grouped by a
counting sort instead, in two passes over the samples (the same groups, in the same order).
"""
from libc.stdint cimport int64_t
import numpy as np

ctypedef int64_t i64


def count_groups(const i64[::1] ids, i64 n_values):
    """Group samples by ``ids``, each in [0, n_values) (validated by the caller).

    Returns (order, offsets): group g owns samples order[offsets[g]:offsets[g+1]], in input
    order, groups by ascending id, exactly as a stable argsort of the ids would give them.
    When every id occupies one contiguous block, order is None and the groups are the blocks in
    input order (nothing to gather).
    """
    cdef i64 n = ids.shape[0], k, v, g = 0, blocks = 0, groups = 0, total = 0, c
    counts_buf = np.zeros(n_values, dtype=np.int64)
    cdef i64[::1] counts = counts_buf
    with nogil:
        for k in range(n):
            counts[ids[k]] += 1
            if k == 0 or ids[k] != ids[k - 1]:
                blocks += 1
        for v in range(n_values):
            if counts[v] != 0:
                groups += 1
    offsets_buf = np.empty((blocks if blocks == groups else groups) + 1, dtype=np.int64)
    cdef i64[::1] offsets = offsets_buf
    if blocks == groups:
        with nogil:
            for k in range(n):
                if k == 0 or ids[k] != ids[k - 1]:
                    offsets[g] = k
                    g += 1
            offsets[g] = n
        return None, offsets_buf
    order_buf = np.empty(n, dtype=np.int64)
    cdef i64[::1] order = order_buf
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
        for k in range(n):
            v = ids[k]
            order[counts[v]] = k
            counts[v] += 1
    return order_buf, offsets_buf
