"""scikit-learn's private helpers that aprank uses are reached through aprank.sklearn_compat
alone, exist in every release the declared range admits (this module runs in the minimum lane
too), and the range is bounded above by a release the tests have not run on."""
import ast
import re
import tomllib
from pathlib import Path

import pytest
import sklearn
from sklearn.utils.fixes import parse_version

import aprank.sklearn_compat as compat

pytestmark = pytest.mark.min_versions   # also run against the declared minimum versions (.ci/run)

REPOSITORY = Path(__file__).resolve().parents[2]
#: every Python file of the repository that could import scikit-learn
SOURCES = sorted(f for folder in ("aprank", "tests", "benchmarks", "experiments", "figures", "docs")
                 for f in (REPOSITORY / folder).rglob("*.py"))
COMPAT = REPOSITORY / "aprank" / "sklearn_compat.py"


def private_sklearn_imports(source: str) -> list:
    """(line, dotted name) of each import of a private scikit-learn module or name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        else:
            continue
        found += [(line, dotted) for line, dotted in names if dotted.split(".")[0] == "sklearn"
                  and any(p.startswith("_") and not p.startswith("__")
                          for p in dotted.split(".")[1:])]
    return found


def test_only_the_compat_module_imports_private_sklearn_names():
    assert COMPAT in SOURCES and REPOSITORY / "aprank" / "learn" / "_checks.py" in SOURCES
    bad = [f"{path.relative_to(REPOSITORY)}:{line} imports {dotted}"
           for path in SOURCES if path != COMPAT
           for line, dotted in private_sklearn_imports(path.read_text())]
    assert not bad, "\n".join(bad)


def test_the_rule_sees_each_form_of_private_import():
    source = ("from sklearn.utils._param_validation import Interval\n"
              "from sklearn.base import _fit_context\n"
              "import sklearn.utils._tags\n"
              "from sklearn.utils import check_random_state\n"
              "from sklearn.base import __version__\n")
    assert [dotted for _, dotted in private_sklearn_imports(source)] == [
        "sklearn.utils._param_validation.Interval", "sklearn.base._fit_context",
        "sklearn.utils._tags"]
    assert private_sklearn_imports(COMPAT.read_text())      # the module itself is read


def test_every_compat_name_is_scikit_learns_and_works():
    for name in compat.__all__:
        assert getattr(compat, name).__module__.startswith("sklearn."), name
    # what the estimators rely on: the error's classes, a declared check, the weights' check
    assert issubclass(compat.InvalidParameterError, ValueError)
    assert issubclass(compat.InvalidParameterError, TypeError)

    @compat.validate_params({"k": [compat.StrOptions({"a", "b"})]},
                            prefer_skip_nested_validation=True)
    def f(k):
        return k

    assert f("a") == "a"
    with pytest.raises(compat.InvalidParameterError, match="'k' parameter"):
        f("c")
    weights = compat.check_sample_weight(None, [[0.0], [1.0]], dtype=float)
    assert weights.tolist() == [1.0, 1.0]


def test_the_declared_range_holds_the_installed_release_and_is_bounded_above():
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]
    spec = next(r for r in project["dependencies"] if r.startswith("scikit-learn"))
    lower = re.search(r">=\s*([\d.]+)", spec).group(1)
    upper = re.search(r"<\s*([\d.]+)", spec)
    assert upper is not None, f"{spec}: private helpers need an upper bound"
    installed = parse_version(sklearn.__version__)
    assert parse_version(lower) <= installed < parse_version(upper.group(1)), spec
