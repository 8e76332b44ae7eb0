"""The README's and the docs' examples may show the package's warnings, but only those they
name: run an example inside :func:`only_the_warnings_named_in` its code."""
import contextlib
import warnings


@contextlib.contextmanager
def only_the_warnings_named_in(code: str):
    """Record every warning of the block; fail on a warning class of the package the code does
    not name (a leak the reader would not expect); pass the others on to the test's filters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    unnamed = set()
    for w in caught:
        if w.category.__module__.startswith("aprank"):
            if w.category.__name__ not in code:
                unnamed.add(w.category.__name__)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    assert not unnamed, f"the example issues {', '.join(sorted(unnamed))} without naming it"
