"""The weakly supervised rankers of Behl (2015): LatentAPSVM, LatentSSVM, LatentSVM."""
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from aprank.learn import APSVM, LatentAPSVM, LatentSSVM, LatentSVM
from aprank.models import LatentBinaryModel
from aprank_support.synthetic import mil


def test_cccp_objective_never_increases():
    X, y, bags, _ = mil(seed=1)
    for est in (LatentAPSVM(C=10.0, tol=1e-4), LatentSVM(C=10.0, tol=1e-4)):
        est.fit(X, y, bags=bags)
        objectives = [h["objective"] for h in est.cccp_history_]
        assert len(objectives) >= 2
        assert all(b <= a + 1e-4 for a, b in zip(objectives, objectives[1:])), objectives
        assert est.objective_ == pytest.approx(min(objectives))


def test_every_h_known_learns_aprank_apsvm_on_the_chosen_rows():
    X, y, bags, witness = mil(seed=2)
    h = np.zeros(X.shape[0], bool)
    h[witness] = True                       # every bag, positive or negative
    latent = LatentAPSVM(C=10.0).fit(X, y, bags=bags, h=h)
    plain = APSVM(C=10.0).fit(X[witness], y[witness])
    assert np.max(np.abs(latent.coef_ - plain.coef_)) <= 1e-8 * np.linalg.norm(plain.coef_)
    assert latent.n_iter_ == plain.n_iter_


def test_singleton_bags_are_apsvm():
    X, y, _, _ = mil(seed=3)
    latent = LatentAPSVM(C=1.0).fit(X, y)
    plain = APSVM(C=1.0).fit(X, y)
    assert np.allclose(latent.coef_, plain.coef_, rtol=0, atol=1e-8 * np.linalg.norm(plain.coef_))


def test_the_witness_direction_is_learned_and_bags_are_ranked():
    X, y, bags, witness = mil(n_bags=60, seed=4)
    Xt, yt, bt, _ = mil(n_bags=60, seed=5)
    for est in (LatentAPSVM(C=10.0), LatentSVM(C=10.0), LatentSSVM(C=10.0, max_outer=3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X, y, bags=bags)
        assert est.score(Xt, yt, bags=bt) > 0.8, type(est).__name__
        # the imputed rows of the positive bags are mostly the witnesses
        pos_bags = np.flatnonzero(np.bincount(bags, weights=y) > 0)
        assert np.mean(est.train_h_[pos_bags] == witness[pos_bags]) > 0.7


def test_more_starts_never_give_a_higher_objective():
    X, y, bags, _ = mil(seed=6)
    one = LatentAPSVM(C=10.0).fit(X, y, bags=bags)
    three = LatentAPSVM(C=10.0, n_init=3, random_state=0).fit(X, y, bags=bags)
    assert len(three.start_objectives_) == 3
    assert three.start_objectives_[0] == pytest.approx(one.objective_)
    assert three.objective_ == min(three.start_objectives_) <= one.objective_ + 1e-12


def test_bag_scores_decision_function_and_predict():
    X, y, bags, _ = mil(seed=7)
    est = LatentAPSVM(C=1.0).fit(X, y, bags=bags)
    ids, scores = est.bag_scores(X, bags)
    rows = X @ est.coef_
    assert np.allclose(scores, [rows[bags == b].max() for b in ids])
    per_row = est.decision_function(X, bags)
    assert np.allclose(per_row, scores[bags])
    assert np.allclose(est.decision_function(X), rows)
    assert set(np.unique(est.predict(X, bags))) <= {0, 1}


def test_robust_latent_svm_keeps_a_row_of_every_negative_bag():
    X, y, bags, _ = mil(seed=8)
    model = LatentBinaryModel(np.c_[X, np.ones(len(X))], y, bags, robust=0.9)
    kept = model.kept_negatives(np.r_[1.0, 1.0, 0, 0, 0, 0])
    neg_bags = np.unique(bags[y == 0])
    assert set(np.unique(bags[kept])) == set(neg_bags)
    assert kept.size < 0.5 * np.count_nonzero(y == 0)


def test_grid_search_with_group_kfold_over_bags():
    X, y, bags, _ = mil(n_bags=30, seed=9)
    with sklearn.config_context(enable_metadata_routing=True):
        est = (LatentAPSVM(max_outer=5).set_fit_request(bags=True, h=False)
               .set_score_request(bags=True))
        gs = GridSearchCV(est, {"C": [0.1, 10.0]}, cv=GroupKFold(3))
        gs.fit(X, y, groups=bags, bags=bags)
    assert np.isfinite(gs.cv_results_["mean_test_score"]).all()
    assert gs.best_estimator_.coef_.shape == (X.shape[1],)


@pytest.mark.parametrize("name", ["LatentAPSVM", "LatentSSVM", "LatentSVM"])
def test_latent_estimators_take_lists_as_the_arrays_they_hold(name):
    import aprank.learn
    X, y, bags, _ = mil(n_bags=10, size=3, d=4)
    est = getattr(aprank.learn, name)(max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X.tolist(), y.tolist(), bags=bags.tolist())
    # lists score as the arrays they hold
    assert np.array_equal(est.decision_function(X.tolist(), bags=bags.tolist()),
                          est.decision_function(X, bags=bags))
    assert np.array_equal(est.predict(X.tolist(), bags=bags.tolist()), est.predict(X, bags=bags))
    ids, scores = est.bag_scores(X.tolist(), bags=bags.tolist())
    assert np.array_equal(scores, est.bag_scores(X, bags=bags)[1])


def test_fitted_estimators_pickle():
    X, y, bags, _ = mil(seed=10)
    for est in (LatentAPSVM(C=1.0), LatentSVM(C=1.0, c=0.2)):
        est.fit(X, y, bags=bags)
        again = pickle.loads(pickle.dumps(est))
        assert np.array_equal(again.decision_function(X, bags), est.decision_function(X, bags))


@pytest.mark.parametrize("kwargs, message", [
    ({"y": np.r_[1, 0, np.zeros(158, int)]}, "bag 0 has two labels"),
    ({"y": np.zeros(160, int)}, "Only binary classification"),
    ({"bags": np.arange(159)}, r"bags must hold one bag id per row \(160\)"),
    ({"h": np.r_[True, True, np.zeros(158, bool)]}, r"h marks 2 rows of bag 0"),
    ({"h": np.zeros(160, int)}, "h must be a bool mask"),
    ({"bags": np.r_[0.5, np.zeros(159)]}, r"bags\[0\] = 0.5 is not a bag id"),
])
def test_bad_input_is_a_clear_error(kwargs, message):
    X, y, bags, _ = mil(seed=11)
    args = {"y": y, "bags": bags, "h": None, **kwargs}
    for est in (LatentAPSVM(), LatentSVM(), LatentSSVM()):
        with pytest.raises(ValueError, match=message):
            est.fit(X, args["y"], bags=args["bags"], h=args["h"])


def test_bad_parameters():
    X, y, bags, _ = mil(seed=13)
    with pytest.raises(ValueError,
                       match=r"'n_init' parameter of LatentAPSVM must be an int in the range "
                       r"\[1, inf\)"):
        LatentAPSVM(n_init=0).fit(X, y, bags=bags)
    with pytest.raises(ValueError,
                       match=r"'c' parameter of LatentSVM must be a float in the range "
                       r"\[0.0, 1.0\)"):
        LatentSVM(c=1.0).fit(X, y, bags=bags)
    with pytest.raises(ValueError, match="unknown algorithm"):
        LatentSSVM(algorithm="nope").fit(X, y, bags=bags)


# scikit-learn's checks fit on string labels, whose relevant class the estimators say
@pytest.mark.filterwarnings("ignore::aprank.learn.RelevantClassWarning")
@parametrize_with_checks([LatentAPSVM(max_outer=3), LatentSVM(max_outer=3)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)
