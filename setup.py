"""Build script: the list of compiled extensions and a build cache (metadata is in pyproject.toml).

Every ``pip install`` builds in fresh temporary folders, so setuptools alone would translate and
compile every kernel each time. ``CachedBuildExt`` keeps each compiled module in
``build/ext-cache/`` under a fingerprint of everything its machine code depends on (the
``.pyx``, every ``.pxd``/``.pxi``/``.hpp``/``.h`` of the package, the compiler and its flags,
the Cython, NumPy and Python versions) and reuses it when the fingerprint matches: a second
install with nothing changed compiles nothing, and a change to one ``.pyx`` rebuilds that module
only. Contents are hashed, never timestamps, so a checkout of another branch and back rebuilds
nothing either. ``rm -r build/ext-cache`` forces a full build (docs/development.md).
"""
import hashlib
import os
import platform
import shutil
import sys
import sysconfig
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: The compiled kernels, by the folder of the kind (or package) they belong to.
KERNELS = {
    "aprank/inference/ranking": ["_driver_cy", "_greedy_cy", "_search_cy", "_select_cy",
                                 "_optranks_cy"],
    "aprank/inference/labelling": ["_zero_one_cy"],
    "aprank/inference/topk": ["_cstar_cy"],
    "aprank/inference/pairwise": ["_components_cy", "_enumerate_cy",   # grouping, enumeration
                                  "_maxflow_cy"],   # _maxflow_cy: BK + Kohli-Torr, dense cuts
    "aprank/inference/latent": ["_greedy_cy"],   # appendix A's greedy (Behl 2015), certified splits
    "aprank/dask": ["_split_cy"],       # the steps of one query split over machines (_steps.py)
}
#: The module of the Cython utility code the kernels share (Cython >= 3.1 writes it).
SHARED_UTILITY = "aprank._cyutility"
#: Where the C++ that the metrics and the kernels share (_order.hpp: the partition and the sort
#: with the tie rule) lives: the package's lowest layer, so that every layer may include it.
SHARED = "aprank"
#: Cython's directives for every kernel.
DIRECTIVES = {
    # Bounds are validated once in Python (aprank/validation.py) before any kernel runs.
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": False,
}
ROOT = Path(__file__).resolve().parent
#: Compiled modules kept across installs, by fingerprint (see the module docstring).
CACHE = ROOT / "build" / "ext-cache"
#: Fingerprints kept per module: a few, so that switching between branches rebuilds nothing.
CACHE_KEEP = 4
#: Both the translation to C++ and the compilation run on every core.
JOBS = os.cpu_count() or 1
#: What the compiler reads besides a module's own source: any of them may be included.
HEADER_SUFFIXES = (".pxd", ".pxi", ".hpp", ".h")
#: The environment variables that change what the compiler produces.
COMPILER_ENV = ("CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED")


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


def _shared_inputs() -> bytes:
    """Every header-like file of the package, by path and content: what any module may read."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "aprank").rglob("*")):
        if path.suffix in HEADER_SUFFIXES and path.is_file():
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.digest()


def _toolchain() -> bytes:
    """The compiler, the interpreter's flags and the versions the generated code depends on."""
    import Cython

    parts = [Cython.__version__, np.__version__, sys.version, platform.machine(),
             sysconfig.get_config_var("EXT_SUFFIX"), repr(sorted(DIRECTIVES.items())),
             *(f"{name}={sysconfig.get_config_var(name)}" for name in COMPILER_ENV),
             *(f"{name}={os.environ.get(name)}" for name in COMPILER_ENV)]
    return "\n".join(map(str, parts)).encode()


def fingerprint(ext: Extension, shared: bytes) -> str:
    """A hex digest of everything the compiled module ``ext`` depends on."""
    digest = hashlib.sha256(shared)
    digest.update(repr((ext.name, ext.language, ext.extra_compile_args, ext.extra_link_args,
                        ext.define_macros,
                        # numpy's include folder lies in pip's temporary build environment:
                        # its version, hashed with the toolchain, stands for it
                        [d for d in ext.include_dirs if not os.path.isabs(d)])).encode())
    for source in ext.sources:
        if source.endswith((".pyx", ".py")):
            digest.update((ROOT / source).read_bytes())
    return digest.hexdigest()[:24]


class CachedBuildExt(build_ext):
    """``build_ext`` that reuses a compiled module whose fingerprint is in ``build/ext-cache``."""

    def build_extensions(self):
        shared = _shared_inputs() + _toolchain()
        self._cached = {}
        misses = []
        for ext in self.extensions:
            key = fingerprint(ext, shared)
            path = CACHE / f"{ext.name}.{key}{sysconfig.get_config_var('EXT_SUFFIX')}"
            self._cached[ext.name] = path
            if not path.is_file():
                misses.append(ext)
        if misses:
            # force: the cache decided by content that these are out of date, whatever the
            # timestamps of their generated .cpp say
            translated = cythonize(misses, nthreads=JOBS, force=True,
                                   shared_utility_qualified_name=SHARED_UTILITY,
                                   language_level="3", compiler_directives=DIRECTIVES)
            for ext, new in zip(misses, translated, strict=True):
                ext.sources = new.sources
        reused = len(self.extensions) - len(misses)
        print(f"aprank build cache ({CACHE.relative_to(ROOT)}): {reused} of "
              f"{len(self.extensions)} modules reused, {len(misses)} to compile")
        super().build_extensions()

    def build_extension(self, ext):
        cached = self._cached[ext.name]
        target = Path(self.get_ext_fullpath(ext.name))
        if cached.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cached, target)
            return
        super().build_extension(ext)
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(cached.name + f".{os.getpid()}.part")
        shutil.copyfile(target, partial)
        os.replace(partial, cached)       # whole or absent, were two builds to run at once
        _prune(ext.name)


def _prune(module: str) -> None:
    """Keep the ``CACHE_KEEP`` newest compiled versions of ``module``."""
    versions = sorted(CACHE.glob(f"{module}.*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in versions[CACHE_KEEP:]:
        stale.unlink(missing_ok=True)


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
    compiled("aprank.models._block_sums_cy"),  # a multi-cut's block sums (models/_ranking.py)
]

setup(
    cmdclass={"build_ext": CachedBuildExt},
    options={"build_ext": {"parallel": JOBS}},
    ext_modules=extensions,
)
