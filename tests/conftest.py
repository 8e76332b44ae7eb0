"""Where the tests find their data, and a guard that keeps them off the internet.

* The shared data folder sits beside the checkout (``<checkout>/../shared/data``, found from
  this file, never from the current directory). When ``APRANK_DATA`` is unset and that folder
  exists, the tests (and the scripts they start, which inherit the environment) read it.
* ``APRANK_DATA_URL`` points downloads at a closed local port (the discard port, 9) unless it
  is set already, so a file missing from the data home fails at once with the loaders' own
  message instead of reaching for a public server; the download tests start their own server.
* A skip reason longer than one short line fails the test (``SKIP_REASON_MAX``).
* A test that skips for want of an optional package the test extra leaves out (PyTorch,
  LightGBM, XGBoost, Triton, the torch peers) fails unless it carries the marker ``extras``:
  .ci/run's extras lane runs ``-m extras`` once those packages are installed, so an unmarked
  test would be skipped in both lanes, never run.
* Without a CUDA device, ``TRITON_INTERPRET=1`` (where torch and triton are installed and it is
  not set already): Triton's interpreter runs the torch loss's Triton kernel on the CPU
  (tests/aprank_torch/test_torch_triton.py). Triton reads it when it is imported and defines its own
  library functions, which the first test module importing torch can trigger: so here,
  before any test module is collected.

Shared fixtures: ``real_data_home`` (the data home, or a skip naming what it lacks), and
scikit-learn's digits, the small real data set the estimators' tests share: ``digits``
(standardised) and ``unit_digits`` (the pixels in [0, 1]). The synthetic sets are built by
tests/aprank_support/synthetic.py, the brute-force references by tests/aprank_support/oracle.py.
"""
import importlib.util
import os
import re
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
NO_NETWORK_URL = "http://127.0.0.1:9"
#: the longest skip reason: pytest's summary (-rs) prints one line per reason, which should stay
#: one short line (a longer reason fails the test, saying so)
SKIP_REASON_MAX = 72
#: what a skip reason says when the package missing is one the test extra leaves out
OUTSIDE_THE_TEST_EXTRA = re.compile(
    r"\b(torch|PyTorch|triton|Triton|lightgbm|LightGBM|xgboost|XGBoost|libauc|"
    r"pytorch[-_]metric[-_]learning)\b|aprank\[(torch|boost)\]")


def pytest_configure(config):
    if not os.environ.get("APRANK_DATA") and SHARED_DATA.is_dir():
        os.environ["APRANK_DATA"] = str(SHARED_DATA)
    if not os.environ.get("APRANK_DATA_URL"):
        os.environ["APRANK_DATA_URL"] = NO_NETWORK_URL
    if "TRITON_INTERPRET" not in os.environ and all(
            importlib.util.find_spec(m) is not None for m in ("torch", "triton")):
        import torch
        if not torch.cuda.is_available():
            os.environ["TRITON_INTERPRET"] = "1"


def _refuse_a_long_skip_reason(report):
    if report.skipped and not hasattr(report, "wasxfail") and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2].removeprefix("Skipped: ")
        if len(reason) > SKIP_REASON_MAX:
            report.outcome = "failed"
            report.longrepr = (f"a skip reason of {len(reason)} characters, over the "
                               f"{SKIP_REASON_MAX} of one short line: {reason}")


def _refuse_an_unmarked_extras_skip(report, marked):
    """An optional package's absence skips only a test that the extras lane runs."""
    if report.skipped and not hasattr(report, "wasxfail") and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2].removeprefix("Skipped: ")
        if OUTSIDE_THE_TEST_EXTRA.search(reason) and not marked():
            report.outcome = "failed"
            report.longrepr = (f"skipped for an optional package ({reason}) without the marker "
                               "extras: .ci/run's extras lane (-m extras) would never run it")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _refuse_a_long_skip_reason(outcome.get_result())
    _refuse_an_unmarked_extras_skip(outcome.get_result(),
                                    lambda: item.get_closest_marker("extras") is not None)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _refuse_a_long_skip_reason(outcome.get_result())
    # a module skipped while importing has no markers to read: its source must set them
    path = getattr(collector, "path", None)
    _refuse_an_unmarked_extras_skip(
        outcome.get_result(), lambda: path is not None and path.suffix == ".py"
        and re.search(r"^pytestmark = .*pytest\.mark\.extras", path.read_text(), re.M | re.S))


@pytest.fixture(scope="session")
def real_data_home():
    """The data home holding every file the loaders read; otherwise the test skips, naming
    what is missing."""
    from aprank import datasets

    try:
        home = datasets.data_dir()
    except FileNotFoundError:
        pytest.skip("no data home: set APRANK_DATA (docs/data.md)")
    missing = [rel for rel in datasets.REMOTE_FILES if not (home / rel).is_file()]
    if missing:
        pytest.skip(f"the data home lacks {len(missing)} of its files (docs/data.md)")
    return home


def _read_only(*arrays):
    for a in arrays:
        a.setflags(write=False)
    return arrays


@pytest.fixture(scope="session")
def digits():
    """(X, y): scikit-learn's 1,797 digits, each of the 64 pixels standardised over all of them,
    and the digit 0-9 each image shows; a test takes the rows and the digit it needs. Read-only,
    so that no test changes them for the others (and the estimators take read-only input as
    they take any other)."""
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    return _read_only(StandardScaler().fit_transform(X), y)


@pytest.fixture(scope="session")
def unit_digits():
    """(X, y): the same digits with each pixel's 0-16 intensity divided by 16, in [0, 1];
    read-only."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return _read_only(X / 16.0, y)
