"""The architecture, read from the code: layers stay apart, no private names cross package
seams, no cycles, no late imports of aprank modules, no import tricks; every problem kind is a
folder of aprank/inference with the same modules, reached by the others only through the names
its __init__ exports, and its problem type and instances implement the abstract ones."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "aprank"

#: Lower layers never import higher ones: inference (what an algorithm computes), models (joint
#: feature, loss, which inference), learners (how w is found), tools (bench, checks, figures,
#: experiments, command line), and the package's public face last.
LAYERS = {
    "aprank.validation": 0, "aprank._validation_cy": 0, "aprank.losses": 0, "aprank.metrics": 0, "aprank.datasets": 0,
    "aprank.inference": 1, "aprank.models": 2, "aprank.learn": 3, "aprank.torch": 3,
    "aprank.dask": 4,     # the estimators on a Dask cluster, over models and learners
    "aprank.checks": 4, "aprank._quick_bench": 4,
    "aprank.__main__": 5, "aprank": 6,
}


def module_name(path: Path) -> str:
    parts = ("aprank",) + path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(dotted: str) -> bool:
    path = ROOT.parent.joinpath(*dotted.split("."))
    return (path.with_suffix(".py").exists() or path.with_suffix(".pyx").exists()
            or (path / "__init__.py").exists())


def package_of(module: str) -> str:
    """aprank.<sub> for modules of a subpackage, else aprank."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and (ROOT / parts[1]).is_dir() else "aprank"


def layer_of(module: str) -> int:
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in LAYERS:
            return LAYERS[".".join(parts[:k])]
    raise AssertionError(f"{module} has no layer: add it to LAYERS")


def imports(path: Path):
    """(target module, imported attribute or None, line, inside a function) for every import of
    an aprank module in the file."""
    tree = ast.parse(path.read_text())
    functions = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        late = id(node) in functions
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "aprank":
                    yield a.name, None, node.lineno, late
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "aprank":
            for a in node.names:
                dotted = f"{node.module}.{a.name}"
                if is_module(dotted):
                    yield dotted, None, node.lineno, late
                else:
                    yield node.module, a.name, node.lineno, late


FILES = sorted(ROOT.rglob("*.py"))
GRAPH = {module_name(f): [(t, attr, line, late) for t, attr, line, late in imports(f)] for f in FILES}


def test_every_module_is_read():
    assert {"aprank.inference._registry", "aprank.models._ranking", "aprank.learn._cccp"} <= set(GRAPH)


def test_no_private_name_crosses_a_package_seam():
    bad = []
    for module, edges in GRAPH.items():
        for target, attr, line, _ in edges:
            if package_of(target) == package_of(module):
                continue
            names = target.split(".")[1:] + ([attr] if attr else [])
            if any(n.startswith("_") and not n.startswith("__") for n in names):
                bad.append(f"{module}:{line} imports {target}{'.' + attr if attr else ''}")
    assert not bad, "\n".join(bad)


def test_layers_only_import_downwards():
    bad = [f"{module}:{line} imports {target}" for module, edges in GRAPH.items()
           for target, _, line, _ in edges
           if package_of(target) != package_of(module) and layer_of(target) > layer_of(module)]
    assert not bad, "\n".join(bad)


def test_no_late_imports_of_aprank_modules():
    bad = [f"{module}:{line} imports {target} inside a function" for module, edges in GRAPH.items()
           for target, _, line, late in edges if late]
    assert not bad, "\n".join(bad)


def test_no_import_cycle():
    edges = {m: {t for t, _, _, _ in e if t != m} for m, e in GRAPH.items()}
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if state.get(t) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)


@pytest.mark.parametrize("trick", ["extend_path", "sys.path", "spec_from_file_location", "__path__ ="])
def test_no_import_tricks(trick):
    bad = [str(f) for f in FILES if trick in f.read_text()]
    assert not bad, f"{trick} in {bad}"


# ---------------------------------------------------------------------------- problem kinds
INFERENCE = ROOT / "inference"
#: The modules every kind folder has (``aprank/inference/_protocol.py`` says what each holds).
KIND_MODULES = {"__init__.py", "_problem.py", "_algorithms.py", "_oracle.py", "_instances.py"}


def kind_folders():
    return sorted(p for p in INFERENCE.iterdir() if (p / "__init__.py").exists())


def test_every_kind_folder_has_the_same_modules():
    folders = kind_folders()
    assert {f.name for f in folders} == {"ranking", "labelling", "topk", "pairwise", "latent"}
    for folder in folders:
        modules = {p.name for p in folder.glob("*.py")}
        assert modules == KIND_MODULES, f"{folder.name}: {sorted(modules ^ KIND_MODULES)}"
        # anything else in a kind folder is a compiled kernel (or the C++ it includes)
        others = {p.name for p in folder.iterdir() if p.is_file() and p.suffix in (".pyx", ".hpp",
                                                                                    ".pxd")}
        assert all(name.startswith("_") for name in others), others


def test_kinds_reach_each_other_only_through_their_exports():
    """A kind folder's private modules are imported only from inside that folder."""
    bad = []
    for module, edges in GRAPH.items():
        for target, attr, line, _ in edges:
            parts = target.split(".")
            if (len(parts) >= 4 and parts[:2] == ["aprank", "inference"]
                    and (INFERENCE / parts[2]).is_dir() and parts[3].startswith("_")
                    and not module.startswith(".".join(parts[:3]))):
                bad.append(f"{module}:{line} imports {target}")
    assert not bad, "\n".join(bad)


def test_every_registered_kind_implements_the_protocol():
    import aprank
    from aprank.inference import Instances, Problem, kinds

    registered = kinds()
    assert {k.name for k in registered} == {"ranking", "labelling", "topk", "pairwise", "latent"}
    for kind in registered:
        assert issubclass(kind.problem_type, Problem), kind.name
        assert isinstance(kind.instances, Instances) and kind.instances.kind == kind.name
        # the problem type lives in the kind's folder (labelling's is its own subclass)
        assert kind.problem_type.__module__ == f"aprank.inference.{kind.name}._problem"
        assert aprank.checks.random_instance(kind.name, 0, 0).size >= 1


def test_a_kind_that_breaks_the_protocol_is_refused():
    from aprank.inference import ProblemKind, get_kind
    from aprank.inference._registry import add_kind

    ranking = get_kind("ranking")
    with pytest.raises(TypeError, match="must subclass aprank.inference.Problem"):
        add_kind(ProblemKind("broken", "-", object, ranking.instances, oracle="brute"))
    with pytest.raises(TypeError, match="Instances of that kind"):
        add_kind(ProblemKind("broken", "-", ranking.problem_type, ranking.instances,
                             oracle="brute"))


def test_the_abstract_types_cannot_be_half_implemented():
    from aprank.inference import Instances, Problem

    class Half(Problem):
        def solve(self, scores, algorithm=None, **inputs):
            return None

    with pytest.raises(TypeError, match="solve_one"):
        Half()
    with pytest.raises(TypeError, match="abstract"):
        type("NoInstances", (Instances,), {"kind": "x"})()
