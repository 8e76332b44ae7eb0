"""What a kept result of an experiment ran, hashed: the experiments that keep their finished
parts (``latent``'s folds, ``nonlinear``'s units) read a part back only under the same stamp."""
from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["source_fingerprint", "SOURCE_SUFFIXES", "KEPT"]

#: The package's source: Python, Cython and the kernels' shared C++.
SOURCE_SUFFIXES = (".py", ".pyx", ".pxd", ".hpp")
#: Where the experiments keep their finished parts unless told otherwise: a cache beside the
#: code, out of git (.gitignore), never source; the tables made from them are in figures/tables.
KEPT = Path(__file__).resolve().parent / "_kept"


def source_fingerprint(not_run=(), files=(), extra: str = "",
                       suffixes=SOURCE_SUFFIXES) -> str:
    """A short hash of the package's source (files ending in ``suffixes``) outside the folders
    ``not_run`` (paths relative to the package, e.g. ``"dask"``), of the ``files`` given (the
    experiment's own modules) and of ``extra`` (settings, library versions)."""
    import aprank
    root = Path(aprank.__file__).resolve().parent
    package = sorted(f for f in root.rglob("*") if f.suffix in suffixes
                     and not any(f.relative_to(root).as_posix().startswith(d) for d in not_run))
    h = hashlib.sha256()
    for f in [*package, *files]:
        h.update(f.name.encode())
        h.update(Path(f).read_bytes())
    h.update(extra.encode())
    return h.hexdigest()[:12]
