"""The wheel: built from this checkout, it ships the compiled modules (stripped), the headers
the kernels share, ``py.typed`` and the metadata, and none of the C++ Cython generates."""
import email
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import aprank

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow       # pip builds the wheel, compiling every kernel (about a minute)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                           "--wheel-dir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = out.glob("aprank-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_lists_what_it_ships(wheel):
    files = {info.filename: info.file_size for info in wheel.infolist()}
    listing = "\n".join(f"{size:>10} {name}" for name, size in sorted(files.items()))
    print(listing)          # its files and sizes, for the record (pytest -s shows them)
    assert not [name for name in files if name.endswith((".cpp", ".c"))], listing
    assert "aprank/py.typed" in files
    assert {"aprank/inference/_kernel.pxd", "aprank/inference/_order.hpp",
            "aprank/inference/topk/_cstar.hpp", "aprank/inference/pairwise/_maxflow.hpp"} <= set(files)
    modules = {name: size for name, size in files.items() if name.endswith(".so")}
    assert len(modules) == 14, listing      # one per extension of setup.py
    # stripped: each module well under a megabyte (with debug symbols they were several)
    assert max(modules.values()) < 1_000_000, listing
    assert sum(files.values()) < 5_000_000, listing
    # the tools beside the package are not in it
    assert not [name for name in files if name.split("/")[0] in ("benchmarks", "experiments",
                                                                   "figures", "tests", "docs")]


def test_the_wheel_has_one_version_and_its_metadata(wheel):
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    meta = email.message_from_bytes(wheel.read(name))
    assert meta["Version"] == aprank.__version__
    assert "Typing :: Typed" in meta.get_all("Classifier")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert meta["Requires-Python"] == declared == ">=3.11"     # scikit-learn 1.8's floor


def test_installing_the_wheel_does_not_install_pymaxflow(wheel):
    """The pairwise kind cuts with its own max-flow (issue 24 item 2): PyMaxflow is required
    only with the test extra (a second reference there)."""
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    requires = email.message_from_bytes(wheel.read(name)).get_all("Requires-Dist")
    maxflow = [r for r in requires if r.lower().startswith("pymaxflow")]
    assert maxflow and all('extra == "test"' in r for r in maxflow), requires
