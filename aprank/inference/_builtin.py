"""The built-in problem kinds and algorithms, put in the registry when aprank.inference loads.

Each kind is a folder of the same shape (see ``_protocol.py``) whose ``__init__`` names its
``KINDS`` and ``ALGORITHMS``; a new kind joins by being named here.
"""
from aprank.inference import labelling, latent, pairwise, ranking, topk
from aprank.inference._registry import add, add_kind

#: The kind folders, in the order their kinds and algorithms are listed.
KIND_PACKAGES = (ranking, labelling, topk, pairwise, latent)

for _package in KIND_PACKAGES:
    for _kind in _package.KINDS:
        add_kind(_kind)
for _package in KIND_PACKAGES:
    for _algorithm in _package.ALGORITHMS:
        add(_algorithm)
