"""Learners: the 1-slack cutting plane (any ``aprank.models`` model), CCCP for latent models,
the scikit-learn estimators built on them (HOBSVM and HOAPSVM of Dokania et al. 2014 among them),
and the c-star precision@k model learned by subgradient descent, and the weakly supervised rankers
of Behl (2015) (LatentAPSVM, LatentSSVM, LatentSVM); APSVMCV, NDCGSVMCV and BinarySVMCV choose C
by cross-validation (a :class:`GridEdgeWarning` when the choice lies at an edge of the grid
where a C beyond it may score higher). A fit that leaves out queries without a relevant sample
(the default, ``empty="skip"``) says so in an :class:`EmptyQueryWarning`; a fit without ``qid``
is one ranking, and a score that drops the queries of the fit says so in a
:class:`OneQueryWarning`. A fit estimated to take over a minute says so before its work in a
:class:`SlowFitWarning`, and Ctrl-C stops any fit within about a second, leaving the estimator
as it was. The cutting plane's solvers are named in a registry (:func:`solvers`); a
:class:`Solver` of your own joins it by :func:`register_solver`. :class:`BaseRanker` is what
the rank SVMs and the boosted rankers of :mod:`aprank.boost` share: the training ranking's
break-even threshold, the refused keywords, the state-restoring fit and these warnings."""
from aprank.learn._cccp import CCCPResult, cccp
from aprank.learn._checks import RelevantClassWarning
from aprank.learn._cstar import CStarPrecisionAtK, break_even_precision
from aprank.learn._cutting_plane import CuttingPlaneResult, WorkingSet, cutting_plane
from aprank.learn._cv import APSVMCV, NDCGSVMCV, BinarySVMCV, GridEdgeWarning
from aprank.learn._estimators import APSVM, NDCGSVM, APSVMAppx, BinarySVM
from aprank.learn._high_order import HOAPSVM, HOBSVM
from aprank.learn._latent import LatentAPSVM, LatentSSVM, LatentSVM
from aprank.learn._query_warnings import EmptyQueryWarning, OneQueryWarning
from aprank.learn._ranker import BaseRanker
from aprank.learn._slow_fits import SlowFitWarning
from aprank.learn._solvers import (
    STALL_ITERATIONS,
    CuttingPlaneRun,
    EvaluatedPoint,
    Solver,
    SolverInfo,
    register_solver,
    solvers,
    unregister_solver,
)

__all__ = ["BinarySVM", "APSVM", "NDCGSVM", "APSVMAppx", "APSVMCV", "NDCGSVMCV", "BinarySVMCV",
           "cutting_plane", "CuttingPlaneResult", "WorkingSet", "Solver", "CuttingPlaneRun",
           "EvaluatedPoint", "SolverInfo", "register_solver", "unregister_solver", "solvers",
           "cccp", "CCCPResult", "CStarPrecisionAtK", "break_even_precision",
           "HOBSVM", "HOAPSVM", "LatentAPSVM", "LatentSSVM", "LatentSVM", "EmptyQueryWarning",
           "OneQueryWarning", "SlowFitWarning", "GridEdgeWarning", "RelevantClassWarning",
           "BaseRanker", "STALL_ITERATIONS"]
