"""Training data on a Dask cluster: one persisted block per partition.

A :class:`Block` is what one task sees: a partition's rows of X, their labels, query ids and
global row numbers, as NumPy arrays. Blocks are made once per fit and persisted, so every
cutting-plane iteration only ships w to them.

Inputs follow the XGBoost / LightGBM Dask conventions: X a ``dask.array`` (n, d) or a
``dask.dataframe`` DataFrame, y and qid ``dask.array`` 1-D arrays or Series partitioned like X.
NumPy arrays are accepted too (one partition). With qid, the rows are regrouped once, with
Dask's own DataFrame shuffle, so that no query straddles two blocks -- unless none does
already; rows keep their original order within a query, so ties break as on one machine.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import scipy.sparse as sp
from dask.sizeof import sizeof
from distributed import default_client

__all__ = ["Block", "DaskData", "as_dask_array", "as_dask_data", "spread"]


@dataclass
class Block:
    """One partition's rows: X (m, d) float64, y (m,) raw labels, qid (m,) or None, rows (m,)
    int64 global row numbers (positions in the input)."""

    X: np.ndarray
    y: np.ndarray
    qid: Optional[np.ndarray]
    rows: np.ndarray


@sizeof.register(Block)
def _sizeof_block(block: Block) -> int:
    # Dask's scheduler moves objects it believes small and counts them against a worker's
    # memory: a block must weigh what its arrays weigh
    return sum(sizeof(a) for a in (block.X, block.y, block.qid, block.rows) if a is not None)


@dataclass
class DaskData:
    """Persisted blocks and what the client knows of them."""

    blocks: list               # persisted dask Delayed, one Block each
    n_samples: int
    n_features: int
    classes: np.ndarray        # sorted distinct labels
    token: str                 # dask's name of the inputs: equal data, equal token
    grouped: bool              # rows were regrouped by qid (a shuffle ran)


def as_dask_array(a, name: str, ndim: int) -> da.Array:
    """A dask array (or DataFrame / Series, pandas or NumPy input) as a dask array with known
    chunk sizes, checked to have ``ndim`` dimensions; a sparse matrix or a dask array of sparse
    blocks is a TypeError (the blocks are dense NumPy arrays)."""
    if sp.issparse(a) or (isinstance(a, da.Array) and a._meta is not None
                          and not isinstance(a._meta, np.ndarray)):
        # NumPy would turn sparse blocks into object arrays and fail far from here
        raise TypeError(f"{name} must be dense: the Dask estimators take dense dask arrays or "
                        f"DataFrames (or NumPy arrays), got {_kind_of(a)}; densify it first "
                        f"({name}.toarray() of a SciPy matrix, "
                        f"{name}.map_blocks(lambda b: b.toarray()) of sparse blocks)")
    if isinstance(a, (dd.DataFrame, dd.Series)):
        a = a.to_dask_array(lengths=True)
    elif isinstance(a, (pd.DataFrame, pd.Series)):
        a = a.to_numpy()
    if not isinstance(a, da.Array):
        a = np.asarray(a)
        a = da.from_array(a, chunks=a.shape if a.ndim else ())
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    if any(np.isnan(c) for c in a.chunks[0]):
        a = a.compute_chunk_sizes()
    return a


def _kind_of(a) -> str:
    """What a sparse input is, for the error: its type, or its blocks' type."""
    if isinstance(a, da.Array):
        return f"a dask array of {type(a._meta).__module__}.{type(a._meta).__name__} blocks"
    return f"a {type(a).__module__}.{type(a).__name__}"


def _block(X, y, qid, start):
    X = np.asarray(X, dtype=np.float64)
    if not np.isfinite(X).all():
        bad = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"X[{start + bad[0]}, {bad[1]}] = {X[tuple(bad)].item()!r} is not finite")
    return Block(X, np.asarray(y), None if qid is None else np.asarray(qid),
                 np.arange(start, start + X.shape[0], dtype=np.int64))


def _labels(block: Block) -> np.ndarray:
    return np.unique(block.y)


def _query_ids(block: Block) -> np.ndarray:
    return pd.unique(block.qid)


def _frame(block: Block) -> pd.DataFrame:
    """A block as a DataFrame for the shuffle: row, qid, y, then one column per feature."""
    frame = pd.DataFrame(block.X, columns=[f"x{k}" for k in range(block.X.shape[1])])
    frame.insert(0, "y", block.y)
    frame.insert(0, "qid", block.qid)
    frame.insert(0, "row", block.rows)
    return frame


def _empty_frame(block: Block) -> pd.DataFrame:
    return _frame(block).iloc[:0]


def _unframe(frame: pd.DataFrame) -> Block:
    # the shuffle keeps no order inside a partition: restore the input order
    frame = frame.sort_values("row", kind="stable")
    return Block(np.ascontiguousarray(frame.iloc[:, 3:].to_numpy(dtype=np.float64)),
                 frame["y"].to_numpy(), frame["qid"].to_numpy(),
                 frame["row"].to_numpy(dtype=np.int64))


def as_dask_data(X, y, qid=None) -> DaskData:
    """Validate the inputs, cut them into aligned blocks (regrouped by qid when queries
    straddle partitions) and persist the blocks."""
    X = as_dask_array(X, "X", 2)
    y = as_dask_array(y, "y", 1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X of shape {X.shape}: need at least one sample and one feature")
    if X.dtype.kind not in "iufb":
        raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
    X = X.rechunk({1: -1})
    chunks = X.chunks[0]
    y = y.rechunk((chunks,))
    if qid is not None:
        qid = as_dask_array(qid, "qid", 1)
        if qid.shape[0] != X.shape[0]:
            raise ValueError(f"qid has {qid.shape[0]} entries but X has {X.shape[0]} rows")
        qid = qid.rechunk((chunks,))
    token = dask.base.tokenize(X.name, y.name, None if qid is None else qid.name)
    starts = np.r_[0, np.cumsum(chunks)[:-1]].astype(np.int64)
    xs = X.to_delayed().ravel()
    ys = y.to_delayed().ravel()
    qs = [None] * len(xs) if qid is None else list(qid.to_delayed().ravel())
    blocks = spread([dask.delayed(_block)(xb, yb, qb, int(start))
                     for xb, yb, qb, start in zip(xs, ys, qs, starts)])
    classes = np.unique(np.concatenate(dask.compute(*[dask.delayed(_labels)(b) for b in blocks])))
    grouped = False
    if qid is not None:
        ids = dask.compute(*[dask.delayed(_query_ids)(b) for b in blocks])
        every = np.concatenate([np.asarray(i, dtype=object) for i in ids])
        if pd.Series(every).duplicated().any():     # some query straddles two partitions
            blocks = _regroup(blocks)
            grouped = True
    return DaskData(blocks, int(X.shape[0]), int(X.shape[1]), classes, token, grouped)


def _regroup(blocks: list) -> list:
    """Dask's DataFrame shuffle on qid: every query's rows end in one partition."""
    meta = dask.delayed(_empty_frame)(blocks[0]).compute()
    frames = dd.from_delayed([dask.delayed(_frame)(b) for b in blocks], meta=meta)
    shuffled = frames.shuffle(on="qid", npartitions=len(blocks))
    return spread([dask.delayed(_unframe)(part) for part in shuffled.to_delayed()])


def spread(blocks: list) -> list:
    """Persist the blocks, dealt round-robin over the workers' threads when a distributed
    Client is the scheduler.

    Dask places tasks where their inputs are, so where the blocks land is where every
    iteration runs; left to itself the scheduler may hand one worker most of the blocks when
    they are made (it starts a few root tasks per worker at once), and then that worker does
    most of every iteration. Without a distributed Client, the blocks are persisted in memory
    by the current scheduler.
    """
    try:
        client = default_client()
    except ValueError:        # no distributed Client: threads or processes of this machine
        return list(dask.persist(*blocks))
    threads = [address for address, info in sorted(client.scheduler_info()["workers"].items())
               for _ in range(info["nthreads"])]
    return [client.persist(block, workers=[threads[k % len(threads)]])
            for k, block in enumerate(blocks)]
