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
try:
    import torch  # noqa: F401
except ImportError as err:    # the optional extra is missing: say how to get it
    # a ModuleNotFoundError naming torch, as a bare one would be, so that callers which leave
    # out what needs torch keep catching it; the message says what to install
    raise ModuleNotFoundError(
        "aprank.torch needs PyTorch: pip install \"aprank[torch]\" (for a CPU build first: pip "
        f"install torch --index-url https://download.pytorch.org/whl/cpu) ({err})",
        name="torch") from err

from aprank.torch._loss import (
    BACKENDS,
    REDUCTIONS,
    APHingeLoss,
    NDCGHingeLoss,
    ap_hinge_loss,
    hinge_loss,
    ndcg_hinge_loss,
)
from aprank.torch._ops import HingeTerms, hinge_terms

__all__ = ["hinge_loss", "ap_hinge_loss", "ndcg_hinge_loss", "APHingeLoss", "NDCGHingeLoss",
           "hinge_terms", "HingeTerms", "BACKENDS", "REDUCTIONS"]
