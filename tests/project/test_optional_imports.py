"""The optional subpackages, imported where their extra is missing, say which extra to install
(``aprank.torch``: ``aprank[torch]``; ``aprank.dask``: ``aprank[dask]``; ``aprank.boost``:
``aprank[boost]``), and ``import aprank``
needs none of them."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def import_without(module, missing):
    """Import ``module`` in a fresh interpreter where ``missing`` cannot be imported (a None
    entry in sys.modules makes ``import missing`` raise ModuleNotFoundError)."""
    code = (f"import sys\nsys.modules[{missing!r}] = None\n"
            f"try:\n    import {module}\n"
            f"except ImportError as err:\n"
            f"    print(type(err).__name__, err.name, err)\n"
            f"else:\n    print('imported')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.parametrize("module,missing,extra,error", [
    # ModuleNotFoundError naming torch: what the tools catch to leave out torch's commands
    ("aprank.torch", "torch", "aprank[torch]", "ModuleNotFoundError torch "),
    ("aprank.dask", "dask", "aprank[dask]", "ImportError None "),
    ("aprank.boost", "lightgbm", "aprank[boost]", "ModuleNotFoundError lightgbm "),
])
def test_a_missing_extra_is_named_with_its_install_command(module, missing, extra, error):
    said = import_without(module, missing)
    assert said.startswith(error), said
    assert f'pip install "{extra}"' in said or f"pip install '{extra}'" in said, said
    assert module in said, said


@pytest.mark.parametrize("missing", ["torch", "dask", "lightgbm"])
def test_import_aprank_needs_no_extra(missing):
    assert import_without("aprank", missing) == "imported"
