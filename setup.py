"""Build script: the list of compiled extensions, nothing else (metadata is in pyproject.toml)."""
import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

KERNELS = ["_driver_cy", "_greedy_cy", "_search_cy", "_select_cy", "_optranks_cy", "_zero_one_cy",
           "_cstar_cy", "_enumerate_cy", "_split_cy"]

extensions = [
    Extension(
        f"aprank.inference.{name}",
        [f"aprank/inference/{name}.pyx"],
        language="c++",
        include_dirs=["aprank/inference", np.get_include()],
        extra_compile_args=["-O3", "-std=c++17"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in KERNELS
] + [
    # the working-set QP's active-set steps (aprank/learn/_qp.py)
    Extension("aprank.learn._qp_cy", ["aprank/learn/_qp_cy.pyx"], language="c++",
              include_dirs=[np.get_include()], extra_compile_args=["-O3", "-std=c++17"],
              define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]),
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
