"""Where results were computed: one line for the tables of the benchmarks and the figures."""
from __future__ import annotations

import os
import platform

import numpy as np

from aprank.inference import simd_level

__all__ = ["machine"]


def machine() -> str:
    """One line describing where results were computed.

    Returns
    -------
    str
        The CPU model, its core count, the Python and NumPy versions and the partition path
        aprank's kernels take on this CPU.
    """
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"NumPy {np.__version__}, {simd_level()} partition")
