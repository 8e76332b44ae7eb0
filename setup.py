"""Build script: the list of compiled extensions, nothing else (metadata is in pyproject.toml)."""
import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

KERNELS = ["_driver_cy", "_greedy_cy", "_search_cy", "_select_cy", "_optranks_cy", "_zero_one_cy",
           "_cstar_cy", "_enumerate_cy", "_split_cy"]


def compiled(module: str, *include_dirs: str) -> Extension:
    """The C++ extension ``module`` (a dotted name) built from its .pyx beside it."""
    return Extension(
        module,
        [module.replace(".", "/") + ".pyx"],
        language="c++",
        include_dirs=[*include_dirs, np.get_include()],
        extra_compile_args=["-O3", "-std=c++17"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


extensions = [compiled(f"aprank.inference.{name}", "aprank/inference") for name in KERNELS] + [
    compiled("aprank._validation_cy"),      # the counting sort of query ids (validation.py)
    compiled("aprank.learn._qp_cy"),        # the working-set QP's active-set steps (learn/_qp.py)
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
