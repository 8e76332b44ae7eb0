"""Gradient-boosted trees on the exact AP and NDCG hinges (the optional extra ``aprank[boost]``).

``import aprank`` never imports LightGBM; this subpackage does. :class:`HingeObjective` is the
structural hinge of AP or NDCG as a LightGBM or XGBoost custom objective: its gradient is
:func:`aprank.infer_batch`'s subgradient (exact, ties included). :class:`APBoostRanker` and
:class:`NDCGBoostRanker` are scikit-learn estimators that boost LightGBM trees on it and take
``qid``.

>>> import numpy as np
>>> from aprank.boost import APBoostRanker
>>> X = np.random.default_rng(0).normal(size=(200, 3))
>>> ranker = APBoostRanker(n_estimators=20).fit(X, X[:, 0] > 0.5)
>>> round(ranker.score(X, X[:, 0] > 0.5), 2)
1.0
"""
try:
    import lightgbm  # noqa: F401
except ImportError as err:    # the optional extra is missing: say how to get it
    # a ModuleNotFoundError naming lightgbm, as a bare one would be, so that callers which
    # leave out what needs it keep catching it; the message says what to install
    raise ModuleNotFoundError(
        f"aprank.boost needs LightGBM: pip install \"aprank[boost]\" ({err})",
        name="lightgbm") from err

from aprank.boost._estimators import APBoostRanker, NDCGBoostRanker
from aprank.boost._objective import HESSIANS, LOSSES, HingeObjective

__all__ = ["HingeObjective", "APBoostRanker", "NDCGBoostRanker", "HESSIANS", "LOSSES"]
