"""The download path of aprank.datasets, against an HTTP server on 127.0.0.1 serving the shared
data folder (no other network): a missing file is downloaded into the data home with its
SHA-256 checked, a corrupted one is refused and never cached, and a cached one is read without
the network."""
import functools
import http.server
import shutil
import threading

import numpy as np
import pytest

from aprank import datasets

CLOSED = "http://127.0.0.1:9"      # the discard port: nothing listens, the connection is refused


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder and records the paths asked for."""

    def __init__(self, *args, requests, **kwargs):
        self.requests = requests
        super().__init__(*args, **kwargs)

    def do_GET(self):
        self.requests.append(self.path)
        super().do_GET()

    def log_message(self, *args):       # keep the test output clean
        pass


@pytest.fixture
def shared(real_data_home):
    """The shared data folder to serve (conftest's data home, with every file)."""
    return real_data_home


@pytest.fixture
def serve():
    """serve(folder) -> (base URL, list of requested paths); servers stop after the test."""
    servers = []

    def start(folder):
        requests = []
        handler = functools.partial(_Handler, requests=requests, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}", requests

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _leftovers(home):
    return sorted(p.name for p in home.rglob("*.part"))


def test_download_then_cache(shared, serve, tmp_path, monkeypatch):
    url, requests = serve(shared)
    monkeypatch.setenv("APRANK_DATA_URL", url)
    home = tmp_path / "home"                        # does not exist yet
    got = datasets.load_hja_birdsong(data_home=home)
    want = datasets.load_hja_birdsong(data_home=shared)
    np.testing.assert_array_equal(got.X, want.X)
    np.testing.assert_array_equal(got.species, want.species)
    assert sorted(requests) == sorted(f"/mil/birds_hja/{name}" for name in (
        "hja_birdsong_features.txt", "hja_birdsong_instance_labels.txt",
        "hja_birdsong_class_names.txt"))
    for name in ("hja_birdsong_features.txt", "hja_birdsong_class_names.txt"):
        rel = f"mil/birds_hja/{name}"
        assert datasets.file_sha256(home / rel) == datasets.REMOTE_FILES[rel].sha256
    assert _leftovers(home) == []
    # the second call reads the cache: no request, and no network at all
    monkeypatch.setenv("APRANK_DATA_URL", CLOSED)
    again = datasets.load_hja_birdsong(data_home=home, verify=True)
    np.testing.assert_array_equal(again.X, want.X)
    assert len(requests) == 3


def test_corrupted_download_is_refused_and_not_cached(shared, serve, tmp_path):
    rel = "ltr/yahoo_ltr_sample_lightgbm/rank.test.query"
    bad = tmp_path / "bad"
    (bad / rel).parent.mkdir(parents=True)
    text = (shared / rel).read_text()
    (bad / rel).write_text(text.replace("1", "2", 1))       # one byte changed
    bad_url, _ = serve(bad)
    home = tmp_path / "home"
    with pytest.raises(datasets.ChecksumError, match="Checksum mismatch") as info:
        datasets.fetch_file(rel, data_home=home, base_url=bad_url)
    assert bad_url in str(info.value)
    assert not (home / rel).exists() and _leftovers(home) == []
    # the good copy goes through afterwards
    good_url, _ = serve(shared)
    path = datasets.fetch_file(rel, data_home=home, base_url=good_url)
    assert path == (home / rel).resolve() and path.read_text() == text


def test_missing_on_the_server_or_no_server(shared, serve, tmp_path):
    (tmp_path / "empty").mkdir()
    url, _ = serve(tmp_path / "empty")                      # a server with nothing on it
    rel = "mil/musk_uci/clean1.data"
    with pytest.raises(datasets.DataUnavailableError, match="404") as info:
        datasets.fetch_file(rel, data_home=tmp_path / "home", base_url=url)
    assert "APRANK_DATA" in str(info.value) and rel in str(info.value)
    with pytest.raises(FileNotFoundError, match="refused"):
        datasets.fetch_file(rel, data_home=tmp_path / "home", base_url=CLOSED)
    assert _leftovers(tmp_path / "home") == []


def test_fox_tiger_elephant_come_from_the_published_zip(shared, serve, tmp_path, monkeypatch):
    """The .npz files have no public copy: without them the loader reads the PRTools zip,
    which holds the same arrays."""
    url, requests = serve(shared)
    monkeypatch.setenv("APRANK_DATA_URL", url)
    for name in ("fox", "tiger", "elephant"):
        got = datasets.load_mil(name, data_home=tmp_path)
        want = datasets.load_mil(name, data_home=shared)
        for attr in ("X", "y", "bags"):
            np.testing.assert_array_equal(getattr(got, attr), getattr(want, attr))
    assert requests == ["/mil/fox_tiger_elephant/fte_prtools_mat.zip"]    # once, then cached


def test_progress_bar_only_when_asked_or_on_a_terminal(shared, serve, tmp_path, capsys):
    url, _ = serve(shared)
    rel = "ltr/yahoo_ltr_sample_lightgbm/rank.train.query"
    datasets.fetch_file(rel, data_home=tmp_path / "a", base_url=url)     # stderr is no terminal
    assert capsys.readouterr().err == ""
    datasets.fetch_file(rel, data_home=tmp_path / "b", base_url=url, progress=True)
    assert "downloading rank.train.query" in capsys.readouterr().err


def test_public_sources_are_used_without_a_mirror(monkeypatch, tmp_path):
    """Without APRANK_DATA_URL each file's own pinned public URL is asked (urlopen is replaced
    here: the test never touches the network)."""
    import urllib.error
    import urllib.request

    asked = []

    def urlopen(url, timeout):
        asked.append(url)
        raise urllib.error.URLError("no network in tests")

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    monkeypatch.setenv("APRANK_DATA_URL", "")
    with pytest.raises(datasets.DataUnavailableError, match="no network in tests"):
        datasets.load_hja_birdsong(data_home=tmp_path)
    assert asked == [datasets.REMOTE_FILES["mil/birds_hja/hja_birdsong_features.txt"].url]
    assert asked[0].startswith("https://raw.githubusercontent.com/macarbonneau/MILSurvey/")
    # a file without a verbatim public copy says where to get it, and creates nothing
    with pytest.raises(datasets.DataUnavailableError, match="clean1.data.Z"):
        datasets.load_mil("musk1", data_home=tmp_path / "musk")
    assert not (tmp_path / "musk").exists()


def test_unknown_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a file aprank knows"):
        datasets.fetch_file("mil/nothing.txt", data_home=tmp_path)


def test_read_only_copy_of_the_shared_folder_is_enough(shared, tmp_path, monkeypatch):
    """A complete data home needs no download, even with the network closed."""
    monkeypatch.setenv("APRANK_DATA_URL", CLOSED)
    copy = tmp_path / "copy"
    shutil.copytree(shared / "ltr" / "yahoo_ltr_sample_lightgbm",
                    copy / "ltr" / "yahoo_ltr_sample_lightgbm")
    assert datasets.load_yahoo_ltr("test", data_home=copy, verify=True).X.shape == (768, 300)
