"""The repository's benchmarks: tools beside the ``aprank`` package, never installed with it.

Run from the repository root:

    python -m benchmarks [--cstar | --pairwise | --latent | --many-queries | --iteration |
                          --torch | --fit]
    python -m benchmarks.dask_bench          # one cutting-plane iteration on a Dask cluster

* :mod:`benchmarks.ranking` -- every algorithm against ``numpy.argsort`` (the main table) and
  two threads calling ``infer`` at once;
* :mod:`benchmarks.iteration` -- one cutting-plane iteration split into its parts (``--iteration``);
* :mod:`benchmarks.cstar` -- the c-star top-k kernel against the query size (``--cstar``);
* :mod:`benchmarks.pairwise` -- the max-marginals of the pairwise kind (``--pairwise``);
* :mod:`benchmarks.latent` -- the most violated constraint of the latent learners (``--latent``);
* :mod:`benchmarks.many_queries` -- inference over many small queries (``--many-queries``);
* :mod:`benchmarks.query_metrics` -- the metrics over many queries against ``infer_batch``;
* :mod:`benchmarks.partition_paths` -- the exact AP algorithms on every partition path;
* :mod:`benchmarks.fit_times` -- fit times of the structured SVMs next to liblinear (``--fit``);
* :mod:`benchmarks.cv_path` -- the C path of the ``*CV`` searches, and what looser stopping
  rules would take;
* :mod:`benchmarks.torch_bench` -- the PyTorch AP hinge against ``torch.sort`` (``--torch``);
* :mod:`benchmarks.dask_bench` -- a Dask LocalCluster against one process;
* :mod:`benchmarks.timing` -- what the tables share: how a call is timed and its memory traced;
* :mod:`benchmarks.machine`, :mod:`benchmarks.cli` -- what the tools share (also
  ``experiments/`` and the scripts of ``figures/``): the line naming the machine, and command
  lines whose errors are one line.

They import only public names of ``aprank`` (``tests/project/test_architecture.py``). The quick
check of an install stays in the package: ``python -m aprank bench --quick``.
"""
