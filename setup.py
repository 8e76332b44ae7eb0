"""Build script: the list of compiled extensions, nothing else (metadata is in pyproject.toml)."""
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

#: The compiled kernels, by the folder of the kind (or package) they belong to.
KERNELS = {
    "aprank/inference/ranking": ["_driver_cy", "_greedy_cy", "_search_cy", "_select_cy",
                                 "_optranks_cy"],
    "aprank/inference/labelling": ["_zero_one_cy"],
    "aprank/inference/topk": ["_cstar_cy"],
    "aprank/inference/pairwise": ["_components_cy", "_enumerate_cy",   # grouping, enumeration
                                  "_maxflow_cy"],   # _maxflow_cy: BK + Kohli-Torr, dense cuts
    "aprank/inference/latent": ["_greedy_cy"],     # appendix A's greedy (Behl 2015), certified splits
    "aprank/dask": ["_split_cy"],       # the steps of one query split over machines (_steps.py)
}
#: The module of the Cython utility code the kernels share (Cython >= 3.1 writes it).
SHARED_UTILITY = "aprank._cyutility"
#: Where the kernels' shared C++ (_order.hpp, _kernel.pxd's inline functions) lives.
SHARED = "aprank/inference"


def compiled(module: str, *include_dirs: str) -> Extension:
    """The C++ extension ``module`` (a dotted name) built from its .pyx beside it."""
    return Extension(
        module,
        [module.replace(".", "/") + ".pyx"],
        language="c++",
        include_dirs=[*include_dirs, np.get_include()],
        # -g0 overrides the interpreter's -g: the debug information, stripped at link time
        # anyway, cost about a fifth of the compile time
        extra_compile_args=["-O3", "-g0", "-std=c++17"],
        # no debug symbols in the installed modules (they were most of the wheel's size)
        extra_link_args=["-s"] if sys.platform.startswith("linux") else [],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


extensions = [
    # Cython's utility code (typed memoryviews above all, a megabyte of C++ per module), compiled
    # once here and imported by the others instead of once into each of them; first, as the
    # longest compile, so that the other cores take the kernels meanwhile
    Extension(SHARED_UTILITY, [SHARED_UTILITY.replace(".", "/") + ".cpp"],
              extra_compile_args=["-O2", "-g0"],
              extra_link_args=["-s"] if sys.platform.startswith("linux") else []),
] + [compiled(f"{folder.replace('/', '.')}.{name}", folder, SHARED)
              for folder, names in KERNELS.items() for name in names] + [
    compiled("aprank._validation_cy"),      # the counting sort of query ids (validation.py)
    compiled("aprank._metrics_cy", SHARED),  # every query's metric value (metrics.py)
    compiled("aprank.learn._qp_cy"),        # the working-set QP's active-set steps (learn/_qp.py)
    compiled("aprank.learn._dual_cd_cy"),   # dual coordinate descent's epochs (learn/_dual_cd.py)
    compiled("aprank.models._block_sums_cy"),  # a multi-cut's block sums of rows (models/_ranking.py)
]

#: Both the translation to C++ and the compilation run on every core.
JOBS = os.cpu_count() or 1

setup(
    options={"build_ext": {"parallel": JOBS}},
    ext_modules=cythonize(
        extensions,
        nthreads=JOBS,
        shared_utility_qualified_name=SHARED_UTILITY,
        language_level="3",
        compiler_directives={
            # Bounds are validated once in Python (aprank/validation.py) before any kernel runs.
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
