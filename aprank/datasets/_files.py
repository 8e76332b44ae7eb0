"""Where the data files live, where they come from, and how a missing one is fetched.

A file is named by its path relative to the data home (``mil/birds_hja/...``), the layout of
the shared data folder. :data:`REMOTE_FILES` gives each file the loaders read its public URL
and its SHA-256; :func:`fetch_file` returns the cached copy or downloads it, checking the
checksum before the file enters the cache.
"""
from __future__ import annotations

import glob
import hashlib
import http.client
import os
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

__all__ = [
    "DATA_ENV_VAR",
    "URL_ENV_VAR",
    "DEFAULT_DATA_HOME",
    "RemoteFile",
    "REMOTE_FILES",
    "DataUnavailableError",
    "ChecksumError",
    "get_data_home",
    "data_dir",
    "fetch_file",
    "file_sha256",
]

#: The environment variable naming the data home (see :func:`get_data_home`).
DATA_ENV_VAR = "APRANK_DATA"
#: The environment variable naming a mirror of the data folder to download from.
URL_ENV_VAR = "APRANK_DATA_URL"
#: The data home when neither ``data_home=`` nor ``APRANK_DATA`` names one.
DEFAULT_DATA_HOME = "~/aprank_data"
TIMEOUT_SECONDS = 30
#: A partial download (``.<name>.<pid>@<host>.<random>.part`` beside the file) untouched for
#: this long is left over from a process that died, and the next download of the file removes
#: it (a live one grows by a 64 KiB chunk far more often, or times out after TIMEOUT_SECONDS of
#: silence).
STALE_PART_SECONDS = 3600

HINT = (f"Set {DATA_ENV_VAR} to the folder holding aprank's data (the one with mil/ and ltr/, "
        f"e.g. `export {DATA_ENV_VAR}=/path/to/shared/data`), or let the loaders download "
        f"into the data home when the network allows.")


class DataUnavailableError(FileNotFoundError):
    """A data file is neither in the data home nor downloadable (the message says why)."""


class ChecksumError(ValueError):
    """A file's SHA-256 differs from the published one."""


@dataclass(frozen=True)
class RemoteFile:
    """Where a data file is published and its SHA-256.

    Attributes
    ----------
    url : str or None
        The public URL; None for files with no verbatim public copy (the loaders derive them
        or say where to get them: ``note``).
    sha256 : str
        The file's SHA-256, hexadecimal.
    note : str
        Where to get a file without a public URL.
    """

    url: str | None
    sha256: str
    note: str = ""


# Commits pinned so that a URL always names the bytes the checksum describes.
_MILSURVEY = ("https://raw.githubusercontent.com/macarbonneau/MILSurvey/"
              "2a656ab9150391dcd5edf67cf42b32508318b435/Datasets")
_LIGHTGBM = ("https://raw.githubusercontent.com/microsoft/LightGBM/"
             "1c774687cf571a2b710267c2ba1bd56244da82b4/examples/lambdarank")
_DERIVED_FTE = ("derived from fte_prtools_mat.zip; without it the loader reads that zip "
                "(MILSurvey's Datasets/FoxElephantTiger/fte.zip)")

#: Every file the loaders read: path in the data home -> where it is published, its SHA-256
#: (the values of the shared data folder's SHA256SUMS; a test keeps them equal).
REMOTE_FILES = {
    "ltr/yahoo_ltr_sample_lightgbm/rank.train": RemoteFile(
        f"{_LIGHTGBM}/rank.train",
        "a0c7201c89120879c14a5059e091f441cbf2a29b8aaef363885ccb1a530448df"),
    "ltr/yahoo_ltr_sample_lightgbm/rank.train.query": RemoteFile(
        f"{_LIGHTGBM}/rank.train.query",
        "40cb5fef637229311cd30fab13cb7fb633b023e86a87ff04ec55db420143d6af"),
    "ltr/yahoo_ltr_sample_lightgbm/rank.test": RemoteFile(
        f"{_LIGHTGBM}/rank.test",
        "3b1219ce117a0a36d2f76c02de7e7831c1d79af0d40f5195c03178bbe26c824b"),
    "ltr/yahoo_ltr_sample_lightgbm/rank.test.query": RemoteFile(
        f"{_LIGHTGBM}/rank.test.query",
        "36dca82ba3bf99201bac3987b00a8fbf6fe5f563e9fa6d0da90e783710a32df4"),
    "mil/birds_hja/hja_birdsong_features.txt": RemoteFile(
        f"{_MILSURVEY}/Birds/hja_birdsong_features.txt",
        "6cd7374a9bd76468b099a3a5e3891e8461ad84a4dfea2c744c0089b73c16d193"),
    "mil/birds_hja/hja_birdsong_instance_labels.txt": RemoteFile(
        f"{_MILSURVEY}/Birds/hja_birdsong_instance_labels.txt",
        "89203119824f4fd0480b8bc705ef1941c7088fb8bceac74bd9b3e39c88cbe0b6"),
    "mil/birds_hja/hja_birdsong_bag_labels.txt": RemoteFile(
        f"{_MILSURVEY}/Birds/hja_birdsong_bag_labels.txt",
        "7094a78e759ec5d5565da5d51bab6a495fd528bc123b99e787eefeb276c31ac2"),
    "mil/birds_hja/hja_birdsong_class_names.txt": RemoteFile(
        f"{_MILSURVEY}/Birds/hja_birdsong_class_names.txt",
        "39d70813536fcb11cef4f4e6cfc85e51bcc6595c53d7b5951c25cf1b20d77947"),
    "mil/fox_tiger_elephant/fte_prtools_mat.zip": RemoteFile(
        f"{_MILSURVEY}/FoxElephantTiger/fte.zip",
        "52ffad88ca54ad986faa8edeb06c617c1d7766045c1c0763270d6651b38be2a7"),
    "mil/fox_tiger_elephant/fox.npz": RemoteFile(
        None, "23d2849b87a02255f582e668a3cda3a4411f896261d10b610b58d0a26b718a3a", _DERIVED_FTE),
    "mil/fox_tiger_elephant/tiger.npz": RemoteFile(
        None, "a5d821eebebaf2303642a9fd27846d7af539f5069231de030cfe8fcfc413798e", _DERIVED_FTE),
    "mil/fox_tiger_elephant/elephant.npz": RemoteFile(
        None, "03415457aa3988ecc6844a4c017eb3fd73efcaa046512fe4656cbab33b8ccf57", _DERIVED_FTE),
    "mil/musk_uci/clean1.data": RemoteFile(
        None, "59e3be669d645a72b2de7e7baa21e7d4e537be918e4320e8dea6aadc9227f379",
        "UCI publishes it only Unix-compressed, as https://archive.ics.uci.edu/ml/"
        "machine-learning-databases/musk/clean1.data.Z: uncompress it (`uncompress "
        "clean1.data.Z`) into the data home"),
}


# --------------------------------------------------------------------------- locating
def get_data_home(data_home=None) -> Path:
    """The folder the loaders read from and download into (scikit-learn's convention).

    The current directory plays no part. The folder is created only when a file is downloaded
    into it.

    Parameters
    ----------
    data_home : str or Path, optional
        Used if given; else the environment variable ``APRANK_DATA`` if it is set and not
        empty; else ``~/aprank_data``.

    Returns
    -------
    Path
        The data home, absolute, with ``~`` expanded.
    """
    if data_home is None:
        data_home = os.environ.get(DATA_ENV_VAR) or DEFAULT_DATA_HOME
    return Path(data_home).expanduser().resolve()


def data_dir(data_home=None) -> Path:
    """:func:`get_data_home`, which must exist already (for callers that only read).

    Parameters
    ----------
    data_home : str or Path, optional
        See :func:`get_data_home`.

    Returns
    -------
    Path
        The data home.

    Raises
    ------
    FileNotFoundError
        If the folder does not exist; the message says how to set ``APRANK_DATA``.
    """
    home = get_data_home(data_home)
    if not home.is_dir():
        source = f"{DATA_ENV_VAR}={os.environ[DATA_ENV_VAR]!r}" if (
            data_home is None and os.environ.get(DATA_ENV_VAR)) else "the data home"
        raise FileNotFoundError(f"{source}: {home} is not an existing folder. {HINT}")
    return home


# --------------------------------------------------------------------------- checking
def file_sha256(path) -> str:
    """SHA-256 of a file, read in chunks.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    str
        The hexadecimal digest.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _remote(rel: str) -> RemoteFile:
    try:
        return REMOTE_FILES[rel]
    except KeyError:
        raise ValueError(f"{rel} is not a file aprank knows (see REMOTE_FILES).") from None


def _check(where, rel: str, actual: str) -> None:
    expected = _remote(rel).sha256
    if actual != expected:
        raise ChecksumError(f"Checksum mismatch for {where}: expected {expected}, got {actual}.")


# --------------------------------------------------------------------------- fetching
#: The URL schemes a mirror of the data folder may have (urllib reads them).
MIRROR_SCHEMES = ("http", "https", "file")


def _source_url(rel: str, base_url) -> str | None:
    """The URL of ``rel``: under ``base_url`` (or ``APRANK_DATA_URL``) when set, a mirror laid
    out like the data folder; else its public URL. ValueError, naming where it came from, for
    a mirror that is not an http(s) or file URL (urllib's own words, "unknown url type", say
    neither)."""
    base = base_url if base_url is not None else os.environ.get(URL_ENV_VAR)
    if base:
        parts = urllib.parse.urlsplit(base)
        if parts.scheme.lower() not in MIRROR_SCHEMES or (
                parts.scheme.lower() != "file" and not parts.netloc):
            where = "base_url" if base_url is not None else URL_ENV_VAR
            raise ValueError(f"{where} must be the http(s) or file URL of a mirror of the data "
                             f"folder (e.g. https://example.org/aprank-data or "
                             f"file:///srv/aprank-data), got {base!r}")
        return f"{base.rstrip('/')}/{rel}"
    return _remote(rel).url


def fetch_file(rel: str, *, data_home=None, base_url=None, download_if_missing: bool = True,
               verify: bool = False, progress=None) -> Path:
    """Path of the data file ``rel`` in the data home, downloading it first if it is missing.

    Parameters
    ----------
    rel : str
        Path relative to the data home, a key of :data:`REMOTE_FILES`.
    data_home : str or Path, optional
        See :func:`get_data_home`.
    base_url : str, optional
        Download from ``<base_url>/<rel>`` instead of the file's public URL (a mirror of the
        data folder). Default: the environment variable ``APRANK_DATA_URL`` if set.
    download_if_missing : bool, default True
        Without it a missing file raises :class:`DataUnavailableError` at once.
    verify : bool, default False
        Also check a cached file's SHA-256 (a download is always checked).
    progress : bool, optional
        Show a progress bar while downloading; by default when stderr is a terminal.

    Raises
    ------
    DataUnavailableError
        The file is not cached and cannot be downloaded (no network, no public copy, or
        ``download_if_missing=False``); the message says how to set ``APRANK_DATA``.
    ChecksumError
        The download (or, with ``verify``, the cached file) has the wrong SHA-256; a bad
        download is deleted, never left in the cache.

    Notes
    -----
    A download is streamed into a partial file beside its destination, unique to the process,
    and moved into place once complete and checked. A response shorter than its
    ``Content-Length``, or a connection closed mid-transfer, is a :class:`DataUnavailableError`
    saying how many bytes came ("incomplete download: got N of M bytes"). Partial files left by
    a process that died mid-transfer (killed, say) are removed by the next download of the
    same file: at once when that process ran on this machine, else once untouched for an
    hour; a download still running in another process is left alone.
    """
    remote = _remote(rel)
    home = get_data_home(data_home)
    path = home / rel
    if path.is_file():
        if verify:
            _check(path, rel, file_sha256(path))
        return path
    url = _source_url(rel, base_url)
    if url is None:
        raise DataUnavailableError(
            f"{rel} is not in {home}, and it has no public verbatim copy ({remote.note}). {HINT}")
    if not download_if_missing:
        raise DataUnavailableError(f"{rel} is not in {home} (download_if_missing=False). {HINT}")
    if progress is None:
        progress = sys.stderr.isatty()
    try:
        _download(url, path, rel, progress)
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        raise DataUnavailableError(
            f"{rel} is not in {home}, and downloading {url} failed ({_reason(exc)}). "
            f"{HINT}") from exc
    return path


def _reason(exc) -> str:
    """What went wrong, without urllib's wrapping (``<urlopen error ...>``)."""
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        return str(exc.reason)
    return str(exc) or type(exc).__name__


class _IncompleteDownload(OSError):
    """The response ended before all its bytes came (fetch_file reports it as unavailable
    data, like any other network failure, not as a checksum mismatch)."""


# A partial file is named after its owner, ``.<name>.<pid>@<host>.<random>.part``: the pid
# tells a dead owner on this machine at once, even right after a kill; the host keeps a pid
# of another machine sharing the data home (NFS) from being looked up here, where it means
# nothing. Owners elsewhere (and pids reused since) are judged by age instead.
_HOST = socket.gethostname().replace(os.sep, "_")


def _part_prefix(path: Path) -> str:
    return f".{path.name}."


def _is_stale(part: Path, prefix: str, now: float) -> bool:
    """Whether the partial file ``part`` was left by a download that is no longer running."""
    try:
        if now - part.stat().st_mtime > STALE_PART_SECONDS:
            return True
    except FileNotFoundError:       # its owner finished (or cleaned) meanwhile
        return False
    owner = part.name[len(prefix):-len(".part")].rpartition(".")[0]
    pid, _, host = owner.partition("@")
    if host != _HOST or not pid.isdigit():
        return False
    return not _alive(int(pid))


def _alive(pid: int) -> bool:
    if os.name != "posix":      # on Windows os.kill(pid, 0) would send CTRL_C_EVENT
        return True
    try:
        os.kill(pid, 0)         # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:     # someone else's process: alive
        return True
    return True


def _remove_stale_parts(path: Path) -> None:
    """Remove the partial downloads of ``path`` whose owner died (see _is_stale)."""
    prefix, now = _part_prefix(path), time.time()
    for part in path.parent.glob(f"{glob.escape(prefix)}*.part"):
        if _is_stale(part, prefix, now):
            try:
                part.unlink()
            except FileNotFoundError:       # another process removed it first
                pass


def _copy_checked(resp, out, size, bar) -> str:
    """Stream the response into ``out``: the SHA-256 of its bytes, once all ``size`` came."""
    digest, got = hashlib.sha256(), 0
    try:
        for chunk in iter(lambda: resp.read(1 << 16), b""):
            out.write(chunk)
            digest.update(chunk)
            got += len(chunk)
            bar.update(len(chunk))
    except http.client.IncompleteRead as exc:       # the connection closed mid-response
        got += len(exc.partial)
        raise _IncompleteDownload(
            f"incomplete download: got {got} of {size} bytes" if size else
            f"incomplete download: got {got} bytes, then the connection closed") from None
    # http.client ends a read quietly when the connection closes before Content-Length bytes
    if size is not None and got != size:
        raise _IncompleteDownload(f"incomplete download: got {got} of {size} bytes")
    return digest.hexdigest()


def _download(url: str, path: Path, rel: str, progress: bool) -> None:
    """Stream ``url`` into a partial file beside ``path``, unique to this process; move it
    there once complete and its SHA-256 matches (so an interrupted or corrupted download never
    looks like a cached file). A failed download also removes the folders it created; one
    killed leaves its partial file, which the next download of ``path`` removes."""
    created = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    tmp, done = None, False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_parts(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part",
                                   prefix=f"{_part_prefix(path)}{os.getpid()}@{_HOST}.")
        with os.fdopen(fd, "wb") as out, \
                urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as resp:
            size = int(resp.headers.get("Content-Length") or 0) or None
            with tqdm(total=size, unit="B", unit_scale=True, desc=f"downloading {path.name}",
                      disable=not progress, leave=False) as bar:
                sha256 = _copy_checked(resp, out, size, bar)
        _check(url, rel, sha256)
        os.replace(tmp, path)
        done = True
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        for folder in created if not done else ():      # innermost first
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
