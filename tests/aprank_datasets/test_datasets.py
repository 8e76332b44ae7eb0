"""Tests for aprank.datasets.

Tests marked by the ``real_data_home`` fixture read the shared data folder (the data home, see
``aprank.datasets.get_data_home``; ``conftest.py`` points ``APRANK_DATA`` at ``../shared/data``
beside the checkout) and are skipped, with a message, when it is absent. The others build tiny
synthetic folders under ``tmp_path``. The download path is in ``test_download.py``.
"""
import hashlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from aprank import datasets


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def hja(real_data_home):
    return datasets.load_hja_birdsong()


@pytest.fixture(scope="module")
def hja_rec(real_data_home):
    return datasets.load_hja_recordings()


@pytest.fixture(scope="module")
def mil_sets(real_data_home):
    return {name: datasets.load_mil(name) for name in datasets.MIL_SETS}


@pytest.fixture(scope="module")
def hja_bags(real_data_home):
    return {k: datasets.load_hja_bags(k) for k in range(1, 14)}


@pytest.fixture(scope="module")
def yahoo(real_data_home):
    return {s: datasets.load_yahoo_ltr(s) for s in ("train", "test")}


def _fake_hja(root: Path, label_bags=(1, 1, 2)):
    d = root / "mil" / "birds_hja"
    d.mkdir(parents=True)
    feat_rows = ["bag_id, [segment features]"]
    for i, bag in enumerate((1, 1, 2)):
        feat_rows.append(",".join([str(bag)] + [f"{0.1 * (i + j):.3f}" for j in range(38)]))
    (d / "hja_birdsong_features.txt").write_text("\n".join(feat_rows) + "\n")
    labels = (-1, 3, 13)
    lab_rows = ["bag_id, instance_label"] + [f"{b},{lab}" for b, lab in zip(label_bags, labels)]
    (d / "hja_birdsong_instance_labels.txt").write_text("\n".join(lab_rows) + "\n")
    names = "\n".join(f"{k}\tS{k:02d} - Species {k}" for k in range(1, 14)) + "  "
    (d / "hja_birdsong_class_names.txt").write_text(names)
    return [f"mil/birds_hja/{n}" for n in (
        "hja_birdsong_features.txt", "hja_birdsong_instance_labels.txt",
        "hja_birdsong_class_names.txt")]


def _fake_hja_bags(root: Path, lines=("1,3,5", "2,13")):
    """``_fake_hja`` (segments of bags 1, 1, 2) plus a bag-label file with ``lines``."""
    rels = _fake_hja(root)
    text = "\n".join(("bag_id, [labels]",) + tuple(lines)) + "\n"
    (root / "mil" / "birds_hja" / "hja_birdsong_bag_labels.txt").write_text(text)
    return rels + ["mil/birds_hja/hja_birdsong_bag_labels.txt"]


def _fake_yahoo(root: Path, sizes=(2, 1)):
    d = root / "ltr" / "yahoo_ltr_sample_lightgbm"
    d.mkdir(parents=True)
    (d / "rank.train").write_text("0 1:0.5 300:0.25\n3 2:1.0\n4 150:0.75\n")
    (d / "rank.train.query").write_text("".join(f"{s}\n" for s in sizes))
    return ["ltr/yahoo_ltr_sample_lightgbm/rank.train",
            "ltr/yahoo_ltr_sample_lightgbm/rank.train.query"]


def _fake_fte(root: Path, name="fox", y=(1, 1, -1, -1, -1), bag=(1, 1, 2, 2, 2)):
    d = root / "mil" / "fox_tiger_elephant"
    d.mkdir(parents=True, exist_ok=True)
    X = np.arange(len(y) * 230, dtype=np.float64).reshape(len(y), 230)
    np.savez(d / f"{name}.npz", X=X, y=np.array(y, dtype=np.int8),
             bag=np.array(bag, dtype=np.int32))
    return [f"mil/fox_tiger_elephant/{name}.npz"]


def _fake_musk(root: Path, rows=(("M-A", "1."), ("M-B", "0."), ("M-A", "1."))):
    d = root / "mil" / "musk_uci"
    d.mkdir(parents=True)
    lines = [",".join([mol, f"{mol}_{i}"] + [str(i * 200 + j - 83) for j in range(166)] + [c])
             for i, (mol, c) in enumerate(rows)]
    (d / "clean1.data").write_text("\n".join(lines) + "\n")
    return ["mil/musk_uci/clean1.data"]


# --------------------------------------------------------------------------- the data home
def test_missing_env_folder_raises_with_hint(monkeypatch, tmp_path):
    missing = tmp_path / "does_not_exist"
    monkeypatch.setenv("APRANK_DATA", str(missing))
    monkeypatch.setenv("APRANK_DATA_URL", "http://127.0.0.1:9")     # a closed port: no network
    with pytest.raises(FileNotFoundError, match="APRANK_DATA") as info:
        datasets.data_dir()
    assert "export APRANK_DATA=" in str(info.value)
    with pytest.raises(FileNotFoundError, match="APRANK_DATA"):
        datasets.load_hja_birdsong()
    with pytest.raises(FileNotFoundError, match="APRANK_DATA"):
        datasets.load_yahoo_ltr("train")


def test_missing_env_folder_raises_with_hint_mil(monkeypatch, tmp_path):
    monkeypatch.setenv("APRANK_DATA", str(tmp_path / "does_not_exist"))
    monkeypatch.setenv("APRANK_DATA_URL", "http://127.0.0.1:9")
    with pytest.raises(FileNotFoundError, match="APRANK_DATA"):
        datasets.load_mil("fox")
    with pytest.raises(FileNotFoundError, match="APRANK_DATA"):
        datasets.load_hja_bags(1)


def test_env_var_is_used(monkeypatch, tmp_path):
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    assert datasets.data_dir() == tmp_path.resolve()


def test_data_home_never_comes_from_the_current_directory(monkeypatch, tmp_path):
    """scikit-learn's convention: data_home=, else APRANK_DATA, else ~/aprank_data. A
    ../shared/data beside the current directory is not looked at."""
    project, home = tmp_path / "project", tmp_path / "home"
    (tmp_path / "shared" / "data").mkdir(parents=True)
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("APRANK_DATA", raising=False)
    monkeypatch.chdir(project)
    assert datasets.get_data_home() == (home / "aprank_data").resolve()
    with pytest.raises(FileNotFoundError, match="export APRANK_DATA="):
        datasets.data_dir()                 # ~/aprank_data does not exist yet
    monkeypatch.setenv("APRANK_DATA", "")   # an empty variable counts as unset
    assert datasets.get_data_home() == (home / "aprank_data").resolve()
    monkeypatch.setenv("APRANK_DATA", str(tmp_path / "env"))
    assert datasets.get_data_home() == (tmp_path / "env").resolve()
    # the argument wins over the variable, and ~ is expanded
    assert datasets.get_data_home(tmp_path / "arg") == (tmp_path / "arg").resolve()
    assert datasets.get_data_home("~/elsewhere") == (home / "elsewhere").resolve()


def test_loaders_take_data_home(monkeypatch, tmp_path):
    _fake_hja(tmp_path / "mine")
    monkeypatch.setenv("APRANK_DATA", str(tmp_path / "not_this_one"))
    assert datasets.load_hja_birdsong(data_home=tmp_path / "mine").X.shape == (2, 38)


def test_download_if_missing_false_never_downloads(monkeypatch, tmp_path):
    monkeypatch.setenv("APRANK_DATA_URL", "http://127.0.0.1:9")
    with pytest.raises(datasets.DataUnavailableError, match="download_if_missing=False"):
        datasets.load_yahoo_ltr("test", data_home=tmp_path, download_if_missing=False)
    assert not any(tmp_path.iterdir())      # nothing created, no partial file


# --------------------------------------------------------------------------- synthetic folders
def test_fake_hja_parsing_and_verify(monkeypatch, tmp_path):
    rels = _fake_hja(tmp_path)
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    d = datasets.load_hja_birdsong()
    assert d.X.shape == (2, 38) and d.X.dtype == np.float64
    np.testing.assert_array_equal(d.species, [3, 13])
    np.testing.assert_array_equal(d.recording, [1, 2])
    assert d.class_names[12] == "S13 - Species 13"  # trailing blanks stripped
    assert d.n_classes == 13
    # the fake files are not the published ones: verify=True must notice (the published
    # checksums, not a SHA256SUMS beside the files), verify=False must not look
    (tmp_path / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256((tmp_path / r).read_bytes()).hexdigest()}  {r}\n" for r in rels))
    with pytest.raises(datasets.ChecksumError, match="Checksum mismatch .*hja_birdsong_"):
        datasets.load_hja_birdsong(verify=True)
    datasets.load_hja_birdsong(verify=False)


def test_fake_hja_bag_id_mismatch(monkeypatch, tmp_path):
    _fake_hja(tmp_path, label_bags=(1, 2, 2))
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    with pytest.raises(ValueError, match="Bag ids disagree"):
        datasets.load_hja_birdsong()


def test_fake_hja_recordings(monkeypatch, tmp_path):
    _fake_hja_bags(tmp_path)
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    d = datasets.load_hja_recordings()
    assert d.X.shape == (2, 76) and d.X.dtype == np.float64
    assert d.Y.shape == (2, 13) and d.Y.dtype == bool
    np.testing.assert_array_equal(d.recording, [1, 2])
    assert d.recording.dtype == np.int64
    # segment i has features 0.1 * (i + j); bag 1 holds segments 0 and 1
    j = np.arange(38)
    np.testing.assert_allclose(d.X[0, :38], 0.1 * (0.5 + j), atol=1e-12)
    np.testing.assert_allclose(d.X[0, 38:], 0.1 * (1 + j), atol=1e-12)
    np.testing.assert_allclose(d.X[1, :38], 0.1 * (2 + j), atol=1e-12)
    np.testing.assert_allclose(d.X[1, 38:], 0.1 * (2 + j), atol=1e-12)
    np.testing.assert_array_equal(np.flatnonzero(d.Y[0]) + 1, [3, 5])
    np.testing.assert_array_equal(np.flatnonzero(d.Y[1]) + 1, [13])
    assert d.n_classes == 13 and d.class_names[12] == "S13 - Species 13"


@pytest.mark.parametrize(
    "lines,match",
    [
        (("1,3", "2,14"), "outside 1..13"),
        (("1,3", "2,0"), "outside 1..13"),
        (("1,3", "2,13", "3,1"), "no segments"),
        (("1,3",), "have no line"),
        (("1,3", "2,13", "1,5"), "more than once"),
        (("1,3", "2,"), "empty label set"),
        (("1,3", "2,x"), "non-integer"),
    ],
    ids=["species-14", "species-0", "bag-without-segments", "bag-without-line",
         "duplicated-bag", "empty-label-set", "non-integer"],
)
def test_fake_hja_recordings_errors(monkeypatch, tmp_path, lines, match):
    _fake_hja_bags(tmp_path, lines)
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    with pytest.raises(ValueError, match=match) as info:
        datasets.load_hja_recordings()
    assert "hja_birdsong_" in str(info.value)  # the message names the file


def test_fake_fte(monkeypatch, tmp_path):
    rels = _fake_fte(tmp_path)
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    d = datasets.load_mil("fox")
    assert isinstance(d, datasets.MILData) and d.name == "fox"
    assert d.X.shape == (5, 230) and d.X.dtype == np.float64
    assert d.y.dtype == np.int64 and d.bags.dtype == np.int64
    np.testing.assert_array_equal(d.y, [1, 1, 0, 0, 0])  # +1/-1 -> 1/0
    np.testing.assert_array_equal(d.bags, [1, 1, 2, 2, 2])
    assert d.n_bags == 2 and d.instance_labels is None
    with pytest.raises(Exception):
        d.X = None
    p = tmp_path / rels[0]
    p.write_bytes(p.read_bytes() + b"\0")
    with pytest.raises(ValueError, match="Checksum mismatch"):
        datasets.load_mil("fox", verify=True)
    # no tiger.npz: the loader falls back to the published zip, absent and not downloadable
    with pytest.raises(FileNotFoundError, match="fte_prtools_mat.zip"):
        datasets.load_mil("tiger")


def test_fake_fte_zero_one_labels(monkeypatch, tmp_path):
    _fake_fte(tmp_path, name="tiger", y=(0, 0, 1, 1, 1))
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    np.testing.assert_array_equal(datasets.load_mil("tiger").y, [0, 0, 1, 1, 1])


@pytest.mark.parametrize(
    "y,match",
    [((1, -1, -1, -1, -1), "bag 1"), ((1, 1, 2, -1, -1), "labels must be")],
    ids=["mixed-bag", "label-2"],
)
def test_fake_fte_errors(monkeypatch, tmp_path, y, match):
    _fake_fte(tmp_path, name="elephant", y=y)
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    with pytest.raises(ValueError, match=match):
        datasets.load_mil("elephant")


def test_fake_musk(monkeypatch, tmp_path):
    _fake_musk(tmp_path)
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    d = datasets.load_mil("musk1")
    assert d.name == "musk1" and d.X.shape == (3, 166) and d.X.dtype == np.float64
    np.testing.assert_array_equal(d.bags, [0, 1, 0])  # order of first appearance
    np.testing.assert_array_equal(d.y, [1, 0, 1])
    np.testing.assert_array_equal(d.X[2, :2], [400 - 83, 400 - 82])
    assert d.n_bags == 2


def test_fake_musk_errors(monkeypatch, tmp_path):
    _fake_musk(tmp_path, rows=(("M-A", "1."), ("M-B", "0."), ("M-A", "0.")))
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    with pytest.raises(ValueError, match="'M-A'"):
        datasets.load_mil("musk1")
    p = tmp_path / "mil" / "musk_uci" / "clean1.data"
    p.write_text(p.read_text() + "M-C,M-C_1,1,2,0.\n")
    with pytest.raises(ValueError, match="line 4"):
        datasets.load_mil("musk1")


def test_load_mil_unknown_name(monkeypatch, tmp_path):
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    with pytest.raises(ValueError, match="musk1") as info:
        datasets.load_mil("musk2")
    assert all(n in str(info.value) for n in datasets.MIL_SETS)
    assert datasets.MIL_SETS == ("fox", "tiger", "elephant", "musk1")


def test_fake_hja_bags(monkeypatch, tmp_path):
    _fake_hja_bags(tmp_path)
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    d = datasets.load_hja_bags(3)
    assert d.name == "hja-3" and d.X.shape == (3, 38) and d.X.dtype == np.float64
    np.testing.assert_array_equal(d.bags, [1, 1, 2])
    np.testing.assert_array_equal(d.y, [1, 1, 0])
    np.testing.assert_array_equal(d.instance_labels, [-1, 3, 13])
    assert d.instance_labels.dtype == np.int64 and d.n_bags == 2
    np.testing.assert_allclose(d.X[2], 0.1 * (2 + np.arange(38)), atol=1e-12)
    np.testing.assert_array_equal(datasets.load_hja_bags(13).y, [0, 0, 1])
    np.testing.assert_array_equal(datasets.load_hja_bags(5).y, [1, 1, 0])
    np.testing.assert_array_equal(datasets.load_hja_bags(np.int64(1)).y, [0, 0, 0])


@pytest.mark.parametrize("species", [0, 14, -1, 2.0, "3", True])
def test_hja_bags_species_out_of_range(monkeypatch, tmp_path, species):
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    with pytest.raises(ValueError, match="1..13"):
        datasets.load_hja_bags(species)


def test_fake_hja_bags_errors(monkeypatch, tmp_path):
    _fake_hja_bags(tmp_path, ("1,3",))
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    with pytest.raises(ValueError, match="have no line"):
        datasets.load_hja_bags(3)


def test_fake_yahoo(monkeypatch, tmp_path):
    _fake_yahoo(tmp_path)
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    d = datasets.load_yahoo_ltr("train")
    assert d.X.shape == (3, 300)
    assert d.X.indices.dtype == np.int32
    # one-based indices: feature 1 -> column 0, feature 300 -> column 299
    np.testing.assert_array_equal(d.X.toarray()[0, [0, 299]], [0.5, 0.25])
    np.testing.assert_array_equal(d.relevance, [0, 3, 4])
    np.testing.assert_array_equal(d.qid, [0, 0, 1])
    with pytest.raises(ValueError, match="split"):
        datasets.load_yahoo_ltr("valid")


def test_fake_yahoo_bad_query_sizes(monkeypatch, tmp_path):
    _fake_yahoo(tmp_path, sizes=(2, 2))
    monkeypatch.setenv("APRANK_DATA", str(tmp_path))
    with pytest.raises(ValueError, match="sum to 4"):
        datasets.load_yahoo_ltr("train")


# --------------------------------------------------------------------------- recording_split
def test_recording_split_small():
    rec = np.array([5, 5, 7, 8, 8, 8, 9, 10])
    tr, te = datasets.recording_split(rec, test_fraction=0.4, seed=3)
    assert tr.dtype == bool and te.dtype == bool
    assert np.all(tr ^ te)
    assert not set(rec[tr]) & set(rec[te])
    assert len(set(rec[te])) == 2  # round(0.4 * 5)
    for bad in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError):
            datasets.recording_split(rec, test_fraction=bad)


# --------------------------------------------------------------------------- real data: HJA
def test_hja_raw_file_facts(real_data_home):
    labels = np.loadtxt(real_data_home / "mil/birds_hja/hja_birdsong_instance_labels.txt",
                        delimiter=",", skiprows=1, dtype=np.int64)
    assert labels.shape == (10232, 2)
    assert len(np.unique(labels[:, 0])) == 548
    assert int((labels[:, 1] != -1).sum()) == 4998
    assert set(np.unique(labels[:, 1])) == {-1} | set(range(1, 14))


def test_hja_shapes_and_types(hja):
    assert hja.X.shape == (4998, 38)
    assert hja.X.dtype == np.float64 and np.isfinite(hja.X).all()
    assert hja.species.dtype == np.int64 and hja.recording.dtype == np.int64
    assert hja.species.shape == hja.recording.shape == (4998,)
    assert hja.species.min() >= 1 and hja.species.max() <= 13
    assert len(hja.class_names) == 13 and hja.n_classes == 13
    assert all(isinstance(n, str) and n for n in hja.class_names)
    assert hja.class_names[0] == "BRCR - Brown Creeper"
    assert hja.class_names[12] == "WETA - Western Tanager"
    n_rec = len(np.unique(hja.recording))
    assert n_rec <= 548
    assert n_rec == 548  # every recording has at least one labelled segment
    assert hja.recording.min() >= 1 and hja.recording.max() <= 548


def test_hja_species_counts(hja):
    counts = np.bincount(hja.species, minlength=14)[1:]
    expected = [602, 810, 501, 494, 82, 277, 32, 345, 139, 120, 190, 1280, 126]
    np.testing.assert_array_equal(counts, expected)
    assert counts.sum() == 4998


def test_hja_instance_labels_agree_with_bag_labels(real_data_home, hja):
    bags = {}
    text = (real_data_home / "mil/birds_hja/hja_birdsong_bag_labels.txt").read_text()
    for line in text.splitlines()[1:]:
        parts = [int(t) for t in line.split(",") if t.strip()]
        bags[parts[0]] = set(parts[1:])
    assert len(bags) == 548
    assert all(s in bags[r] for r, s in zip(hja.recording, hja.species))


def test_hja_recording_split(hja):
    tr, te = datasets.recording_split(hja.recording, test_fraction=0.3, seed=0)
    assert tr.shape == te.shape == hja.recording.shape
    assert np.all(tr ^ te)
    assert not set(hja.recording[tr]) & set(hja.recording[te])
    assert len(np.unique(hja.recording[te])) == round(0.3 * 548)
    tr2, te2 = datasets.recording_split(hja.recording, test_fraction=0.3, seed=0)
    np.testing.assert_array_equal(tr, tr2)
    np.testing.assert_array_equal(te, te2)
    _, te3 = datasets.recording_split(hja.recording, test_fraction=0.3, seed=1)
    assert not np.array_equal(te, te3)


def test_hja_frozen(hja):
    with pytest.raises(Exception):
        hja.X = None


# ------------------------------------------------------------------------ real data: HJA recordings
def test_hja_recordings_shapes_and_types(hja_rec):
    assert hja_rec.X.shape == (548, 76)
    assert hja_rec.X.dtype == np.float64 and np.isfinite(hja_rec.X).all()
    assert hja_rec.Y.shape == (548, 13) and hja_rec.Y.dtype == bool
    assert hja_rec.recording.shape == (548,) and hja_rec.recording.dtype == np.int64
    np.testing.assert_array_equal(hja_rec.recording, np.arange(1, 549))
    assert np.all(hja_rec.X[:, 38:] >= hja_rec.X[:, :38])  # max >= mean
    assert len(hja_rec.class_names) == 13 and hja_rec.n_classes == 13
    assert hja_rec.class_names[0] == "BRCR - Brown Creeper"
    with pytest.raises(Exception):
        hja_rec.X = None


def test_hja_recordings_match_raw_files(real_data_home, hja_rec):
    d = real_data_home / "mil/birds_hja"
    feats = np.loadtxt(d / "hja_birdsong_features.txt", delimiter=",", skiprows=1)
    lines = (d / "hja_birdsong_bag_labels.txt").read_text().splitlines()[1:]
    bags = {int(p[0]): {int(t) for t in p[1:]} for p in (ln.split(",") for ln in lines)}
    for bag in (1, 2, 137, 300, 548):
        r = int(np.flatnonzero(hja_rec.recording == bag)[0])
        seg = feats[feats[:, 0] == bag, 1:]
        assert seg.shape[0] >= 1
        np.testing.assert_allclose(hja_rec.X[r, :38], seg.mean(axis=0), rtol=1e-12, atol=0)
        np.testing.assert_array_equal(hja_rec.X[r, 38:], seg.max(axis=0))
        assert set(np.flatnonzero(hja_rec.Y[r]) + 1) == bags[bag]


def test_hja_recordings_label_cardinality(hja_rec):
    card = hja_rec.Y.sum(axis=1)
    assert card.min() >= 1 and card.max() <= 5
    np.testing.assert_array_equal(np.bincount(card), [0, 186, 154, 152, 55, 1])


def test_hja_recordings_contain_segment_species(hja, hja_rec):
    row = {int(b): r for r, b in enumerate(hja_rec.recording)}
    rows = np.array([row[int(b)] for b in hja.recording])
    assert hja_rec.Y[rows, hja.species - 1].all()
    assert hja_rec.class_names == hja.class_names


# --------------------------------------------------------------------------- real data: MIL sets
@pytest.mark.parametrize(
    "name,n_rows,n_features,n_bags,n_pos",
    [("fox", 1320, 230, 200, 100), ("tiger", 1220, 230, 200, 100),
     ("elephant", 1391, 230, 200, 100), ("musk1", 476, 166, 92, 47)],
)
def test_mil_shapes(mil_sets, name, n_rows, n_features, n_bags, n_pos):
    d = mil_sets[name]
    assert d.name == name
    assert d.X.shape == (n_rows, n_features)
    assert d.X.dtype == np.float64 and np.isfinite(d.X).all()
    assert d.y.shape == d.bags.shape == (n_rows,)
    assert d.y.dtype == np.int64 and d.bags.dtype == np.int64
    assert set(np.unique(d.y)) == {0, 1}
    assert d.n_bags == n_bags and d.instance_labels is None
    ids, first = np.unique(d.bags, return_index=True)
    assert int(d.y[first].sum()) == n_pos
    # the bag label is constant within each bag
    for b, y0 in zip(ids, d.y[first]):
        assert np.all(d.y[d.bags == b] == y0)


def test_mil_musk1_bag_ids(mil_sets):
    d = mil_sets["musk1"]
    np.testing.assert_array_equal(np.unique(d.bags), np.arange(92))
    _, first = np.unique(d.bags, return_index=True)
    assert np.all(np.diff(first) > 0)  # ids in order of first appearance
    assert d.bags[0] == 0


# --------------------------------------------------------------------------- real data: HJA bags
def test_hja_bags_shapes(hja_bags):
    for k, d in hja_bags.items():
        assert d.name == f"hja-{k}"
        assert d.X.shape == (10232, 38) and d.X.dtype == np.float64
        assert d.y.shape == d.bags.shape == d.instance_labels.shape == (10232,)
        assert d.y.dtype == d.bags.dtype == d.instance_labels.dtype == np.int64
        assert d.n_bags == 548
        np.testing.assert_array_equal(np.unique(d.bags), np.arange(1, 549))
        assert set(np.unique(d.instance_labels)) == {-1} | set(range(1, 14))
        assert int((d.instance_labels != -1).sum()) == 4998
        np.testing.assert_array_equal(d.X, hja_bags[1].X)


def test_hja_bags_labels(hja_bags):
    n_pos_bags = []
    for k, d in hja_bags.items():
        ids, first = np.unique(d.bags, return_index=True)
        for b, y0 in zip(ids, d.y[first]):
            assert np.all(d.y[d.bags == b] == y0)
        # every segment labelled with the species lies in a positive bag
        assert np.all(d.y[d.instance_labels == k] == 1)
        n_pos_bags.append(int(d.y[first].sum()))
    np.testing.assert_array_equal(
        n_pos_bags, [197, 109, 165, 82, 20, 90, 15, 117, 89, 63, 79, 103, 46])
    assert int(hja_bags[1].y.sum()) == 4759


def test_hja_bags_match_other_loaders(hja, hja_rec, hja_bags):
    d = hja_bags[3]
    keep = d.instance_labels != -1
    np.testing.assert_array_equal(d.X[keep], hja.X)
    np.testing.assert_array_equal(d.instance_labels[keep], hja.species)
    np.testing.assert_array_equal(d.bags[keep], hja.recording)
    for k, dk in hja_bags.items():
        pos = set(hja_rec.recording[hja_rec.Y[:, k - 1]].tolist())
        assert set(dk.bags[dk.y == 1].tolist()) == pos


# --------------------------------------------------------------------------- real data: Yahoo
@pytest.mark.parametrize("split,n_rows,n_queries", [("train", 3005, 201), ("test", 768, 50)])
def test_yahoo_facts(yahoo, split, n_rows, n_queries):
    d = yahoo[split]
    assert isinstance(d.X, sp.csr_matrix)
    assert d.X.shape == (n_rows, 300)
    assert d.X.dtype == np.float64
    assert d.X.indices.dtype == np.int32 and d.X.indptr.dtype == np.int32
    assert d.X.data.min() >= 0.0 and d.X.data.max() <= 1.0
    assert d.relevance.dtype == np.int64 and d.relevance.shape == (n_rows,)
    assert d.relevance.min() >= 0 and d.relevance.max() <= 4
    assert d.qid.dtype == np.int64 and d.qid.shape == (n_rows,)
    assert d.n_queries == n_queries
    # contiguous: ids never decrease and step by at most one, starting at 0
    steps = np.diff(d.qid)
    assert d.qid[0] == 0 and np.all((steps == 0) | (steps == 1))
    assert d.qid[-1] == n_queries - 1
    # sizes match the .query file
    sizes = np.loadtxt(datasets.data_dir() / f"ltr/yahoo_ltr_sample_lightgbm/rank.{split}.query",
                       dtype=np.int64)
    np.testing.assert_array_equal(np.bincount(d.qid), sizes)


def test_yahoo_relevance_counts(yahoo):
    np.testing.assert_array_equal(np.bincount(yahoo["train"].relevance), [645, 1211, 858, 222, 69])
    np.testing.assert_array_equal(np.bincount(yahoo["test"].relevance), [206, 256, 252, 44, 10])


def test_yahoo_usable_by_sklearn(yahoo):
    from sklearn.linear_model import Ridge

    d = yahoo["train"]
    Ridge(alpha=1.0).fit(d.X, d.relevance)


# --------------------------------------------------------------------------- verify on real files
def test_verify_real_files(real_data_home):
    hja = datasets.load_hja_birdsong(verify=True)
    assert hja.X.shape == (4998, 38)
    assert datasets.load_hja_recordings(verify=True).X.shape == (548, 76)
    for split in ("train", "test"):
        d = datasets.load_yahoo_ltr(split, verify=True)
        assert d.X.shape[1] == 300
    for name in datasets.MIL_SETS:
        assert datasets.load_mil(name, verify=True).n_bags in (92, 200)
    assert datasets.load_hja_bags(7, verify=True).X.shape == (10232, 38)


def test_published_checksums_are_the_shared_folders(real_data_home):
    """The package's SHA-256 of every file equals the shared folder's SHA256SUMS entry."""
    listed = dict(reversed(line.split(None, 1)) for line in
                  (real_data_home / "SHA256SUMS").read_text().splitlines() if line.strip())
    for rel, remote in datasets.REMOTE_FILES.items():
        assert listed[rel] == remote.sha256, rel
        assert datasets.file_sha256(real_data_home / rel) == remote.sha256, rel
        assert remote.url is None or remote.url.startswith("https://"), rel
        assert remote.url is not None or remote.note, rel    # says where to get it instead
