"""Random many-query batches and the kernels' answer for them: shared by the CPU and CUDA tests
of aprank.torch (import after torch is known to be installed)."""
import numpy as np
import torch

import aprank


def random_batch(rng, n_max=3000, n_queries=None):
    """Scores with every tie density, labels and query ids; each query keeps a positive."""
    n = int(rng.integers(2, n_max + 1))
    q = rng.integers(0, n_queries or int(rng.integers(1, 12)), n)
    y = rng.random(n) < rng.choice([0.05, 0.3, 0.7])
    for g in np.unique(q):
        y[np.flatnonzero(q == g)[0]] = True
    s = rng.standard_normal(n) + y * rng.choice([-1.0, 0.0, 1.0, 5.0])
    s = {0: s, 1: np.round(s, 1), 2: np.round(s), 3: np.zeros(n)}[int(rng.integers(4))]
    return s * rng.choice([1e-3, 1.0, 1e3]), y, q


def reference(s, y, q, loss, dtype):
    """The kernels' answer for the scores as the tensor of this dtype holds them."""
    s = torch.tensor(s, dtype=dtype).double().numpy()
    r = aprank.infer_batch(s, y, q, loss=loss, empty="skip")
    per_query = np.zeros(int(q.max()) + 1)
    per_query[r.query_ids] = r.objective
    return per_query, r.coef - r.truth_coef
