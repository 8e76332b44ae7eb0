# Ctrl-C in long compiled loops: a kernel running without the GIL asks, at most every
# CHECK_EVERY seconds of monotonic time, whether a signal is pending (taking the GIL for the
# question only), so that a KeyboardInterrupt stops it within about that long.
from cpython.exc cimport PyErr_CheckSignals
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC


cdef inline double now_seconds() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef inline double first_check() noexcept nogil:
    """When a loop starting now first asks for signals (CHECK_EVERY = 0.1 s from now)."""
    return now_seconds() + 0.1


cdef inline int check_signals(double* next_check) except -1 nogil:
    """Raise KeyboardInterrupt (or whatever a signal handler raised) at most every 0.1 s."""
    cdef double now = now_seconds()
    if now >= next_check[0]:
        next_check[0] = now + 0.1
        with gil:
            PyErr_CheckSignals()
    return 0
