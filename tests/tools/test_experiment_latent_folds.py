"""The latent experiment keeps each finished outer fold (its full run takes longer
than one sitting), under a fingerprint of the code that ran it, and a rerun reads them back."""
import json

from experiments import latent


def test_folds_are_kept_and_read_back(real_data_home, tmp_path):
    logs = []
    first = latent.latent(quick=True, log=logs.append, out=tmp_path)
    keep = tmp_path / "latent-folds-quick" / latent.fingerprint()
    files = sorted(keep.glob("*.json"))
    assert [f.name for f in files] == ["musk1-fold0.json", "musk1-fold1.json"]
    assert not list(keep.glob("*.part"))
    assert "0 of the 2 were computed by earlier runs" in first
    kept = json.loads(files[0].read_text())
    assert set(kept) == set(latent.METHODS) and kept["LatentSSVM"]["n_outer"] >= 1

    # a rerun reads both folds back (the folds run in worker processes, so it is the count that
    # says none was computed) and writes the same table
    again = latent.latent(quick=True, log=logs.append, out=tmp_path)
    assert "2 of the 2 were computed by earlier runs" in again
    assert again.split(" ", 1)[1] == first.split(" ", 1)[1].replace("0 of the 2", "2 of the 2")


def test_the_fingerprint_follows_the_code(monkeypatch):
    a = latent.fingerprint()
    monkeypatch.setattr(latent, "_SOURCE_SUFFIXES", (".py",))
    assert latent.fingerprint() != a
