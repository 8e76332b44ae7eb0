"""What the tests share: synthetic data sets (``synthetic``), brute-force references
(``oracle``, ``metrics_numpy``, ``latent_greedy_reference``), the estimator checks' expected
failures (``estimator_checks``), and helpers for warnings, signals, metric outcomes and torch
batches. One package, named after the project so that it cannot shadow an installed module
(pytest puts ``tests/`` on the import path)."""
