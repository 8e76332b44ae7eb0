"""What the tests of Ctrl-C share: a SIGINT raised in this process some time into a call."""
from __future__ import annotations

import signal
import threading
import time
import warnings

import pytest

from aprank.inference import SlowAlgorithmWarning

__all__ = ["interrupted_after"]


def interrupted_after(call, delay: float = 0.3) -> float:
    """Seconds from a SIGINT raised by a timer thread ``delay`` s into ``call`` to the
    KeyboardInterrupt that must end it (the slow-call warnings of the call silenced).

    Parameters
    ----------
    call : callable
        Run with no arguments; it must raise KeyboardInterrupt.
    delay : float, default 0.3

    Returns
    -------
    float
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    fired = []
    timer = threading.Timer(delay, lambda: (fired.append(time.perf_counter()),
                                            signal.raise_signal(signal.SIGINT)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SlowAlgorithmWarning)
            timer.start()
            with pytest.raises(KeyboardInterrupt):
                call()
            stopped = time.perf_counter()
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert fired, "the call ended before the signal"
    return stopped - fired[0]
