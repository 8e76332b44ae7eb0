"""The quick lane: ``pytest -m "not slow"`` leaves out the tests marked ``slow`` (the figure
scripts, the wheel and docs builds, the torch sweeps and benchmark, the Dask cluster) and keeps
the rest; plain ``pytest`` (CI's command) runs both."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = ["tools/test_figures.py", "project/test_packaging.py", "documentation/test_docs.py",
         "aprank_torch/test_torch.py", "aprank_dask/test_dask.py", "inference/test_simd.py",
         "inference/test_oracle.py", "test_cli.py"]

#: a plugin reporting what the -m expression kept and what it deselected
PROBE = '''
def pytest_deselected(items):
    for item in items:
        print("DESELECTED", item.nodeid)


def pytest_collection_finish(session):
    for item in session.items:
        print("KEPT", item.nodeid)
'''

SLOW = ["tests/tools/test_figures.py::test_script_runs_quick[fig_scaling]",
        "tests/tools/test_figures.py::test_make_figures_runs_what_needs_no_data_and_says_what_it_skipped",
        "tests/project/test_packaging.py::test_the_wheel_lists_what_it_ships",
        "tests/documentation/test_docs.py::test_docs_build_without_warnings",
        "tests/documentation/test_docs.py::test_python_blocks_run[dask.md]",
        "tests/inference/test_simd.py::test_vector_paths_identical_to_portable_and_oracles[avx2-continuous]",
        "tests/inference/test_oracle.py::test_ranking_losses_against_all_permutations[portable-ap]"]
SLOW_TORCH = ["tests/aprank_torch/test_torch.py::test_bench_rows_are_measured",
              "tests/aprank_torch/test_torch.py::test_torch_ops_rank_like_the_kernels_on_thousands_of_instances[ap]"]
SLOW_DASK = ["tests/aprank_dask/test_dask.py::test_same_w_as_one_machine[one-DaskAPSVM]",
             "tests/aprank_dask/test_dask.py::test_split_inference_equals_qs_on_a_million[no-ties-ap]"]

KEPT = ["tests/tools/test_figures.py::test_scaling_series_come_from_the_registry",
        "tests/tools/test_figures.py::test_scaling_silences_only_the_slow_algorithm_warning",
        "tests/documentation/test_docs.py::test_code_blocks_are_found",
        "tests/documentation/test_docs.py::test_python_blocks_run[inference.md]",
        "tests/inference/test_simd.py::test_vector_paths_identical_to_portable_and_oracles[avx2-ties]",
        "tests/inference/test_oracle.py::test_ranking_losses_against_all_permutations[simd-ap]",
        "tests/test_cli.py::test_version_prints_the_package_version"]
KEPT_TORCH = ["tests/aprank_torch/test_torch.py::test_unknown_loss_is_refused",
              "tests/aprank_torch/test_torch.py::test_value_and_gradient_equal_the_kernels[torch-ap-dtype1]"]
KEPT_DASK = ["tests/aprank_dask/test_dask.py::test_import_aprank_does_not_import_dask"]


def _collect(tmp_path, expression):
    (tmp_path / "lane_probe.py").write_text(PROBE)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "lane_probe", "-m", expression, *(f"tests/{name}" for name in FILES)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    lines = out.stdout.splitlines()
    return ({line.split(" ", 1)[1] for line in lines if line.startswith("KEPT ")},
            {line.split(" ", 1)[1] for line in lines if line.startswith("DESELECTED ")})


@pytest.mark.slow       # a few seconds: the quick lane stays under two minutes
def test_the_quick_lane_leaves_out_the_slow_tests_and_keeps_the_others(tmp_path):
    slow, kept = list(SLOW), list(KEPT)
    if importlib.util.find_spec("torch") is not None:      # else the file skips as a whole
        slow += SLOW_TORCH
        kept += KEPT_TORCH
    if importlib.util.find_spec("distributed") is not None:
        slow += SLOW_DASK
        kept += KEPT_DASK
    quick, deselected = _collect(tmp_path, "not slow")
    assert set(slow) <= deselected, sorted(set(slow) - deselected)
    assert set(kept) <= quick, sorted(set(kept) - quick)
    assert not quick & deselected


README = (ROOT / "README.md").read_text()
CI_RUN = (ROOT / ".ci" / "run").read_text()


def _readme_commands():
    blocks = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
    return [line for block in blocks[:2] for line in block.splitlines()
            if line and not line.startswith("#")]


def _ci_commands():
    return [line.strip() for line in CI_RUN.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def test_ci_starts_with_the_users_path_verbatim():
    """.ci/run's first installs are the README's two set-up commands, verbatim, in a fresh
    virtual environment holding nothing but pip: nothing is installed before them, anywhere."""
    first, second = _readme_commands()[:2]
    ci = _ci_commands()
    installs = [k for k, line in enumerate(ci) if re.search(r"\bpip\b", line)]
    assert [ci[k] for k in installs[:2]] == [first, second], [ci[k] for k in installs[:3]]
    before = ci[:installs[0]]
    assert any(re.match(r"python3? -m venv ", line) for line in before), before
    assert not any(re.search(r"\b(pip|uv|conda)\b", line) for line in before), before


def test_ci_lints_right_after_the_users_lane_with_pinned_tools():
    """The lint lane (ruff, cython-lint) runs once the user's lane is through and before every
    other lane's tests, and every tool .ci/run installs for checking is pinned to one
    version."""
    ci = _ci_commands()
    user_tests = ci.index(_readme_commands()[1])
    later_tests = [k for k, line in enumerate(ci) if re.search(r"\bpytest\b", line)
                   and k > user_tests]
    ruff = next(k for k, line in enumerate(ci) if re.search(r"\bruff\"? check", line))
    cython_lint = next(k for k, line in enumerate(ci) if "cython-lint $(" in line)
    assert later_tests and user_tests < ruff < min(later_tests)
    assert user_tests < cython_lint < min(later_tests)
    text = CI_RUN.replace("\\\n", " ")
    for tool in ("ruff", "cython-lint", "pycodestyle", "mypy", "triton"):
        assert re.search(rf'pip install [^\n]*"?{tool}==[\d.]+', text), tool


def test_ci_runs_the_tests_needing_extras_after_installing_them():
    """The extras lane installs every package that the marker extras stands for and then runs
    those tests (the user's lane skips them, each saying which package it needs)."""
    ci = _ci_commands()
    run = ci.index("pytest -n auto --dist loadfile -m extras")
    installed = " ".join(line for line in ci[:run] if "pip install" in line)
    for package in ("torch==", "lightgbm==", "xgboost-cpu==", "triton==", "libauc==",
                    "pytorch-metric-learning=="):
        assert package in installed, package
    assert run > ci.index(_readme_commands()[1])
