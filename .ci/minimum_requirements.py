"""Print, one per line, the requirements of aprank and of its test and dask extras pinned to
their declared minimum (``name>=1.8`` becomes ``name==1.8``), for .ci/run's second lane: every
minimum that pyproject.toml declares is one the tests marked ``min_versions`` pass with.
Requirements without a lower bound (hypothesis, pandas, cloudpickle) are printed as declared;
an upper bound is dropped, as the minimum satisfies it."""
import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
#: the extras whose minimums the lane installs: torch is left out, since no build of PyTorch
#: older than the declared minimum's exists on the machines to test (see pyproject.toml)
EXTRAS = ("test", "dask")


def pinned(requirement: str) -> str:
    """``name[extras]>=v,<w`` -> ``name[extras]==v``; unbounded requirements unchanged."""
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+(?:\[[^\]]*\])?)\s*(.*?)\s*", requirement)
    name, spec = match.groups()
    lower = re.search(r">=\s*([^,;\s]+)", spec)
    return f"{name}=={lower.group(1)}" if lower else requirement.strip()


def minimum_requirements(pyproject: Path = PYPROJECT) -> list:
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in EXTRAS:
        requirements += project["optional-dependencies"][extra]
    unique = {}
    for requirement in requirements:
        unique.setdefault(pinned(requirement), None)
    return list(unique)


if __name__ == "__main__":
    sys.stdout.write("\n".join(minimum_requirements()) + "\n")
