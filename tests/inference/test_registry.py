"""The algorithm registry: what ``register`` refuses (names and entries that would break the
table, the built-in names of every kind), built-ins neither replaced nor removed, a user's
entry replaced and removed by its own name, and the table and the CLI still usable after a
refusal."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

import aprank


def _one_rank(pos, neg, loss):
    return np.full(neg.size, pos.size + 1)


@pytest.mark.parametrize("name", [None, "", 3, "two words", "a|b", "x\n", " qs", ("q",)])
def test_bad_names_are_refused_and_leave_the_table_usable(name):
    before = aprank.algorithms().names()
    with pytest.raises((ValueError, TypeError)):
        aprank.register(name, _one_rank, losses="ap", exact=True)
    assert aprank.algorithms().names() == before
    str(aprank.algorithms())
    aprank.algorithms().to_markdown()


@pytest.mark.parametrize("field, value", [("complexity", None), ("reference", 3),
                                          ("exact", "no")])
def test_entries_that_would_break_the_table_are_refused(field, value):
    before = aprank.algorithms().names()
    kwargs = {"exact": True, field: value}
    with pytest.raises(TypeError, match=field):
        aprank.register("user-bad-field", _one_rank, losses="ap", **kwargs)
    assert aprank.algorithms().names() == before
    assert "qs" in str(aprank.algorithms())


def test_the_cli_lists_algorithms_after_a_refused_registration():
    code = ("import aprank, numpy as np\n"
            "try:\n    aprank.register(None, lambda p, n, l: n, losses='ap', exact=True)\n"
            "except ValueError:\n    pass\n"
            "import aprank.__main__ as m\nm.main(['algorithms'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "qs" in out.stdout


@pytest.mark.parametrize("name", ["qs", "brute", "zero-one", "cstar", "graphcut", "latent-ap"])
def test_user_algorithms_take_no_built_in_name_of_any_kind(name):
    with pytest.raises(ValueError, match="built-in"):
        aprank.register(name, _one_rank, losses="ap", exact=True, replace=True)
    assert all(a.builtin for a in aprank.algorithms() if a.name == name)


def test_built_ins_are_never_replaced_or_removed():
    with pytest.raises(ValueError):
        aprank.register("qs", _one_rank, losses="ap", exact=True, replace=True)
    with pytest.raises(ValueError, match="built in"):
        aprank.unregister("qs")
    assert aprank.infer([1.0, 0.0], [1, 0]).algorithm == "qs"


def test_a_user_algorithm_can_be_replaced_and_removed_by_its_own_name():
    aprank.register("user-last", _one_rank, losses=["ap", "ap"], exact=False)
    try:
        assert aprank.inference.get_algorithm("user-last").losses == ("ap",)
        aprank.register("user-last", _one_rank, losses="ap", exact=False, replace=True)
        again = pickle.loads(pickle.dumps(aprank.inference.get_algorithm("user-last")))
        assert again.name == "user-last"
    finally:
        aprank.unregister("user-last")
    assert "user-last" not in aprank.algorithms().names()
