"""Scale-out on Dask (``pip install aprank[dask]``): rank SVMs on data spread over a cluster.

* :class:`DaskAPSVM`, :class:`DaskNDCGSVM`, :class:`DaskBinarySVM`: the estimators of
  ``aprank.learn`` for ``dask.array`` / ``dask.dataframe`` inputs (XGBoost's and LightGBM's Dask
  conventions), with the same parameters, attributes and results. The 1-slack cutting plane
  runs on the client; each iteration ships w to the partitions, which return their part of
  the cut (inference and X'c); the working-set QP stays on the client.
* :func:`infer`: exact AP / NDCG inference for one giant query split over a dask array.
* :func:`ranking_model`: the structured model those estimators train (its ``most_violated``
  runs on the cluster), for timing an iteration or a cutting plane of one's own.

Everything runs on Dask's current scheduler: a ``distributed.Client`` pointed at a cluster
makes it run there.
"""
try:
    import dask  # noqa: F401
    import dask.dataframe  # noqa: F401
except ImportError as err:    # the optional extra is missing: say how to get it
    raise ImportError(f"aprank.dask needs Dask: pip install 'aprank[dask]' ({err})") from err

from aprank.dask._estimators import DaskAPSVM, DaskBinarySVM, DaskNDCGSVM
from aprank.dask._models import ranking_model
from aprank.dask._split import SplitResult, infer

__all__ = ["DaskAPSVM", "DaskNDCGSVM", "DaskBinarySVM", "infer", "SplitResult", "ranking_model"]
