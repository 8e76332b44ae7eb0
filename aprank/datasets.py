"""Loaders for the small real data sets used by the experiments.

The data are *not* part of this repository; they are read from a folder
(``shared/data``) that lives next to the project.

Where the data are found (:func:`data_dir`)
-------------------------------------------
1. The environment variable ``APRANK_DATA``, if it is set and not empty.
   If that folder does not exist, :class:`FileNotFoundError` is raised
   (there is no silent fallback).
2. Otherwise ``../shared/data`` relative to the current working directory,
   if it exists.
3. Otherwise ``<repository root>/../shared/data``, where the repository root
   is the parent of the ``aprank`` package directory (in-place checkouts).

If none exists, :class:`FileNotFoundError` tells how to set ``APRANK_DATA``.

Data sets
---------
HJA birdsong (:func:`load_hja_birdsong`, folder ``mil/birds_hja``)
    Briggs, Fern and Raich, KDD 2012. Field recordings from the H. J. Andrews
    forest: 548 recordings (bags) cut into 10232 segments, each described by
    38 features. Each segment has a label, either a species 1..13 or -1
    (unlabelled). The loader keeps only the labelled segments (4998 of them).
    Provenance / licence: MILSurvey repository (CRAPL v0).

HJA birdsong, recording level (:func:`load_hja_recordings`, folder ``mil/birds_hja``)
    The same 548 recordings as multi-label examples: 76 features (mean, then
    max of the 38 segment features over all segments of the recording) and
    the recording's set of species (1..5 of the 13) from
    ``hja_birdsong_bag_labels.txt``.

HJA birdsong, multiple-instance (:func:`load_hja_bags`, folder ``mil/birds_hja``)
    All 10232 segments (labelled or not) as rows of :class:`MILData`, grouped
    into the 548 recordings (bags); one binary problem per species: a bag is
    positive when the species is in its label set. A positive bag need not
    contain a segment labelled with the species (segments may be unlabelled).

Corel fox / tiger / elephant (:func:`load_mil`, folder ``mil/fox_tiger_elephant``)
    Andrews, Tsochantaridis and Hofmann, NIPS 2002: 200 image bags each
    (100 positive), 230 features per segment; 1320 / 1220 / 1391 segments.
    Provenance / licence: MILSurvey repository (CRAPL v0).

MUSK1 (:func:`load_mil`, folder ``mil/musk_uci``)
    UCI MUSK "clean1" (Dietterich, Lathrop and Lozano-Perez 1997): 476
    conformations (rows) of 92 molecules (bags, 47 musk), 166 features.

Yahoo! learning-to-rank sample (:func:`load_yahoo_ltr`, folder ``ltr/yahoo_ltr_sample_lightgbm``)
    300 features in [0, 1], graded relevance 0..4; train 3005 documents in
    201 queries, test 768 documents in 50 queries. Queries are stored as
    contiguous blocks of rows, with one query size per line in
    ``rank.<split>.query``.
    Provenance / licence: LightGBM's examples/lambdarank (MIT repo); its
    maintainers describe it as sampled from the Yahoo! Learning to Rank data.

Every loader takes ``verify=False``; with ``verify=True`` the files it reads
are checked against ``SHA256SUMS`` in the data folder first (a mismatch
raises :class:`ValueError`).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DATA_ENV_VAR",
    "data_dir",
    "HJABirdsong",
    "load_hja_birdsong",
    "HJARecordings",
    "load_hja_recordings",
    "recording_split",
    "MIL_SETS",
    "MILData",
    "load_mil",
    "load_hja_bags",
    "YahooLTR",
    "load_yahoo_ltr",
]

DATA_ENV_VAR = "APRANK_DATA"

_HINT = (
    "Set the environment variable APRANK_DATA to the folder holding the shared data "
    "(the one with README.md and SHA256SUMS), e.g. `export APRANK_DATA=/path/to/shared/data`."
)

_HJA_DIR = "mil/birds_hja"
_HJA_FEATURES = "hja_birdsong_features.txt"
_HJA_INSTANCE_LABELS = "hja_birdsong_instance_labels.txt"
_HJA_BAG_LABELS = "hja_birdsong_bag_labels.txt"
_HJA_CLASS_NAMES = "hja_birdsong_class_names.txt"
_HJA_N_FEATURES = 38
_HJA_N_CLASSES = 13

_FTE_DIR = "mil/fox_tiger_elephant"
_FTE_SETS = ("fox", "tiger", "elephant")
_FTE_N_FEATURES = 230
_MUSK1_FILE = "mil/musk_uci/clean1.data"
_MUSK_N_FEATURES = 166

MIL_SETS = _FTE_SETS + ("musk1",)
"""Names accepted by :func:`load_mil`."""

_YAHOO_DIR = "ltr/yahoo_ltr_sample_lightgbm"
_YAHOO_N_FEATURES = 300
_YAHOO_SPLITS = ("train", "test")


# --------------------------------------------------------------------------- locating the data
def _repo_root() -> Path:
    """Parent of the ``aprank`` package directory."""
    return Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """Return the folder holding the shared data, as a resolved :class:`pathlib.Path`.

    See the module docstring for the rule (``APRANK_DATA``, then
    ``./../shared/data``, then ``<repository root>/../shared/data``).

    Raises
    ------
    FileNotFoundError
        If the folder does not exist; the message says how to set ``APRANK_DATA``.
    """
    env = os.environ.get(DATA_ENV_VAR, "")
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(
                f"{DATA_ENV_VAR}={env!r} is not an existing folder. {_HINT}"
            )
        return path.resolve()
    candidates = [Path.cwd() / ".." / "shared" / "data", _repo_root().parent / "shared" / "data"]
    for path in candidates:
        if path.is_dir():
            return path.resolve()
    tried = ", ".join(str(p) for p in candidates)
    raise FileNotFoundError(f"Shared data folder not found (tried {tried}). {_HINT}")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _verify(root: Path, relpaths) -> None:
    """Check ``relpaths`` (relative to ``root``) against ``root/SHA256SUMS``."""
    sums_file = root / "SHA256SUMS"
    if not sums_file.is_file():
        raise FileNotFoundError(f"{sums_file} not found; cannot verify checksums.")
    expected = {}
    for line in sums_file.read_text().splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            expected[parts[1].strip().lstrip("*")] = parts[0].lower()
    for rel in relpaths:
        if rel not in expected:
            raise ValueError(f"{rel} has no checksum listed in {sums_file}.")
        actual = _sha256(root / rel)
        if actual != expected[rel]:
            raise ValueError(
                f"Checksum mismatch for {root / rel}: expected {expected[rel]}, got {actual}."
            )


# --------------------------------------------------------------------------- HJA birdsong
@dataclass(frozen=True)
class HJABirdsong:
    """Labelled segments of the HJA birdsong data (one row per segment).

    Attributes
    ----------
    X : ndarray of shape (n_segments, 38), float64
        Segment features, in the file's column order (f1..f38). The columns are
        on very different scales (some are below 1e-3, some above 1e4), so
        standardise before fitting linear models.
    species : ndarray of shape (n_segments,), int64
        Species label of each segment, in 1..13.
    recording : ndarray of shape (n_segments,), int64
        Recording (bag) id of each segment, in 1..548. Segments of the same
        recording are not independent: split by recording
        (see :func:`recording_split`).
    class_names : tuple of 13 str
        ``class_names[k - 1]`` names species ``k``, e.g. ``"BRCR - Brown Creeper"``.
    """

    X: np.ndarray
    species: np.ndarray
    recording: np.ndarray
    class_names: tuple

    @property
    def n_classes(self) -> int:
        """Number of species (13)."""
        return len(self.class_names)


def _read_csv_with_header(path: Path, ncols: int) -> np.ndarray:
    """Read a comma-separated numeric file with one header line; check the column count."""
    arr = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    if arr.shape[1] != ncols:
        raise ValueError(f"{path}: expected {ncols} columns, found {arr.shape[1]}.")
    return arr


def _as_int64(values: np.ndarray, what: str) -> np.ndarray:
    out = np.asarray(values).astype(np.int64)
    if not np.array_equal(out, values):
        raise ValueError(f"{what}: non-integer values found.")
    return out


def _read_hja_class_names(path: Path) -> tuple:
    names = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        k, _, name = line.partition("\t")
        if not name:
            k, _, name = line.partition(" ")
        names[int(k)] = name.strip()
    if sorted(names) != list(range(1, _HJA_N_CLASSES + 1)):
        raise ValueError(f"{path}: expected class ids 1..{_HJA_N_CLASSES}, found {sorted(names)}.")
    return tuple(names[k] for k in range(1, _HJA_N_CLASSES + 1))


def _hja_paths(names, verify: bool) -> list:
    """Paths of the HJA files ``names``, checked against SHA256SUMS first with ``verify``."""
    root = data_dir()
    rels = [f"{_HJA_DIR}/{name}" for name in names]
    if verify:
        _verify(root, rels)
    return [root / r for r in rels]


def load_hja_birdsong(*, verify: bool = False) -> HJABirdsong:
    """Load the labelled segments of the HJA birdsong data.

    Reads ``mil/birds_hja/hja_birdsong_features.txt`` (header, then
    ``bag_id, f1..f38``), ``hja_birdsong_instance_labels.txt`` (header, then
    ``bag_id, label``, aligned row by row with the features) and
    ``hja_birdsong_class_names.txt``. Segments with label -1 (unlabelled) are
    dropped.

    Parameters
    ----------
    verify : bool, default False
        Check the files against ``SHA256SUMS`` first.

    Raises
    ------
    FileNotFoundError
        If the data folder is missing (see :func:`data_dir`).
    ValueError
        If the files disagree (row counts, bag ids row by row), labels are out
        of range, or (with ``verify=True``) a checksum does not match.
    """
    feat_path, lab_path, names_path = _hja_paths(
        (_HJA_FEATURES, _HJA_INSTANCE_LABELS, _HJA_CLASS_NAMES), verify)
    feats, bag_f, label = _read_hja_segments(feat_path, lab_path)
    keep = label != -1
    X = np.ascontiguousarray(feats[keep, 1:], dtype=np.float64)
    return HJABirdsong(
        X=X,
        species=label[keep],
        recording=bag_f[keep],
        class_names=_read_hja_class_names(names_path),
    )


def _read_hja_segments(feat_path: Path, lab_path: Path):
    """Read the HJA features and instance labels of all segments; check they agree.

    Returns ``(feats, bag, label)``: the raw feature array (column 0 is the bag
    id), the int64 bag id and the int64 label (-1 or 1..13) of every segment.
    """
    feats = _read_csv_with_header(feat_path, 1 + _HJA_N_FEATURES)
    labs = _read_csv_with_header(lab_path, 2)
    if feats.shape[0] != labs.shape[0]:
        raise ValueError(
            f"{feat_path.name} has {feats.shape[0]} rows but {lab_path.name} has {labs.shape[0]}."
        )
    bag_f = _as_int64(feats[:, 0], feat_path.name + " bag_id")
    bag_l = _as_int64(labs[:, 0], lab_path.name + " bag_id")
    bad = np.flatnonzero(bag_f != bag_l)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"Bag ids disagree between {feat_path.name} and {lab_path.name} on {bad.size} rows "
            f"(first at data row {i}: {bag_f[i]} vs {bag_l[i]})."
        )
    label = _as_int64(labs[:, 1], lab_path.name + " label")
    species = label[label != -1]
    if species.size and (species.min() < 1 or species.max() > _HJA_N_CLASSES):
        raise ValueError(f"{lab_path.name}: labels outside -1, 1..{_HJA_N_CLASSES}.")
    return feats, bag_f, label


@dataclass(frozen=True)
class HJARecordings:
    """The HJA birdsong data at the recording level (one row per recording, multi-label).

    Attributes
    ----------
    X : ndarray of shape (n_recordings, 76), float64
        Columns 0..37: mean of the 38 segment features (f1..f38) over all
        segments of the recording, labelled or not; columns 38..75: their
        maximum over the same segments. Scales differ widely, as in
        :attr:`HJABirdsong.X`.
    Y : ndarray of shape (n_recordings, 13), bool
        ``Y[r, k - 1]`` is True when species ``k`` is in the label set of
        recording ``recording[r]``. Every row has at least one True.
    recording : ndarray of shape (n_recordings,), int64
        Recording (bag) ids, ascending.
    class_names : tuple of 13 str
        ``class_names[k - 1]`` names species ``k``.
    """

    X: np.ndarray
    Y: np.ndarray
    recording: np.ndarray
    class_names: tuple

    @property
    def n_classes(self) -> int:
        """Number of species (13)."""
        return len(self.class_names)


def _read_hja_bag_labels(path: Path) -> dict:
    """Read ``bag_id,species,species,...`` lines (after one header line) into {bag: set}."""
    bags = {}
    for lineno, line in enumerate(path.read_text().splitlines()[1:], start=2):
        try:
            parts = [int(tok) for tok in line.split(",") if tok.strip()]
        except ValueError:
            raise ValueError(f"{path.name} line {lineno}: non-integer entry in {line!r}.") from None
        if not parts:
            continue
        bag, species = parts[0], set(parts[1:])
        if bag in bags:
            raise ValueError(f"{path.name} line {lineno}: bag id {bag} appears more than once.")
        if not species:
            raise ValueError(f"{path.name} line {lineno}: bag {bag} has an empty label set.")
        bad = sorted(k for k in species if not 1 <= k <= _HJA_N_CLASSES)
        if bad:
            raise ValueError(
                f"{path.name} line {lineno}: bag {bag} has species {bad} "
                f"outside 1..{_HJA_N_CLASSES}."
            )
        bags[bag] = species
    return bags


def _check_hja_bag_coverage(recording, bags: dict, feat_path: Path, bag_path: Path) -> None:
    """Every bag with segments has a bag-label line, and every such line has segments."""
    no_segments = sorted(set(bags) - set(recording.tolist()))
    if no_segments:
        raise ValueError(
            f"{bag_path.name} lists {len(no_segments)} bags with no segments in "
            f"{feat_path.name} (first: {no_segments[0]})."
        )
    no_labels = sorted(set(recording.tolist()) - set(bags))
    if no_labels:
        raise ValueError(
            f"{len(no_labels)} bags with segments in {feat_path.name} have no line in "
            f"{bag_path.name} (first: {no_labels[0]})."
        )


def load_hja_recordings(*, verify: bool = False) -> HJARecordings:
    """Load the HJA birdsong data as one multi-label example per recording.

    Reads ``mil/birds_hja/hja_birdsong_features.txt`` (header, then
    ``bag_id, f1..f38``), ``hja_birdsong_bag_labels.txt`` (header, then
    ``bag_id,species,species,...`` with one or more species per line) and
    ``hja_birdsong_class_names.txt``. Each recording's features are the mean
    and the max of its segment features over all its segments (labelled or not).

    Parameters
    ----------
    verify : bool, default False
        Check the files against ``SHA256SUMS`` first.

    Raises
    ------
    FileNotFoundError
        If the data folder is missing (see :func:`data_dir`).
    ValueError
        If the bag-label file repeats a bag id, has a bag with an empty label
        set or species outside 1..13, or lists a bag without segments; if a
        bag with segments has no bag-label line; or (with ``verify=True``) a
        checksum does not match.
    """
    feat_path, bag_path, names_path = _hja_paths(
        (_HJA_FEATURES, _HJA_BAG_LABELS, _HJA_CLASS_NAMES), verify)

    feats = _read_csv_with_header(feat_path, 1 + _HJA_N_FEATURES)
    bag_f = _as_int64(feats[:, 0], feat_path.name + " bag_id")
    bags = _read_hja_bag_labels(bag_path)

    recording, counts = np.unique(bag_f, return_counts=True)
    _check_hja_bag_coverage(recording, bags, feat_path, bag_path)

    order = np.argsort(bag_f, kind="stable")
    seg = feats[order, 1:]
    start = np.concatenate(([0], np.cumsum(counts)[:-1]))
    mean = np.add.reduceat(seg, start, axis=0) / counts[:, None]
    X = np.ascontiguousarray(np.hstack([mean, np.maximum.reduceat(seg, start, axis=0)]))
    Y = np.zeros((recording.size, _HJA_N_CLASSES), dtype=bool)
    for r, bag in enumerate(recording.tolist()):
        Y[r, [k - 1 for k in bags[bag]]] = True
    return HJARecordings(
        X=X,
        Y=Y,
        recording=recording,
        class_names=_read_hja_class_names(names_path),
    )


def recording_split(recording, test_fraction: float = 0.3, seed: int = 0):
    """Split rows into train / test so that every recording lies on one side only.

    A random ``round(test_fraction * n_recordings)`` of the distinct recordings
    (at least one, and at most all but one when there are two or more) goes
    to the test side. The fraction is of *recordings*, not of rows.
    Deterministic for a given ``seed`` and set of recordings.

    Parameters
    ----------
    recording : array-like of shape (n,)
        Recording (bag) id of each row, e.g. :attr:`HJABirdsong.recording`.
    test_fraction : float in (0, 1), default 0.3
    seed : int, default 0

    Returns
    -------
    train, test : ndarray of bool, shape (n,)
        Complementary masks.
    """
    recording = np.asarray(recording)
    if recording.ndim != 1:
        raise ValueError("recording must be one-dimensional.")
    if not 0.0 < float(test_fraction) < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}.")
    recs = np.unique(recording)
    n_test = int(round(float(test_fraction) * recs.size))
    if recs.size >= 2:
        n_test = min(max(n_test, 1), recs.size - 1)
    rng = np.random.default_rng(seed)
    test_recs = rng.permutation(recs)[:n_test]
    test = np.isin(recording, test_recs)
    return ~test, test


# --------------------------------------------------------------------------- multiple-instance sets
@dataclass(frozen=True)
class MILData:
    """A binary multiple-instance data set (one row per instance).

    Attributes
    ----------
    X : ndarray of shape (n_instances, n_features), float64
        Instance features, in the file's row and column order.
    y : ndarray of shape (n_instances,), int64
        Label of the instance's bag, copied to each of its rows: 1 for a
        positive bag, 0 for a negative one. Constant within a bag.
    bags : ndarray of shape (n_instances,), int64
        Bag id of each row. Ids are as in the source (1..200 for
        fox / tiger / elephant, recording ids 1..548 for HJA) or, for MUSK1,
        0, 1, ... in order of first appearance of the molecule name. Rows of
        a bag need not be contiguous in general.
    name : str
        Name of the set, e.g. ``"fox"``, ``"musk1"`` or ``"hja-3"``.
    instance_labels : ndarray of shape (n_instances,), int64, or None
        Per-instance labels where the source has them (HJA: the segment's
        species 1..13, or -1 for an unlabelled segment); None otherwise.
    """

    X: np.ndarray
    y: np.ndarray
    bags: np.ndarray
    name: str
    instance_labels: np.ndarray | None = None

    @property
    def n_bags(self) -> int:
        """Number of distinct bags."""
        return int(np.unique(self.bags).size)


def _check_bag_labels(y: np.ndarray, bags: np.ndarray, what: str, names=None) -> None:
    """Raise ValueError naming the first bag whose rows carry more than one label.

    With ``names``, bag ``b`` is named ``names[b]`` in the message.
    """
    ids, inv = np.unique(bags, return_inverse=True)
    lo = np.full(ids.size, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(ids.size, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(lo, inv, y)
    np.maximum.at(hi, inv, y)
    bad = np.flatnonzero(lo != hi)
    if bad.size:
        first = int(ids[bad[0]])
        label = repr(names[first]) if names is not None else str(first)
        raise ValueError(
            f"{what}: {bad.size} bags have more than one label "
            f"(first: bag {label})."
        )


def _load_fte(path: Path, name: str) -> MILData:
    """Read one of the fox / tiger / elephant ``.npz`` files."""
    with np.load(path, allow_pickle=False) as z:
        missing = sorted({"X", "y", "bag"} - set(z.files))
        if missing:
            raise ValueError(f"{path.name}: missing arrays {missing}.")
        X = np.asarray(z["X"], dtype=np.float64)
        y_raw = np.asarray(z["y"]).ravel()
        bag_raw = np.asarray(z["bag"]).ravel()
    if X.ndim != 2 or X.shape[1] != _FTE_N_FEATURES:
        raise ValueError(
            f"{path.name}: expected X of shape (n, {_FTE_N_FEATURES}), found {X.shape}."
        )
    if not (y_raw.shape[0] == bag_raw.shape[0] == X.shape[0]):
        raise ValueError(
            f"{path.name}: X has {X.shape[0]} rows but y has {y_raw.shape[0]} and "
            f"bag {bag_raw.shape[0]}."
        )
    y_int = _as_int64(y_raw, path.name + " y")
    bad = sorted(set(np.unique(y_int).tolist()) - {-1, 0, 1})
    if bad:
        raise ValueError(f"{path.name}: labels must be +1 / -1 (or 1 / 0), found {bad}.")
    y = (y_int == 1).astype(np.int64)
    bags = _as_int64(bag_raw, path.name + " bag")
    _check_bag_labels(y, bags, path.name)
    return MILData(X=np.ascontiguousarray(X), y=y, bags=bags, name=name)


def _load_musk(path: Path, name: str) -> MILData:
    """Read a UCI MUSK ``clean*.data`` file (molecule, conformation, features, class)."""
    ncols = 2 + _MUSK_N_FEATURES + 1
    ids = {}
    bag_list, rows, labels = [], [], []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        parts = [tok.strip() for tok in line.split(",")]
        if len(parts) != ncols:
            raise ValueError(
                f"{path.name} line {lineno}: expected {ncols} fields, found {len(parts)}."
            )
        try:
            values = [float(tok) for tok in parts[2:]]
        except ValueError:
            raise ValueError(f"{path.name} line {lineno}: non-numeric feature or class.") from None
        if values[-1] not in (0.0, 1.0):
            raise ValueError(
                f"{path.name} line {lineno}: class must be 0 or 1, found {parts[-1]!r}."
            )
        bag_list.append(ids.setdefault(parts[0], len(ids)))
        rows.append(values[:-1])
        labels.append(int(values[-1]))
    if not rows:
        raise ValueError(f"{path.name}: no data lines.")
    y = np.array(labels, dtype=np.int64)
    bags = np.array(bag_list, dtype=np.int64)
    _check_bag_labels(y, bags, path.name, names=list(ids))
    X = np.array(rows, dtype=np.float64)
    return MILData(X=X, y=y, bags=bags, name=name)


def load_mil(name: str, *, verify: bool = False) -> MILData:
    """Load a classic binary multiple-instance set by name.

    ``"fox"``, ``"tiger"``, ``"elephant"``
        Read ``mil/fox_tiger_elephant/<name>.npz`` (arrays ``X`` of shape
        (n, 230), ``y`` with the bag label copied to each instance, +1/-1 or
        1/0, and ``bag`` with the bag id). 200 bags, 100 positive; 1320 / 1220
        / 1391 instances.
    ``"musk1"``
        Read ``mil/musk_uci/clean1.data`` (CSV lines ``molecule_name,
        conformation_name, f1..f166, class`` with class 1. or 0.). Bags are
        molecules, numbered 0, 1, ... in order of first appearance: 476
        instances in 92 bags, 47 positive.

    Parameters
    ----------
    name : {"fox", "tiger", "elephant", "musk1"}
        See :data:`MIL_SETS`.
    verify : bool, default False
        Check the file against ``SHA256SUMS`` first.

    Returns
    -------
    MILData
        With ``y`` in {0, 1} and ``instance_labels=None``.

    Raises
    ------
    FileNotFoundError
        If the data folder is missing (see :func:`data_dir`).
    ValueError
        Unknown ``name``; a malformed file (shapes, field counts, labels other
        than +1/-1/0 or class 0/1); a bag whose rows carry different labels
        (the message names the bag); or (with ``verify=True``) a checksum
        mismatch.
    """
    if name not in MIL_SETS:
        raise ValueError(f"name must be one of {MIL_SETS}, got {name!r}.")
    root = data_dir()
    rel = _MUSK1_FILE if name == "musk1" else f"{_FTE_DIR}/{name}.npz"
    if verify:
        _verify(root, [rel])
    path = root / rel
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found (data folder {root}).")
    if name == "musk1":
        return _load_musk(path, name)
    return _load_fte(path, name)


def load_hja_bags(species: int, *, verify: bool = False) -> MILData:
    """Load the HJA birdsong data as a binary multiple-instance set for one species.

    Every segment (labelled or not) is a row; recordings are bags. A bag is
    positive when ``species`` is in its label set
    (``hja_birdsong_bag_labels.txt``). Reads ``mil/birds_hja/``
    ``hja_birdsong_features.txt``, ``hja_birdsong_instance_labels.txt`` and
    ``hja_birdsong_bag_labels.txt``.

    Every segment labelled ``species`` lies in a positive bag, but a positive
    bag need not contain one (its segments of that species may be unlabelled).

    Parameters
    ----------
    species : int in 1..13
    verify : bool, default False
        Check the files against ``SHA256SUMS`` first.

    Returns
    -------
    MILData
        ``X`` of shape (10232, 38) on the real data, ``bags`` the recording
        ids, ``instance_labels`` the segment labels (-1 or 1..13) and
        ``name == f"hja-{species}"``.

    Raises
    ------
    FileNotFoundError
        If the data folder is missing (see :func:`data_dir`).
    ValueError
        ``species`` outside 1..13; files that disagree (row counts, bag ids,
        bags with segments but no bag-label line or the reverse, labels out of
        range); or (with ``verify=True``) a checksum mismatch.
    """
    if (isinstance(species, bool) or not isinstance(species, (int, np.integer))
            or not 1 <= int(species) <= _HJA_N_CLASSES):
        raise ValueError(f"species must be an integer in 1..{_HJA_N_CLASSES}, got {species!r}.")
    species = int(species)
    feat_path, lab_path, bag_path = _hja_paths(
        (_HJA_FEATURES, _HJA_INSTANCE_LABELS, _HJA_BAG_LABELS), verify)
    feats, bag_f, label = _read_hja_segments(feat_path, lab_path)
    bags = _read_hja_bag_labels(bag_path)
    _check_hja_bag_coverage(np.unique(bag_f), bags, feat_path, bag_path)
    positive = np.array(sorted(b for b, s in bags.items() if species in s), dtype=np.int64)
    y = np.isin(bag_f, positive).astype(np.int64)
    return MILData(
        X=np.ascontiguousarray(feats[:, 1:], dtype=np.float64),
        y=y,
        bags=bag_f,
        name=f"hja-{species}",
        instance_labels=label,
    )


# --------------------------------------------------------------------------- Yahoo LTR sample
@dataclass(frozen=True)
class YahooLTR:
    """One split of the Yahoo! learning-to-rank sample.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_docs, 300), float64
        Features (values in [0, 1]; absent entries are 0). ``indices`` and
        ``indptr`` are int32.
    relevance : ndarray of shape (n_docs,), int64
        Graded relevance, 0..4.
    qid : ndarray of shape (n_docs,), int64
        Query id of each row: 0, 1, ... in file order. Rows of a query are
        contiguous.
    """

    X: sp.csr_matrix
    relevance: np.ndarray
    qid: np.ndarray

    @property
    def n_queries(self) -> int:
        """Number of queries in the split."""
        return int(np.unique(self.qid).size)


def load_yahoo_ltr(split: str, *, verify: bool = False) -> YahooLTR:
    """Load ``split`` ("train" or "test") of the Yahoo! learning-to-rank sample.

    Reads ``ltr/yahoo_ltr_sample_lightgbm/rank.<split>`` (svmlight, one-based
    feature indices 1..300, no ``qid:``) and ``rank.<split>.query`` (one query
    size per line; rows are contiguous per query).

    Parameters
    ----------
    split : {"train", "test"}
    verify : bool, default False
        Check the files against ``SHA256SUMS`` first.

    Raises
    ------
    FileNotFoundError
        If the data folder is missing (see :func:`data_dir`).
    ValueError
        Unknown split, query sizes that do not sum to the number of rows,
        non-integer relevance, or (with ``verify=True``) a checksum mismatch.
    """
    from sklearn.datasets import load_svmlight_file

    if split not in _YAHOO_SPLITS:
        raise ValueError(f"split must be one of {_YAHOO_SPLITS}, got {split!r}.")
    root = data_dir()
    rels = [f"{_YAHOO_DIR}/rank.{split}", f"{_YAHOO_DIR}/rank.{split}.query"]
    if verify:
        _verify(root, rels)
    data_path, query_path = (root / r for r in rels)

    X, y = load_svmlight_file(
        str(data_path), n_features=_YAHOO_N_FEATURES, dtype=np.float64, zero_based=False
    )
    X = sp.csr_matrix(X)
    X = sp.csr_matrix(
        (
            np.asarray(X.data, dtype=np.float64),
            np.asarray(X.indices, dtype=np.int32),
            np.asarray(X.indptr, dtype=np.int32),
        ),
        shape=(X.shape[0], _YAHOO_N_FEATURES),
    )
    relevance = _as_int64(y, data_path.name + " relevance")

    sizes = np.array(
        [int(tok) for tok in query_path.read_text().split()], dtype=np.int64
    )
    if sizes.size == 0 or (sizes <= 0).any():
        raise ValueError(f"{query_path.name}: query sizes must be positive integers.")
    if int(sizes.sum()) != X.shape[0]:
        raise ValueError(
            f"{query_path.name}: query sizes sum to {int(sizes.sum())} but "
            f"{data_path.name} has {X.shape[0]} rows."
        )
    qid = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    return YahooLTR(X=X, relevance=relevance, qid=qid)
