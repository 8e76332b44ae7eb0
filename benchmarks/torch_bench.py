"""The torch loss's benchmark (``python -m benchmarks --torch``; needs ``aprank[torch]``).

Forward + backward of the AP hinge for a (256, 1000) score matrix (1000 rankings of 256
samples) and for one query of 10^6 samples, through the compiled kernels, through the
torch-ops implementation and (on a GPU, or when asked) through the torch-ops implementation
compiled by ``torch.compile``, each as a ratio to ``torch.sort`` of the same tensor on the same
device, timed in one run. For scale, one more row per input: the same step with PyTorch's
binary cross-entropy (``binary_cross_entropy_with_logits``, mean), the cheapest loss a network
trains with, whose forward + backward is a few elementwise kernels: near the least that a loss
called eagerly costs on that device (its launches and autograd), for reading the ratios against.

Before that row, the default backend (``"auto"``) twice more: with ``validate=False`` (the
checks that read the batch on the host skipped), and on a CUDA device that step captured
whole as a CUDA graph (``torch.cuda.graph``, forward and backward) and replayed, each replay
after copying the scores into the captured tensor: what a training step that captures its
loss pays.
"""
from __future__ import annotations

import warnings

import torch

from aprank.torch import ap_hinge_loss
from benchmarks.timing import median_time

__all__ = ["bench", "format_bench", "describe_devices", "REFERENCE"]

#: The backend column of the rows timing binary cross-entropy on the same tensor, for scale.
REFERENCE = "BCE (for scale)"
#: The backend column of the default backend's step without the checks, and of that step
#: captured as a CUDA graph and replayed (CUDA devices only).
UNCHECKED = "auto, validate=False"
CAPTURED = "auto, validate=False, CUDA graph"


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _cases(device, seed=0):
    g = torch.Generator().manual_seed(seed)
    matrix = torch.randn(256, 1000, generator=g)
    matrix_y = torch.rand(256, 1000, generator=g) < 0.1
    matrix_y[0] = True
    n, P = 1_000_000, 1_000
    query_y = torch.zeros(n, dtype=torch.bool)
    query_y[torch.randperm(n, generator=g)[:P]] = True
    query = torch.randn(n, generator=g) + query_y.float()
    return [("(256, 1000) matrix, a ranking per column", matrix.to(device), matrix_y.to(device), 0),
            ("one query, n = 1e6, P = 1e3", query.to(device), query_y.to(device), -1)]


#: backends timed per device type: "torch-compiled" compiles once per case and dtype (about a
#: minute each on a CPU, so it is timed on the CPU only when asked for), in float32 only;
#: "triton" on a GPU where the triton package is installed
_BACKENDS = {"cpu": ("kernels", "torch"),
             "cuda": ("kernels", "torch", "torch-compiled", "triton")}


def _triton_installed() -> bool:
    import importlib.util
    return importlib.util.find_spec("triton") is not None


def _backends(device_type, dtype, compiled):
    names = _BACKENDS.get(device_type, ("kernels", "torch"))
    if compiled and "torch-compiled" not in names:
        names = names + ("torch-compiled",)
    return [b for b in names if (b != "torch-compiled" or dtype == torch.float32)
            and (b != "triton" or _triton_installed())]


def bench(devices=None, repeats: int = 7, budget: float = 20.0, compiled: bool = False):
    """Rows (device, case, dtype, backend, seconds, seconds of torch.sort, ratio), the last row
    of each (device, case, dtype) the binary cross-entropy's (backend :data:`REFERENCE`).

    ``compiled``: time the "torch-compiled" backend on the CPU too (it is always timed on a
    GPU); its first call, which compiles, is left out of the timing as every backend's is.
    """
    if devices is None:
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    rows = []
    for name in devices:
        device = torch.device(name)
        for case, scores, labels, dim in _cases(device):
            for dtype in (torch.float32, torch.float64):
                x = scores.to(dtype)

                def sort(x=x, dim=dim, device=device):
                    torch.sort(x, dim=dim)
                    _sync(device)

                sort()
                t_sort = median_time(sort, repeats, budget)
                steps = [(backend, _hinge_step(x, labels, device, backend=backend))
                         for backend in _backends(device.type, dtype, compiled)]
                steps.append((UNCHECKED, _hinge_step(x, labels, device, validate=False)))
                if device.type == "cuda":
                    captured = _captured_step(x, labels, device)
                    if captured is not None:
                        steps.append((CAPTURED, captured))
                steps.append((REFERENCE, _bce_step(x, labels.to(dtype), device)))
                for backend, step in steps:
                    step()
                    t = median_time(step, repeats, budget)
                    rows.append((name, case, str(dtype).replace("torch.", ""), backend, t, t_sort,
                                 t / t_sort))
    return rows


def _hinge_step(x, labels, device, **options):
    """The AP hinge's forward and backward on a fresh leaf of ``x``, with ``options``."""
    def step():
        s = x.detach().requires_grad_()
        ap_hinge_loss(s, labels, **options).backward()
        _sync(device)

    return step


def _bce_step(x, target, device):
    """Binary cross-entropy's forward and backward on a fresh leaf of ``x``."""
    def step():
        s = x.detach().requires_grad_()
        torch.nn.functional.binary_cross_entropy_with_logits(s, target).backward()
        _sync(device)

    return step


def _captured_step(x, labels, device):
    """A callable that copies ``x`` into the scores of a CUDA graph of the step (forward and
    backward of the AP hinge, ``validate=False``) and replays it; None, with a warning saying
    why, where the capture fails (the table's other rows are still measured)."""
    scores = x.detach().clone().requires_grad_()
    try:
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):          # warm-up on a side stream, as capture asks
            for _ in range(3):
                scores.grad = None
                ap_hinge_loss(scores, labels, validate=False).backward()
        torch.cuda.current_stream(device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        scores.grad = None
        with torch.cuda.graph(graph):
            ap_hinge_loss(scores, labels, validate=False).backward()
    except RuntimeError as err:
        warnings.warn(f"no {CAPTURED!r} row for a {tuple(x.shape)} {x.dtype} tensor: the "
                      f"capture failed ({err})", RuntimeWarning, stacklevel=2)
        return None

    def replay():
        with torch.no_grad():
            scores.copy_(x)
        graph.replay()
        _sync(device)

    return replay


def describe_devices() -> str:
    cuda = (f"and {torch.cuda.get_device_name()}" if torch.cuda.is_available()
            else "no GPU here: CPU only")
    return f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads, {cuda}"


def format_bench(rows) -> str:
    out = ["| device | input | dtype | backend | forward + backward (ms) | torch.sort (ms) | "
           "ratio |",
           "|---|---|---|---|---:|---:|---:|"]
    for device, case, dtype, backend, t, t_sort, ratio in rows:
        digits = 1 if ratio >= 1 else 2    # below 1 (the cross-entropy): two decimals
        out.append(f"| {device} | {case} | {dtype} | {backend} | {t * 1e3:.2f} | "
                   f"{t_sort * 1e3:.2f} | {ratio:.{digits}f} |")
    return "\n".join(out)
