"""Every minimum version that pyproject.toml declares is tested: .ci/run's second lane installs
the dependencies pinned at their lower bounds and runs the tests marked ``min_versions``."""
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def minimum_requirements():
    out = subprocess.run([sys.executable, str(ROOT / ".ci" / "minimum_requirements.py")],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def lower_bounds(requirements):
    bounds = {}
    for requirement in requirements:
        match = re.match(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*>=\s*([^,;\s]+)", requirement)
        if match:
            bounds[match.group(1).lower()] = match.group(2)
    return bounds


def test_the_lane_pins_every_declared_minimum():
    declared = PROJECT["dependencies"] + PROJECT["optional-dependencies"]["test"] + \
        PROJECT["optional-dependencies"]["dask"]
    pinned = {re.split(r"[\[=]", r)[0].lower(): r.split("==")[1]
              for r in minimum_requirements() if "==" in r}
    assert pinned == lower_bounds(declared)
    assert {"numpy", "scipy", "scikit-learn", "quadprog", "pymaxflow", "dask"} <= set(pinned)
    assert not [r for r in PROJECT["dependencies"] if r.lower().startswith("pymaxflow")]


def test_ci_runs_the_minimum_versions_lane_after_the_main_one():
    ci = (ROOT / ".ci" / "run").read_text()
    main = ci.index('pip install -e ".[test]" && pytest')
    lane = ci.index("pip install --quiet $(python .ci/minimum_requirements.py)")
    assert main < lane < ci.index("python -m pytest -n auto --dist loadfile -m min_versions")


def test_scikit_learn_minimum_is_one_the_routing_examples_run_on():
    """1.6.1 and 1.7.2 raise UnsetMetadataPassedError on the Pipeline + GridSearchCV +
    sample_weight example of docs/learning.md (measured in the lane with each pinned)."""
    minimum = lower_bounds(PROJECT["dependencies"])["scikit-learn"]
    assert tuple(int(p) for p in minimum.split(".")[:2]) >= (1, 8)
    assert PROJECT["requires-python"] == ">=3.11"     # scikit-learn 1.8's own floor


@pytest.mark.slow       # a collection of the whole suite: about 10 s
def test_the_lane_covers_inference_learning_docs_and_extras():
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", "-m", "min_versions"],
                         cwd=ROOT, capture_output=True, text=True).stdout
    files = {line.split("::")[0] for line in out.splitlines() if "::" in line}
    for name in ("inference/test_infer.py", "learn/test_learn.py", "test_metrics.py",
                 "documentation/test_readme.py"):
        assert f"tests/{name}" in files, out[-2000:]
    assert "tests/documentation/test_docs.py::test_python_blocks_run[learning.md]" in out
