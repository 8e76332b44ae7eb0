"""The scikit-learn names aprank uses that scikit-learn keeps private, in one place.

aprank's estimators validate their parameters with scikit-learn's own machinery (so that a bad
parameter raises the ``InvalidParameterError`` a scikit-learn user knows, with the same wording)
and check sample weights as scikit-learn's estimators do. Those helpers live in private modules
of scikit-learn, which a minor release may move or change. Every use goes through this module,
and ``pyproject.toml`` bounds scikit-learn to the releases the tests run on: the minimum lane of
CI runs the lowest (1.8), the user lane the newest below the bound. Moving the bound up is a
change of this module, checked by its tests (``tests/project/test_sklearn_compat.py``), and
nothing else.
"""
from sklearn.base import _fit_context as fit_context
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import _check_sample_weight as check_sample_weight

__all__ = ["Interval", "InvalidParameterError", "StrOptions", "check_sample_weight",
           "fit_context", "validate_params"]
