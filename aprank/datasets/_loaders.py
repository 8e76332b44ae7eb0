"""The loaders of :mod:`aprank.datasets`: each reads its files from the data home (see
``_files``), downloading what is missing, and checks that they agree with each other."""
from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from aprank.datasets._files import fetch_file, get_data_home

__all__ = [
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
_FTE_ZIP = f"{_FTE_DIR}/fte_prtools_mat.zip"
_MUSK1_FILE = "mil/musk_uci/clean1.data"
_MUSK_N_FEATURES = 166

MIL_SETS = _FTE_SETS + ("musk1",)
"""Names accepted by :func:`load_mil`."""

_YAHOO_DIR = "ltr/yahoo_ltr_sample_lightgbm"
_YAHOO_N_FEATURES = 300
_YAHOO_SPLITS = ("train", "test")


# --------------------------------------------------------------------------- fetching
def _fetch(rels, data_home, download_if_missing: bool, verify: bool) -> list:
    """Paths of the data files ``rels`` in the data home, downloaded first where missing."""
    return [fetch_file(rel, data_home=data_home, download_if_missing=download_if_missing,
                       verify=verify) for rel in rels]


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


def _hja_paths(names, data_home, download_if_missing: bool, verify: bool) -> list:
    """Paths of the HJA files ``names`` (see :func:`_fetch`)."""
    return _fetch([f"{_HJA_DIR}/{name}" for name in names], data_home, download_if_missing,
                  verify)


def load_hja_birdsong(*, data_home=None, download_if_missing: bool = True,
                      verify: bool = False) -> HJABirdsong:
    """Load the labelled segments of the HJA birdsong data.

    Reads ``mil/birds_hja/hja_birdsong_features.txt`` (header, then
    ``bag_id, f1..f38``), ``hja_birdsong_instance_labels.txt`` (header, then
    ``bag_id, label``, aligned row by row with the features) and
    ``hja_birdsong_class_names.txt``. Segments with label -1 (unlabelled) are
    dropped.

    Parameters
    ----------
    data_home : str or Path, optional
        Folder to read from and download into (see :func:`get_data_home`).
    download_if_missing : bool, default True
        Download a missing file from its public source (its SHA-256 checked).
    verify : bool, default False
        Also check the SHA-256 of files already in the data home.

    Raises
    ------
    DataUnavailableError
        A file is missing and cannot be downloaded (a :class:`FileNotFoundError`).
    ValueError
        If the files disagree (row counts, bag ids row by row), labels are out
        of range, or (with ``verify=True``) a checksum does not match.
    """
    feat_path, lab_path, names_path = _hja_paths(
        (_HJA_FEATURES, _HJA_INSTANCE_LABELS, _HJA_CLASS_NAMES), data_home, download_if_missing,
        verify)
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


def load_hja_recordings(*, data_home=None, download_if_missing: bool = True,
                        verify: bool = False) -> HJARecordings:
    """Load the HJA birdsong data as one multi-label example per recording.

    Reads ``mil/birds_hja/hja_birdsong_features.txt`` (header, then
    ``bag_id, f1..f38``), ``hja_birdsong_bag_labels.txt`` (header, then
    ``bag_id,species,species,...`` with one or more species per line) and
    ``hja_birdsong_class_names.txt``. Each recording's features are the mean
    and the max of its segment features over all its segments (labelled or not).

    Parameters
    ----------
    data_home : str or Path, optional
        Folder to read from and download into (see :func:`get_data_home`).
    download_if_missing : bool, default True
        Download a missing file from its public source (its SHA-256 checked).
    verify : bool, default False
        Also check the SHA-256 of files already in the data home.

    Raises
    ------
    DataUnavailableError
        A file is missing and cannot be downloaded (a :class:`FileNotFoundError`).
    ValueError
        If the bag-label file repeats a bag id, has a bag with an empty label
        set or species outside 1..13, or lists a bag without segments; if a
        bag with segments has no bag-label line; or (with ``verify=True``) a
        checksum does not match.
    """
    feat_path, bag_path, names_path = _hja_paths(
        (_HJA_FEATURES, _HJA_BAG_LABELS, _HJA_CLASS_NAMES), data_home, download_if_missing, verify)

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
        The fraction of the recordings in the test split.
    seed : int, default 0
        The random seed of the split.

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


def _fte_arrays_from_mat(zip_path: Path, name: str) -> dict:
    """``X``, ``y`` (1 positive, 0 negative) and ``bag`` of ``<name>.mat`` in the PRTools zip.

    The file holds a PRTools dataset object: ``data`` (instances x features), ``nlab`` (the
    index, from 1, of each row's label in ``lablist``: negative, positive) and ``ident.milbag``
    (the bag id of each row).
    """
    from scipy.io import loadmat

    member = f"{name}.mat"
    with zipfile.ZipFile(zip_path) as z:
        if member not in z.namelist():
            raise ValueError(f"{zip_path.name}: no {member} (found {sorted(z.namelist())}).")
        x = loadmat(io.BytesIO(z.read(member)))["x"][0, 0]
    names = [str(n).strip() for n in np.asarray(x["lablist"][0, 0]).ravel()]
    if names != ["negative", "positive"]:
        raise ValueError(f"{zip_path.name}:{member}: expected labels negative, positive; "
                         f"found {names}.")
    return {"X": x["data"], "y": np.asarray(x["nlab"]).ravel() - 1,
            "bag": np.asarray(x["ident"][0, 0]["milbag"]).ravel()}


def _fte_data(arrays: dict, what: str, name: str) -> MILData:
    """Check the arrays of one of fox / tiger / elephant (``what`` names their file)."""
    missing = sorted({"X", "y", "bag"} - set(arrays))
    if missing:
        raise ValueError(f"{what}: missing arrays {missing}.")
    X = np.asarray(arrays["X"], dtype=np.float64)
    y_raw = np.asarray(arrays["y"]).ravel()
    bag_raw = np.asarray(arrays["bag"]).ravel()
    if X.ndim != 2 or X.shape[1] != _FTE_N_FEATURES:
        raise ValueError(
            f"{what}: expected X of shape (n, {_FTE_N_FEATURES}), found {X.shape}."
        )
    if not (y_raw.shape[0] == bag_raw.shape[0] == X.shape[0]):
        raise ValueError(
            f"{what}: X has {X.shape[0]} rows but y has {y_raw.shape[0]} and "
            f"bag {bag_raw.shape[0]}."
        )
    y_int = _as_int64(y_raw, what + " y")
    bad = sorted(set(np.unique(y_int).tolist()) - {-1, 0, 1})
    if bad:
        raise ValueError(f"{what}: labels must be +1 / -1 (or 1 / 0), found {bad}.")
    y = (y_int == 1).astype(np.int64)
    bags = _as_int64(bag_raw, what + " bag")
    _check_bag_labels(y, bags, what)
    return MILData(X=np.ascontiguousarray(X), y=y, bags=bags, name=name)


def _load_musk(path: Path, name: str) -> MILData:
    """Read a UCI MUSK ``clean*.data`` file (molecule, conformation, features, class)."""
    ncols = 2 + _MUSK_N_FEATURES + 1
    ids: dict[str, int] = {}
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


def load_mil(name: str, *, data_home=None, download_if_missing: bool = True,
             verify: bool = False) -> MILData:
    """Load a classic binary multiple-instance set by name.

    ``"fox"``, ``"tiger"``, ``"elephant"``
        Read ``mil/fox_tiger_elephant/<name>.npz`` (arrays ``X`` of shape
        (n, 230), ``y`` with the bag label copied to each instance, +1/-1 or
        1/0, and ``bag`` with the bag id). 200 bags, 100 positive; 1320 / 1220
        / 1391 instances. Without the ``.npz`` (it has no public copy), read
        ``<name>.mat`` from ``mil/fox_tiger_elephant/fte_prtools_mat.zip``, the
        published PRTools file the ``.npz`` files were made from (the same arrays).
    ``"musk1"``
        Read ``mil/musk_uci/clean1.data`` (CSV lines ``molecule_name,
        conformation_name, f1..f166, class`` with class 1. or 0.). Bags are
        molecules, numbered 0, 1, ... in order of first appearance: 476
        instances in 92 bags, 47 positive.

    Parameters
    ----------
    name : {"fox", "tiger", "elephant", "musk1"}
        See :data:`MIL_SETS`.
    data_home : str or Path, optional
        Folder to read from and download into (see :func:`get_data_home`).
    download_if_missing : bool, default True
        Download a missing file from its public source (its SHA-256 checked).
    verify : bool, default False
        Also check the SHA-256 of files already in the data home.

    Returns
    -------
    MILData
        With ``y`` in {0, 1} and ``instance_labels=None``.

    Raises
    ------
    DataUnavailableError
        A file is missing and cannot be downloaded (a :class:`FileNotFoundError`).
    ValueError
        Unknown ``name``; a malformed file (shapes, field counts, labels other
        than +1/-1/0 or class 0/1); a bag whose rows carry different labels
        (the message names the bag); or (with ``verify=True``) a checksum
        mismatch.
    """
    if name not in MIL_SETS:
        raise ValueError(f"name must be one of {MIL_SETS}, got {name!r}.")
    if name == "musk1":
        (path,) = _fetch([_MUSK1_FILE], data_home, download_if_missing, verify)
        return _load_musk(path, name)
    npz = f"{_FTE_DIR}/{name}.npz"
    if (get_data_home(data_home) / npz).is_file():
        (path,) = _fetch([npz], data_home, download_if_missing, verify)
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        return _fte_data(arrays, path.name, name)
    # the .npz files are derived from the published PRTools zip: read that instead
    (zip_path,) = _fetch([_FTE_ZIP], data_home, download_if_missing, verify)
    return _fte_data(_fte_arrays_from_mat(zip_path, name), f"{zip_path.name}:{name}.mat", name)


def load_hja_bags(species: int, *, data_home=None, download_if_missing: bool = True,
                  verify: bool = False) -> MILData:
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
        The species whose bags are positive.
    data_home : str or Path, optional
        Folder to read from and download into (see :func:`get_data_home`).
    download_if_missing : bool, default True
        Download a missing file from its public source (its SHA-256 checked).
    verify : bool, default False
        Also check the SHA-256 of files already in the data home.

    Returns
    -------
    MILData
        ``X`` of shape (10232, 38) on the real data, ``bags`` the recording
        ids, ``instance_labels`` the segment labels (-1 or 1..13) and
        ``name == f"hja-{species}"``.

    Raises
    ------
    DataUnavailableError
        A file is missing and cannot be downloaded (a :class:`FileNotFoundError`).
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
        (_HJA_FEATURES, _HJA_INSTANCE_LABELS, _HJA_BAG_LABELS), data_home, download_if_missing,
        verify)
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


def load_yahoo_ltr(split: str, *, data_home=None, download_if_missing: bool = True,
                   verify: bool = False) -> YahooLTR:
    """Load ``split`` ("train" or "test") of the Yahoo! learning-to-rank sample.

    Reads ``ltr/yahoo_ltr_sample_lightgbm/rank.<split>`` (svmlight, one-based
    feature indices 1..300, no ``qid:``) and ``rank.<split>.query`` (one query
    size per line; rows are contiguous per query).

    Parameters
    ----------
    split : {"train", "test"}
        Which file of the sample to load.
    data_home : str or Path, optional
        Folder to read from and download into (see :func:`get_data_home`).
    download_if_missing : bool, default True
        Download a missing file from its public source (its SHA-256 checked).
    verify : bool, default False
        Also check the SHA-256 of files already in the data home.

    Raises
    ------
    DataUnavailableError
        A file is missing and cannot be downloaded (a :class:`FileNotFoundError`).
    ValueError
        Unknown split, query sizes that do not sum to the number of rows,
        non-integer relevance, or (with ``verify=True``) a checksum mismatch.
    """
    from sklearn.datasets import load_svmlight_file

    if split not in _YAHOO_SPLITS:
        raise ValueError(f"split must be one of {_YAHOO_SPLITS}, got {split!r}.")
    data_path, query_path = _fetch(
        [f"{_YAHOO_DIR}/rank.{split}", f"{_YAHOO_DIR}/rank.{split}.query"], data_home,
        download_if_missing, verify)

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
