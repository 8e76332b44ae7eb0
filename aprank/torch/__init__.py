"""Exact structured-hinge AP and NDCG losses for PyTorch (the optional extra ``aprank[torch]``).

``import aprank`` never imports torch; this subpackage does. Forward is the structured hinge
of each query (the ``objective`` of :func:`aprank.infer`), backward its subgradient
coef(R_hat) - coef(R*). CPU tensors go through the compiled kernels; tensors on any other
device (CUDA) stay there and go through an exact implementation in torch operations, which
computes the same ranks.

>>> import torch, aprank.torch
>>> scores = torch.tensor([2.0, 0.5, 1.0, -1.0], requires_grad=True)
>>> loss = aprank.torch.ap_hinge_loss(scores, torch.tensor([1, 0, 1, 0]))
>>> loss.backward()
"""
from aprank.torch._loss import (
    BACKENDS, REDUCTIONS, APHingeLoss, NDCGHingeLoss, ap_hinge_loss, hinge_loss, ndcg_hinge_loss,
)
from aprank.torch._ops import HingeTerms, hinge_terms

__all__ = ["hinge_loss", "ap_hinge_loss", "ndcg_hinge_loss", "APHingeLoss", "NDCGHingeLoss",
           "hinge_terms", "HingeTerms", "BACKENDS", "REDUCTIONS"]
