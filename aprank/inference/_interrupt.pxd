# Ctrl-C in long compiled loops: a kernel running without the GIL asks, at most every
# CHECK_EVERY seconds of monotonic time, whether a signal is pending (taking the GIL for the
# question only), so that a KeyboardInterrupt stops it within about that long.
#
# Two forms. A loop that may raise (a ``cdef ... except -1 nogil`` function, or the ``with
# nogil`` block of a ``def``) calls ``check_signals``. A kernel behind a ``noexcept`` function
# pointer cannot raise: it counts its work in a ``Poll`` (``poll_stop``), returns early once a
# signal handler has raised, and its ``def`` caller re-raises the handler's exception, left set
# for it (``raise_pending``).
from cpython.exc cimport PyErr_CheckSignals
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

cdef extern from "Python.h":
    # declared without "except": the exception a signal handler raises stays set for the caller
    # of a noexcept kernel (raise_pending), instead of being reported as unraisable
    int check_signals_keep "PyErr_CheckSignals"() nogil


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


cdef enum:
    # Units of work (about a nanosecond each: a scan step, an item update) between two reads
    # of the clock by poll_stop: a read costs tens of units, so reading it every unit would
    # slow the kernels.
    POLL_WORK = 1 << 20


cdef struct Poll:
    double next_check       # when the signal handlers next run (first_check, then every 0.1 s)
    long long work          # work counted since the clock was last read
    bint stopped            # a signal handler raised: its exception is set


cdef inline void start_poll(Poll* poll) noexcept nogil:
    poll.next_check = first_check()
    poll.work = 0
    poll.stopped = False


cdef inline bint poll_stop(Poll* poll, long long work) noexcept nogil:
    """Count ``work``; every POLL_WORK units read the clock, and at most every 0.1 s run the
    signal handlers (taking the GIL for that only). True once one of them raised (its exception
    is then set: the caller stops and its ``def`` wrapper calls raise_pending); True from then
    on. A NULL poll never stops."""
    cdef double now
    if poll == NULL:
        return False
    if poll.stopped:
        return True
    poll.work += work
    if poll.work < POLL_WORK:
        return False
    poll.work = 0
    now = now_seconds()
    if now < poll.next_check:
        return False
    poll.next_check = now + 0.1
    with gil:
        poll.stopped = check_signals_keep() != 0
    return poll.stopped


cdef inline int raise_pending() except -1:
    """Propagate the exception a signal handler set during poll_stop."""
    return -1
