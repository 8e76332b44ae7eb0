"""scikit-learn's estimator checks that the estimators fail by design, and why: what
``parametrize_with_checks(..., expected_failed_checks=expected_failed_checks)`` is given by the
tests of the estimators (tests/learn/test_learn.py) and of their cross-validated forms
(tests/learn/test_cv_estimators.py)."""
from aprank.learn import BinarySVM, BinarySVMCV

#: The rank SVMs' sample_weight is a query weight (exact AP/NDCG inference has no per-sample
#: weights), so these checks' weights, varying over one query, are refused with a ValueError
#: (tests/learn/test_sample_weight.py asserts that error). BinarySVM passes them.
QUERY_WEIGHT_CHECKS = {
    name: "a rank SVM's sample_weight is a query weight: varying weights in one query are refused"
    for name in ("check_sample_weights_not_overwritten",
                 "check_sample_weight_equivalence_on_dense_data",
                 "check_sample_weight_equivalence_on_sparse_data")}

#: BinarySVM's default solver, dual coordinate descent, visits the samples' multipliers in an
#: order that a repeated sample changes: a weight of 2 and the sample entered twice reach the
#: same optimum within tol, not always the same w to 1e-7, which these checks ask (at the
#: default C = 1, per sample, and tol = 1e-3 they differ by 4e-4).
#: scikit-learn's own LinearSVC(dual=True) is exempt from them for the same reason ("a
#: stochastic solver") and checked with dual=False. BinarySVM(solver="ocas") and
#: BinarySVMCV(solver="ocas") are checked with them, the descent passes them at a tighter tol
#: (tests/learn/test_learn.py, test_dual_cd_passes_the_weight_checks_at_a_tight_tol), and
#: tests/learn/test_learn_dual_cd.py checks the objectives of weighted and repeated dual-cd fits.
ORDER_CHECKS = {
    name: "dual coordinate descent's solution depends on the order of the samples' "
          "multipliers: equal within tol, not to 1e-7 (checked with solver='ocas')"
    for name in ("check_sample_weight_equivalence_on_dense_data",
                 "check_sample_weight_equivalence_on_sparse_data")}


def expected_failed_checks(estimator):
    """The checks ``estimator`` fails by design, each with its reason: the order checks for the
    binary SVMs on dual coordinate descent, the query-weight checks for the rank SVMs (whose
    cross-validated forms fit and score the folds with them)."""
    if isinstance(estimator, (BinarySVM, BinarySVMCV)):
        return ORDER_CHECKS if estimator.solver == "dual-cd" else {}
    return QUERY_WEIGHT_CHECKS
