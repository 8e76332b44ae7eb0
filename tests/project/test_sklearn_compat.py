"""The scikit-learn functions aprank.sklearn_compat holds exist and work in every release the
declared range admits (this module runs in the minimum lane too), and the range is bounded above
by a release the tests have not run on. That no other module imports a private scikit-learn
name is the architecture test's rule (test_architecture.py)."""
import re
import tomllib
from pathlib import Path

import pytest
import sklearn
from sklearn.utils.fixes import parse_version

import aprank.sklearn_compat as compat

pytestmark = pytest.mark.min_versions   # also run against the declared minimum versions (.ci/run)

REPOSITORY = Path(__file__).resolve().parents[2]


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
