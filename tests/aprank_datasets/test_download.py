"""The download path of aprank.datasets, against an HTTP server on 127.0.0.1 serving the shared
data folder (no other network): a missing file is downloaded into the data home with its
SHA-256 checked, a corrupted one is refused and never cached, and a cached one is read without
the network."""
import functools
import http.server
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

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


@pytest.mark.parametrize("env, base_url, named", [
    ("not a url", None, "APRANK_DATA_URL"),
    ("127.0.0.1:8000/data", None, "APRANK_DATA_URL"),     # no scheme
    ("https://example.org/data", "ftp://example.org/data", "base_url"),
    ("", "http:///no-host", "base_url"),
])
def test_a_mirror_that_is_not_an_http_or_file_url_is_refused_by_name(env, base_url, named,
                                                                     monkeypatch, tmp_path):
    """urllib's "unknown url type" named neither the variable nor what it takes; nothing is
    asked of the network nor written."""
    import urllib.request

    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: pytest.fail("urlopen ran"))
    monkeypatch.setenv("APRANK_DATA_URL", env)
    given = base_url if base_url is not None else env
    with pytest.raises(ValueError, match=rf"^{named} must be the http\(s\) or file URL of a "
                                         rf"mirror of the data folder .*got '{given}'$"):
        datasets.fetch_file("mil/birds_hja/hja_birdsong_features.txt", data_home=tmp_path,
                            base_url=base_url)
    assert not any(tmp_path.iterdir())


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


# ------------------------------------------------------------- concurrent downloads of one file
RANK_QUERY = "ltr/yahoo_ltr_sample_lightgbm/rank.test.query"
REPOSITORY = Path(__file__).resolve().parents[2]


class _Truncating(http.server.BaseHTTPRequestHandler):
    """Sends the head of ``body`` and closes the connection: with the whole body's
    Content-Length, or chunked (HTTP/1.1) without one."""

    def __init__(self, *args, body, chunked, **kwargs):
        self.body, self.chunked = body, chunked
        super().__init__(*args, **kwargs)

    def do_GET(self):
        head = self.body[:len(self.body) // 2]
        self.send_response(200)
        if self.chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(head), head))     # no terminating chunk
        else:
            self.send_header("Content-Length", str(len(self.body)))
            self.end_headers()
            self.wfile.write(head)
        self.close_connection = True

    def log_message(self, *args):
        pass


class _Stalling(_Truncating):
    """Sends the head of ``body``, waits for ``release``, then sends the rest."""

    def __init__(self, *args, release, **kwargs):
        self.release = release
        super().__init__(*args, chunked=False, **kwargs)

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        half = len(self.body) // 2
        try:
            self.wfile.write(self.body[:half])
            self.wfile.flush()
            self.release.wait(60)
            self.wfile.write(self.body[half:])
        except OSError:          # the client was killed meanwhile
            pass


@pytest.fixture
def serve_handler():
    """serve_handler(handler class, **its keywords) -> base URL; servers stop after the test."""
    servers = []

    def start(handler, **keywords):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                 functools.partial(handler, **keywords))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_truncated_response_is_an_incomplete_download(shared, serve_handler, tmp_path,
                                                          chunked):
    """Fewer bytes than Content-Length (or a chunked response cut short) is reported as an
    incomplete download, not as a checksum mismatch, and nothing is cached."""
    body = (shared / RANK_QUERY).read_bytes()
    url = serve_handler(_Truncating, body=body, chunked=chunked)
    home = tmp_path / "home"
    with pytest.raises(datasets.DataUnavailableError, match="incomplete download") as info:
        datasets.fetch_file(RANK_QUERY, data_home=home, base_url=url)
    message = str(info.value)
    got = len(body) // 2
    assert (f"got {got} bytes, then the connection closed" if chunked
            else f"got {got} of {len(body)} bytes") in message
    assert "Checksum" not in message and "APRANK_DATA" in message
    assert not home.exists()        # no file, no partial file, no folder


def _download_in_a_subprocess(url, home):
    code = ("import sys; from aprank import datasets; "
            "datasets.fetch_file(sys.argv[1], data_home=sys.argv[2], base_url=sys.argv[3])")
    env = {**os.environ, "PYTHONPATH": str(Path(datasets.__file__).resolve().parents[2])}
    return subprocess.Popen([sys.executable, "-c", code, RANK_QUERY, str(home), url],
                            cwd=REPOSITORY, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_for_part(home, proc):
    for _ in range(600):
        parts = list(home.rglob("*.part"))
        if parts:
            return parts
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("no partial file appeared")


def test_a_killed_download_leaves_a_partial_file_that_the_next_download_removes(
        shared, serve, serve_handler, tmp_path):
    release = threading.Event()
    stalling = serve_handler(_Stalling, body=(shared / RANK_QUERY).read_bytes(),
                             release=release)
    home = tmp_path / "home"
    proc = _download_in_a_subprocess(stalling, home)
    try:
        part, = _wait_for_part(home, proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    finally:
        release.set()
    assert part.exists()                # SIGKILL: nothing of the process ran to clean up
    good, _ = serve(shared)
    path = datasets.fetch_file(RANK_QUERY, data_home=home, base_url=good)
    assert datasets.file_sha256(path) == datasets.REMOTE_FILES[RANK_QUERY].sha256
    assert _leftovers(home) == []


def test_a_download_running_in_another_process_is_left_alone(shared, serve, serve_handler,
                                                             tmp_path):
    """Two processes download the same file: the second one's cleaning spares the first one's
    partial file, and both end with the file."""
    release = threading.Event()
    stalling = serve_handler(_Stalling, body=(shared / RANK_QUERY).read_bytes(),
                             release=release)
    home = tmp_path / "home"
    proc = _download_in_a_subprocess(stalling, home)
    try:
        theirs, = _wait_for_part(home, proc)
        good, _ = serve(shared)
        datasets.fetch_file(RANK_QUERY, data_home=home, base_url=good)
        assert theirs.exists()
    finally:
        release.set()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert datasets.file_sha256(home / RANK_QUERY) == datasets.REMOTE_FILES[RANK_QUERY].sha256
    assert _leftovers(home) == []


def test_stale_partial_files_are_told_by_owner_and_age(shared, serve, tmp_path):
    """A partial file is removed when its owner on this machine is dead, or when it is older
    than STALE_PART_SECONDS whoever owns it; a fresh one of another machine is kept."""
    from aprank.datasets import _files

    home = tmp_path / "home"
    folder = (home / RANK_QUERY).parent
    folder.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    name = Path(RANK_QUERY).name
    parts = {
        "dead here": folder / f".{name}.{dead.stdout.strip()}@{_files._HOST}.abc.part",
        "alive here": folder / f".{name}.{os.getpid()}@{_files._HOST}.def.part",
        "elsewhere, fresh": folder / f".{name}.1@another-host.example.ghi.part",
        "elsewhere, old": folder / f".{name}.1@another-host.example.jkl.part",
        "unnamed, old": folder / f".{name}.mno.part",          # a name without its owner
        "another file": folder / f".rank.train.query.{dead.stdout.strip()}@{_files._HOST}.p.part",
    }
    for part in parts.values():
        part.write_bytes(b"partial")
    old = time.time() - _files.STALE_PART_SECONDS - 60
    for key in ("elsewhere, old", "unnamed, old"):
        os.utime(parts[key], (old, old))
    url, _ = serve(shared)
    datasets.fetch_file(RANK_QUERY, data_home=home, base_url=url)
    kept = {key for key, part in parts.items() if part.exists()}
    assert kept == {"alive here", "elsewhere, fresh", "another file"}
