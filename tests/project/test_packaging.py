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

ROOT = Path(__file__).resolve().parents[2]
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
    assert {"aprank/inference/_kernel.pxd", "aprank/_order.hpp",
            "aprank/inference/topk/_cstar.hpp", "aprank/inference/pairwise/_maxflow.hpp",
            "aprank/inference/pairwise/_smallcut.hpp"} <= set(files)
    modules = {name: size for name, size in files.items() if name.endswith(".so")}
    assert len(modules) == 18, listing      # the 17 kernels and the utility code they share
    # stripped: each module well under a megabyte (with debug symbols each would be several)
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
    """The pairwise kind cuts with its own max-flow: PyMaxflow is required
    only with the test extra (a second reference there)."""
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    requires = email.message_from_bytes(wheel.read(name)).get_all("Requires-Dist")
    maxflow = [r for r in requires if r.lower().startswith("pymaxflow")]
    assert maxflow and all('extra == "test"' in r for r in maxflow), requires


def test_the_readme_names_every_runtime_dependency_and_its_licence():
    """The README's License section lists each runtime dependency with the licence
    its installed metadata declares (License-Expression, else License, else the classifier)."""
    import importlib.metadata
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    section = (ROOT / "README.md").read_text().split("## License", 1)[1]
    rows = dict(re.findall(r"^\| ([\w.-]+) \| ([^|]+?) \|$", section, flags=re.M))
    for requirement in project["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
        meta = importlib.metadata.metadata(name)
        classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or []
                       if c.startswith("License ::")]
        declared = meta.get("License-Expression") or (
            meta.get("License") if meta.get("License") and len(meta.get("License")) < 60
            else classifiers[0])
        assert name in rows, f"README's License section does not list {name}"
        assert rows[name].startswith(declared), (name, rows[name], declared)
    assert "PyMaxflow" not in " ".join(project["dependencies"])
