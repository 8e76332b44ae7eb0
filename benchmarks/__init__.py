"""The repository's benchmarks: tools beside the ``aprank`` package, never installed with it.

Run from the repository root:

    python -m benchmarks [--cstar | --pairwise | --latent | --iteration | --torch | --fit]
    python -m benchmarks.dask_bench          # one cutting-plane iteration on a Dask cluster

* :mod:`benchmarks.bench` -- every algorithm against ``numpy.argsort``, and the sections;
* :mod:`benchmarks.fit_times` -- fit times of the structured SVMs next to liblinear (``--fit``);
* :mod:`benchmarks.torch_bench` -- the PyTorch AP hinge against ``torch.sort`` (``--torch``);
* :mod:`benchmarks.dask_bench` -- a Dask LocalCluster against one process;
* :mod:`benchmarks.machine`, :mod:`benchmarks.cli` -- what the tools share (also
  ``experiments/`` and the scripts of ``figures/``): the line naming the machine, and command
  lines whose errors are one line.

They import only public names of ``aprank`` (``tests/test_tools_architecture.py``). The quick
check of an install stays in the package: ``python -m aprank bench --quick``.
"""
