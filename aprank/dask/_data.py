"""Training data on a Dask cluster: one persisted block per partition.

A :class:`Block` is what one task sees: a partition's rows of X, their labels, query ids and
global row numbers, as NumPy arrays. Blocks are made once per fit and persisted, so every
cutting-plane iteration only ships w to them.

Inputs follow the XGBoost / LightGBM Dask conventions: X a ``dask.array`` (n, d) or a
``dask.dataframe`` DataFrame, y and qid ``dask.array`` 1-D arrays or Series partitioned like X.
NumPy arrays are accepted too (one partition).

Before anything is persisted, the client surveys y and qid (one pass over them, not over X):
the labels, every query's largest label (so that a query without a relevant sample is refused
or counted on the client, not in a worker's traceback) and whether queries straddle
partitions. With qid, no query may straddle two blocks: where each query's rows are
consecutive (learning-to-rank files are written so), the partition boundaries move to the
nearest query boundary (a rechunk of neighbouring rows, no shuffle); otherwise the rows are
regrouped once with Dask's own DataFrame shuffle (on a distributed cluster its p2p method logs
two WARNING lines per shuffle, which is Dask's own reporting). Rows keep their original order
within a query either way, so ties break as on one machine.
"""
from __future__ import annotations

from dataclasses import dataclass

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import scipy.sparse as sp
from dask.sizeof import sizeof
from distributed import default_client

from aprank.validation import as_query_groups

__all__ = ["Block", "DaskData", "Survey", "DaskInputs", "as_dask_array", "dask_inputs",
           "persist_inputs", "as_dask_data", "spread"]


@dataclass
class Block:
    """One partition's rows: X (m, d) float64, y (m,) raw labels, qid (m,) or None, rows (m,)
    int64 global row numbers (positions in the input)."""

    X: np.ndarray
    y: np.ndarray
    qid: np.ndarray | None
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


@dataclass
class Survey:
    """What the client knows of y and qid before anything is persisted (X is not read)."""

    classes: np.ndarray                 # sorted distinct labels
    query_ids: np.ndarray | None     # distinct ids in order of first appearance; None: no qid
    top: np.ndarray | None           # per query, its largest label
    ends: np.ndarray | None          # where each query's rows are consecutive: the row after
    #                                     each query's last, ascending; else None
    straddling: bool                    # some query has rows in two partitions

    def lacking(self) -> np.ndarray:
        """Ids of the queries without a sample of the largest label (the relevant class, the
        estimators' ``classes_[1]``), in order of first appearance; asked only of a survey of
        inputs with qid (without, there is one query and no ids)."""
        assert self.query_ids is not None and self.top is not None, "a survey without qid"
        return self.query_ids[self.top != self.classes[-1]]


@dataclass
class DaskInputs:
    """Validated inputs, chunked alike, and their survey; nothing persisted yet."""

    X: da.Array
    y: da.Array
    qid: da.Array | None
    survey: Survey


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


def _survey_part(y, qid, start: int):
    """One partition's labels and, with qid, its queries in order of first appearance (index:
    id; columns: largest label, rows), whether each one's rows are consecutive there, and an
    error message for ids that name no query (None when they are fine)."""
    y = np.asarray(y)
    labels = np.unique(y)
    if qid is None:
        return labels, None, True, None
    qid = np.asarray(qid)
    try:
        as_query_groups(qid, qid.shape[0])
    except ValueError as exc:        # said on the client, not in a worker's traceback
        return (labels, None, False,
                f"{exc} (an index counted from row {start}, where its partition starts)")
    frame = pd.DataFrame({"qid": qid, "y": y})
    queries = frame.groupby("qid", sort=False).agg(top=("y", "max"), size=("y", "size"))
    runs = int(frame["qid"].ne(frame["qid"].shift()).sum())
    return labels, queries, runs == queries.shape[0], None


def survey(y: da.Array, qid: da.Array | None) -> Survey:
    """The :class:`Survey` of labels y and query ids qid chunked alike (one pass over them);
    a ValueError for query ids that name no query (NaN, complex, mixed types)."""
    starts = np.r_[0, np.cumsum(y.chunks[0])[:-1]]
    qs = [None] * len(starts) if qid is None else list(qid.to_delayed().ravel())
    parts = dask.compute(*[dask.delayed(_survey_part)(yb, qb, int(start))
                           for yb, qb, start in zip(y.to_delayed().ravel(), qs, starts)])
    classes = np.unique(np.concatenate([p[0] for p in parts]))
    if qid is None:
        return Survey(classes, None, None, None, False)
    for _, _, _, error in parts:
        if error is not None:
            raise ValueError(error)
    tables = [p[1] for p in parts]
    every = pd.concat(tables)
    queries = every.groupby(level=0, sort=False).agg(top=("top", "max"), size=("size", "sum"))
    seams = pd.Series(every.index)
    # consecutive: one run per query within each partition, and a query met again in the next
    # partition only as its continuation (the last query of one, the first of the next)
    consecutive = all(p[2] for p in parts) and not seams[seams.ne(seams.shift())].duplicated().any()
    ends = np.cumsum(queries["size"].to_numpy(dtype=np.int64)) if consecutive else None
    return Survey(classes, queries.index.to_numpy(), queries["top"].to_numpy(), ends,
                  bool(every.index.duplicated().any()))


def _query_chunks(chunks, ends: np.ndarray) -> tuple:
    """``chunks`` with each inner boundary moved to the nearest query end (the earlier on a
    tie): partitions of about the same sizes that no query straddles."""
    cuts = np.cumsum(chunks)[:-1]
    k = np.searchsorted(ends, cuts)         # ends[k - 1] < cut <= ends[k]
    lower = np.where(k > 0, ends[np.maximum(k - 1, 0)], 0)
    upper = ends[k]
    moved = np.where(cuts - lower <= upper - cuts, lower, upper)
    bounds = np.unique(np.r_[0, moved, ends[-1]])
    return tuple(int(c) for c in np.diff(bounds))


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


def dask_inputs(X, y, qid=None) -> DaskInputs:
    """Validate the inputs, chunk y and qid as X and survey them on the client; where queries
    straddle partitions but each one's rows are consecutive, move the boundaries to query ends
    (no shuffle). Nothing is persisted: the caller can refuse the data first."""
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
    found = survey(y, qid)
    if found.straddling and found.ends is not None:
        chunks = _query_chunks(chunks, found.ends)
        # neighbouring rows move between neighbouring partitions: the task method, never p2p
        X, y, qid = (a.rechunk((chunks,) + a.chunks[1:], method="tasks") for a in (X, y, qid))
        found = Survey(found.classes, found.query_ids, found.top, found.ends, False)
    return DaskInputs(X, y, qid, found)


def persist_inputs(inputs: DaskInputs) -> DaskData:
    """Cut the inputs into aligned blocks, persist them and regroup them by qid when queries
    still straddle partitions (see the module docstring)."""
    X, y, qid = inputs.X, inputs.y, inputs.qid
    chunks = X.chunks[0]
    token = dask.base.tokenize(X.name, y.name, None if qid is None else qid.name)
    starts = np.r_[0, np.cumsum(chunks)[:-1]].astype(np.int64)
    xs = X.to_delayed().ravel()
    ys = y.to_delayed().ravel()
    qs = [None] * len(xs) if qid is None else list(qid.to_delayed().ravel())
    blocks = spread([dask.delayed(_block)(xb, yb, qb, int(start))
                     for xb, yb, qb, start in zip(xs, ys, qs, starts)])
    grouped = inputs.survey.straddling
    if grouped:
        blocks = _regroup(blocks)
    return DaskData(blocks, int(X.shape[0]), int(X.shape[1]), inputs.survey.classes, token,
                    grouped)


def as_dask_data(X, y, qid=None) -> DaskData:
    """Validate, survey and persist the inputs (:func:`dask_inputs`, then
    :func:`persist_inputs`)."""
    return persist_inputs(dask_inputs(X, y, qid))


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
