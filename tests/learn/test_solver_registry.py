"""The solver registry: what ``solver=`` names, what each solver declares it enforces (hard
constraints, upper bounds), the fallback or refusal where a fit needs more, registration and
its refusals, entries that pickle by name, and solvers whose state is all set in ``__init__``.
"""
import pickle

import cloudpickle
import numpy as np
import pytest

from aprank.learn import (
    APSVM,
    CuttingPlaneRun,
    Solver,
    SolverInfo,
    _cutting_plane,
    cutting_plane,
    register_solver,
    solvers,
    unregister_solver,
)
from aprank.models import RankingModel
from aprank.sklearn_compat import InvalidParameterError
from aprank_support.synthetic import grouped

#: the solvers registered when the tests are collected (aprank's own)
REGISTERED = solvers()
BUILT_IN = ["cutting-plane", "ocas", "multi-cut", "dual-cd"]


def _data():
    """(design, labels, qid): three queries, a bias column."""
    X, y, groups = grouped(n_groups=12, size=8, d=4, seed=3)
    return np.c_[X, np.ones(len(y))], y == 1, groups % 3


def _model():
    X, y, qid = _data()
    return RankingModel(X, y, "zero-one", qid=qid, algorithm="zero-one")


def _hard():
    """Rows y_i x_i of three samples, as APSVMAppx's easy samples: hard constraints."""
    X, y, _ = _data()
    return X[:3] * np.where(y[:3], 1.0, -1.0)[:, None]


@pytest.fixture
def register_for_one_test():
    """Register solvers for one test; they are forgotten after it."""
    names = []

    def register(name, factory, **kw):
        info = register_solver(name, factory, **kw)
        if name not in names:
            names.append(name)
        return info

    yield register
    for name in reversed(names):
        unregister_solver(name)


def test_the_built_in_solvers_are_registered_in_order():
    assert list(REGISTERED)[:4] == BUILT_IN
    assert all(REGISTERED[name].builtin for name in BUILT_IN)
    for info in REGISTERED.values():
        assert isinstance(info, SolverInfo) and isinstance(info.factory(), Solver)
    # solvers() is a copy: changing it registers nothing
    listed = solvers()
    listed.pop("ocas")
    assert "ocas" in solvers()


def test_a_solver_declares_the_four_steps():
    assert Solver.__abstractmethods__ == {"start", "iterate", "grow", "finish"}

    class Partial(Solver):
        def start(self, run):
            pass

    with pytest.raises(TypeError, match="abstract"):
        Partial()


@pytest.mark.parametrize("pickler", [pickle, cloudpickle], ids=["pickle", "cloudpickle"])
@pytest.mark.parametrize("name", list(REGISTERED))
def test_entries_pickle_by_name(name, pickler):
    info = solvers()[name]
    assert pickle.loads(pickler.dumps(info)) is info


@pytest.mark.parametrize("name", list(REGISTERED))
def test_each_solver_sets_its_state_in_init(name, register_for_one_test, monkeypatch):
    """No attribute appears outside ``__init__``: the state a solver keeps is declared there
    (with hard constraints, and dual-cd's descent out of budget after 3 epochs, so that it
    hands over to multi-cut, every step runs)."""
    monkeypatch.setattr(_cutting_plane, "DUAL_CD_EPOCHS", 3)
    info = REGISTERED[name]
    made = []

    def spy():
        solver = info.factory()
        made.append((solver, set(vars(solver))))
        return solver

    register_for_one_test(f"spy-{name}", spy, hard=info.hard, upper=info.upper,
                          fallback=info.fallback)
    model = _model()
    res = cutting_plane(model, 100.0, solver=f"spy-{name}", max_iter=50)
    if name == "dual-cd":
        assert "epochs" in res.history[0] and "epochs" not in res.history[-1]
    if info.hard:
        cutting_plane(model, 100.0, solver=f"spy-{name}", hard=_hard(), max_iter=50)
    assert made
    for solver, declared in made:
        assert set(vars(solver)) == declared, type(solver).__name__


@pytest.mark.parametrize("name", list(REGISTERED))
def test_a_solver_enforces_what_it_declares(name):
    """With hard constraints and upper bounds a declaring solver converges within them; one
    that does not declare them runs its fallback (the same fit, to the last bit) or is
    refused."""
    info = REGISTERED[name]
    model = _model()
    d = model.size_joint_feature
    hard = _hard()
    upper = np.full(d, np.inf)
    upper[0] = -0.05
    for given in ({"hard": hard}, {"upper": upper}, {"hard": hard, "upper": upper}):
        takes = info.takes(given.get("hard"), given.get("upper"))
        if not takes and info.fallback is None:
            with pytest.raises(NotImplementedError, match="does not enforce"):
                cutting_plane(model, 10.0, solver=name, **given)
            continue
        got = cutting_plane(model, 10.0, solver=name, **given)
        assert got.converged
        if "hard" in given:
            assert (hard @ got.w).min() >= 1 - 1e-3
        if "upper" in given:
            assert got.w[0] <= -0.05 + 1e-9
        if not takes:
            ref = cutting_plane(model, 10.0, solver=info.fallback, **given)
            np.testing.assert_array_equal(got.w, ref.w)
            assert [h["primal"] for h in got.history] == [h["primal"] for h in ref.history]


def test_dual_cd_declares_ocas_as_its_fallback():
    info = REGISTERED["dual-cd"]
    assert (info.hard, info.upper, info.fallback) == (False, False, "ocas")
    assert all(REGISTERED[n].hard and REGISTERED[n].upper for n in BUILT_IN if n != "dual-cd")


def test_a_solver_without_a_capability_or_fallback_is_refused(register_for_one_test):
    # OCAS registered again, declaring nothing: the fit with bounds is refused before any work
    register_for_one_test("bare", REGISTERED["ocas"].factory)
    model = _model()
    upper = np.zeros(model.size_joint_feature)
    with pytest.raises(NotImplementedError, match=r"'bare' does not enforce upper bounds.*'ocas'"):
        cutting_plane(model, 10.0, solver="bare", upper=upper)
    with pytest.raises(NotImplementedError, match="hard constraints"):
        cutting_plane(model, 10.0, solver="bare", hard=_hard())
    # and where nothing is needed it runs as OCAS
    np.testing.assert_array_equal(cutting_plane(model, 10.0, solver="bare").w,
                                  cutting_plane(model, 10.0, solver="ocas").w)


def test_solver_names_are_checked_against_the_registry_at_each_fit(register_for_one_test):
    model = _model()
    X, y, groups = grouped(n_groups=12, size=8, d=4, seed=3)
    for fit in (lambda: cutting_plane(model, 1.0, solver="later"),
                lambda: APSVM(solver="later").fit(X, y, qid=groups % 3)):
        with pytest.raises(InvalidParameterError, match="'ocas'"):
            fit()
    register_for_one_test("later", REGISTERED["cutting-plane"].factory, hard=True, upper=True)
    assert cutting_plane(model, 1.0, solver="later").converged
    assert APSVM(solver="later").fit(X, y, qid=groups % 3).converged_


def test_registration_refuses_what_it_cannot_keep(register_for_one_test):
    factory = REGISTERED["ocas"].factory
    with pytest.raises(ValueError, match="already registered"):
        register_solver("ocas", factory)
    with pytest.raises(ValueError, match="already registered"):
        register_solver("ocas", factory, replace=True)      # built-in ones stay
    with pytest.raises(ValueError, match="non-empty"):
        register_solver("", factory)
    with pytest.raises(TypeError, match="callable"):
        register_solver("x", "ocas")
    with pytest.raises(TypeError, match="hard must be a bool"):
        register_solver("x", factory, hard=1)
    with pytest.raises(ValueError, match="fallback must name"):
        register_solver("x", factory, fallback="nowhere")
    with pytest.raises(ValueError, match="does not enforce"):
        register_solver("x", factory, fallback="dual-cd")
    assert "x" not in solvers()
    # a user solver is replaced only when asked, and not removed while another relies on it
    register_for_one_test("mine", factory, hard=True, upper=True)
    with pytest.raises(ValueError, match="replace=True"):
        register_solver("mine", factory)
    again = register_for_one_test("mine", REGISTERED["cutting-plane"].factory, hard=True,
                                  upper=True, replace=True)
    assert solvers()["mine"] is again
    register_for_one_test("leaning", factory, fallback="mine")
    with pytest.raises(ValueError, match="fall back on 'mine'"):
        unregister_solver("mine")
    with pytest.raises(ValueError, match="built-in"):
        unregister_solver("ocas")
    with pytest.raises(ValueError, match="no solver named"):
        unregister_solver("nowhere")


def test_a_run_is_what_the_solver_receives(register_for_one_test):
    seen = []

    class Recording(Solver):
        def __init__(self):
            self.inner = REGISTERED["cutting-plane"].factory()

        def start(self, run):
            seen.append(run)
            self.inner.start(run)

        def iterate(self, run):
            return self.inner.iterate(run)

        def grow(self, run):
            self.inner.grow(run)

        def finish(self, run):
            return self.inner.finish(run)

    register_for_one_test("recording", Recording)
    res = cutting_plane(_model(), 10.0, solver="recording")
    run, = seen
    assert isinstance(run, CuttingPlaneRun)
    assert run.history is res.history and run.working_set is res.working_set
    assert run.C == 10.0 and len(res.history) == res.n_iter
