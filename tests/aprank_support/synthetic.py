"""Small synthetic training sets shared by the tests of several packages."""
import numpy as np


def one_query(n, n_pos, seed=0, shift=1.0, decimals=None):
    """(scores, labels): one query of n samples, n_pos of them relevant (drawn at random);
    scores ~ N(0, 1), the relevant ones ``shift`` higher, rounded to ``decimals`` places where
    given (ties). ``seed`` may be a numpy Generator, which the draws then advance."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n, dtype=bool)
    labels[rng.choice(n, n_pos, replace=False)] = True
    scores = rng.standard_normal(n) + shift * labels
    return (scores if decimals is None else np.round(scores, decimals)), labels


def two_classes(seed=0, n=40, d=3):
    """(X, y): a quarter of the n samples positive, the first ones; X ~ N(0, 1) in d
    dimensions, the positives shifted by 0.8 along every feature (the classes overlap)."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n // 4, int), np.zeros(n - n // 4, int)]
    X = rng.standard_normal((n, d)) + 0.8 * y[:, None]
    return X, y


def grouped(n_groups=12, size=5, d=4, seed=0):
    """(X, y, groups): samples in groups whose members tend to share a label (the group's label
    flips a sample with probability 0.15); the first two groups are one positive, one
    negative."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_groups), size)
    group_label = rng.random(n_groups) < 0.4
    group_label[:2] = (True, False)
    y = group_label[groups] ^ (rng.random(groups.size) < 0.15)
    X = rng.standard_normal((groups.size, d)) + 0.8 * y[:, None]
    return X, y.astype(int), groups


def mil(n_bags=40, size=4, d=5, seed=0, frac=0.4):
    """(X, y, bags, witness): bags of ``size`` rows ~ N(0, 1); a positive bag has one witness
    row shifted along a fixed direction (its index is the known h)."""
    rng = np.random.default_rng(seed)
    bag_pos = rng.random(n_bags) < frac
    bag_pos[:2] = [True, False]
    bags = np.repeat(np.arange(n_bags), size)
    X = rng.standard_normal((bags.size, d))
    witness = np.arange(n_bags) * size + rng.integers(0, size, n_bags)
    X[witness[bag_pos]] += 2.0 * np.eye(d)[0] + 1.0 * np.eye(d)[1]
    y = bag_pos[bags].astype(int)
    return X, y, bags, witness
