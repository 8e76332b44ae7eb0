"""The repository's experiments on real data: tools beside the ``aprank`` package, never
installed with it.

Run from the repository root: ``python -m experiments NAME [--quick] [--jobs N] [--out DIR]``
(``python -m experiments --help`` lists every NAME, the data it needs and how long it takes).
Each writes one Markdown table, by default into ``figures/tables/NAME.md``, which the README
includes.

* :mod:`experiments.supervised` -- digits, birds, yahoo, cstar, high-order;
* :mod:`experiments.latent` -- latent (multiple-instance data);
* :mod:`experiments.torch_mlp` -- torch-mlp (needs ``aprank[torch]``);
* :mod:`experiments.torch_peers` -- torch-peers, the AP hinge beside LibAUC's and
  pytorch-metric-learning's losses (:mod:`experiments.peer_tasks`, :mod:`experiments.peer_losses`).

They import only public names of ``aprank`` (checked by ``tests/project/test_architecture.py``).
"""
