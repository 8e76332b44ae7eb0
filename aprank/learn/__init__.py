"""Structured SVM learners (cutting plane, scikit-learn API) built on aprank's inference."""
from aprank.learn._estimators import APSVM, NDCGSVM, APSVMAppx, BinarySVM

__all__ = ["BinarySVM", "APSVM", "NDCGSVM", "APSVMAppx"]
