"""Build script: the list of compiled extensions, nothing else (metadata is in pyproject.toml)."""
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
#: Where the kernels' shared C++ (_order.hpp, _kernel.pxd's inline functions) lives.
SHARED = "aprank/inference"


def compiled(module: str, *include_dirs: str) -> Extension:
    """The C++ extension ``module`` (a dotted name) built from its .pyx beside it."""
    return Extension(
        module,
        [module.replace(".", "/") + ".pyx"],
        language="c++",
        include_dirs=[*include_dirs, np.get_include()],
        extra_compile_args=["-O3", "-std=c++17"],
        # no debug symbols in the installed modules (they were most of the wheel's size)
        extra_link_args=["-s"] if sys.platform.startswith("linux") else [],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


extensions = [compiled(f"{folder.replace('/', '.')}.{name}", folder, SHARED)
              for folder, names in KERNELS.items() for name in names] + [
    compiled("aprank._validation_cy"),      # the counting sort of query ids (validation.py)
    compiled("aprank._metrics_cy", SHARED),  # every query's metric value (metrics.py)
    compiled("aprank.learn._qp_cy"),        # the working-set QP's active-set steps (learn/_qp.py)
    compiled("aprank.learn._dual_cd_cy"),   # dual coordinate descent's epochs (learn/_dual_cd.py)
    compiled("aprank.models._block_sums_cy"),  # a multi-cut's block sums of rows (models/_ranking.py)
]

setup(
    ext_modules=cythonize(
        extensions,
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
