"""The architecture, read from the code (the rules of the repository's layout):

* the library: layers stay apart, no private names cross package seams (imported, or read
  off an object), no cycles, no late imports of aprank modules, no import tricks; the compiled
  sources cimport and include only downwards, and across a seam only declarations (.pxd);
  private scikit-learn names come through aprank.sklearn_compat alone;
* the kinds: every problem kind is a folder of aprank/inference with the same modules, reached
  by the others only through the names its __init__ exports, and its problem type and
  instances implement the abstract ones (``Problem``, ``Instances``);
* the tools (``benchmarks/``, ``experiments/``, ``figures/``) live beside the package: the
  package never imports them nor matplotlib, they import only public names of aprank and play
  no import tricks either, no cycle among them, and only the package is installed;
* the tests: their support modules in one package, every fixture name defined once.
"""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "aprank"

#: Lower layers never import higher ones: inference (what an algorithm computes), models (joint
#: feature, loss, which inference), learners (how w is found), tools (bench, checks, figures,
#: experiments, command line), and the package's public face last.
LAYERS = {
    "aprank.validation": 0, "aprank.sklearn_compat": 0, "aprank._validation_cy": 0,
    "aprank._metrics_cy": 0, "aprank.losses": 0, "aprank.metrics": 0, "aprank.datasets": 0,
    "aprank.inference": 1, "aprank.models": 2, "aprank.learn": 3, "aprank.torch": 3,
    "aprank.dask": 4,     # the estimators on a Dask cluster, over models and learners
    "aprank.boost": 4,    # boosted trees on the hinges: inference, metrics, the learners' warnings
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
    functions = {id(n) for f in ast.walk(tree)
                 if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        late = id(node) in functions
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "aprank":
                    yield a.name, None, node.lineno, late
        elif (isinstance(node, ast.ImportFrom) and node.module
              and node.module.split(".")[0] == "aprank"):
            for a in node.names:
                dotted = f"{node.module}.{a.name}"
                if is_module(dotted):
                    yield dotted, None, node.lineno, late
                else:
                    yield node.module, a.name, node.lineno, late


FILES = sorted(ROOT.rglob("*.py"))
GRAPH = {module_name(f): [(t, attr, line, late) for t, attr, line, late in imports(f)]
         for f in FILES}


def test_every_module_is_read():
    assert ({"aprank.inference._registry", "aprank.models._ranking", "aprank.learn._cccp"}
            <= set(GRAPH))


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


def import_cycle(edges: dict) -> list | None:
    """The first cycle of the graph ``edges`` (module -> modules it imports), as the modules
    along it with the first repeated at the end, or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if state.get(t) == "open":
                return stack[stack.index(t):] + [t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        stack.pop()
        state[m] = "done"
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_no_import_cycle():
    edges = {m: {t for t, _, _, _ in e if t != m} for m, e in GRAPH.items()}
    cycle = import_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle():
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert import_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


TRICKS = ["extend_path", "sys.path", "spec_from_file_location", "__path__ =", "syspath_prepend"]


@pytest.mark.parametrize("trick", TRICKS)
def test_no_import_tricks(trick):
    tools = [f for tool in ("benchmarks", "experiments", "figures")
             for f in (ROOT.parent / tool).rglob("*.py")]
    bad = [str(f) for f in FILES + tools if trick in f.read_text()]
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


# ---------------------------------------------------------------------------- the tools
REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGE = REPOSITORY / "aprank"
TOOLS = ("benchmarks", "experiments", "figures")
TOOL_FILES = sorted(f for tool in TOOLS for f in (REPOSITORY / tool).rglob("*.py"))
PACKAGE_FILES = sorted(PACKAGE.rglob("*.py"))
#: Modules the figure scripts import from their own folder (it is on their path, not a package).
FIGURE_MODULES = {f.stem for f in (REPOSITORY / "figures").glob("*.py")}


def imported(path: Path):
    """(line, dotted module, imported name or None) for every import in the file; a relative
    import is a module of the file's own package, never aprank."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                yield node.lineno, node.module, alias.name


def test_every_file_is_read():
    names = {f.relative_to(REPOSITORY).as_posix() for f in TOOL_FILES}
    assert {"benchmarks/__main__.py", "benchmarks/ranking.py", "experiments/__main__.py",
            "figures/make_figures.py"} <= names
    assert PACKAGE / "__main__.py" in PACKAGE_FILES


def test_the_package_never_imports_the_tools():
    bad = [f"{path.relative_to(REPOSITORY)}:{line} imports {module}"
           for path in PACKAGE_FILES for line, module, _ in imported(path)
           if module.split(".")[0] in TOOLS + tuple(FIGURE_MODULES)]
    assert not bad, "\n".join(bad)


def _private(dotted: str) -> bool:
    return any(part.startswith("_") for part in dotted.split("."))


def test_the_tools_import_only_public_names_of_aprank():
    bad = []
    for path in TOOL_FILES:
        for line, module, name in imported(path):
            if module.split(".")[0] != "aprank":
                continue
            if _private(module) or (name is not None and _private(name)):
                bad.append(f"{path.relative_to(REPOSITORY)}:{line} imports "
                           f"{module}{'' if name is None else ' ' + name}")
    assert not bad, "\n".join(bad)


def test_the_check_sees_a_private_import(tmp_path):
    """The rule above can fail: a private module, a private name, and `import aprank._x`."""
    source = tmp_path / "tool.py"
    source.write_text("import aprank._validation_cy\nfrom aprank.dask._data import Block\n"
                      "from aprank.checks import _solve\n"
                      "from aprank.checks import bench_instance\n")
    flagged = [(module, name) for _, module, name in imported(source)
               if module.split(".")[0] == "aprank" and (_private(module) or _private(name or ""))]
    assert flagged == [("aprank._validation_cy", None), ("aprank.dask._data", "Block"),
                       ("aprank.checks", "_solve")]


def test_the_package_never_imports_matplotlib():
    bad = [f"{path.relative_to(REPOSITORY)}:{line}" for path in PACKAGE_FILES
           for line, module, _ in imported(path) if module.split(".")[0] == "matplotlib"]
    # the compiled kernels' sources too (Cython is not Python's grammar: read as text)
    pattern = re.compile(r"^\s*(c?import|from)\s+matplotlib\b", re.M)
    bad += [str(path.relative_to(REPOSITORY)) for path in PACKAGE.rglob("*.pyx")
            if pattern.search(path.read_text())]
    assert not bad, "\n".join(bad)


@pytest.fixture(scope="module")
def pyproject():
    try:
        import tomllib
    except ImportError:        # Python < 3.11
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((REPOSITORY / "pyproject.toml").read_text())


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower()


def test_matplotlib_is_no_dependency_of_the_package(pyproject):
    names = {_requirement_name(r) for r in pyproject["project"]["dependencies"]}
    assert "numpy" in names          # the dependencies were read
    assert "matplotlib" not in names
    extras = pyproject["project"]["optional-dependencies"]
    assert "matplotlib" in {_requirement_name(r) for r in extras["figures"]}
    assert "matplotlib" in {_requirement_name(r) for r in extras["test"]}   # test_figures


def test_the_test_extra_installs_what_the_tests_need(pyproject):
    """``pip install -e ".[test]"`` is all the README's test command installs: the docs tools
    that tests/documentation/test_docs.py builds with come with it (PyTorch stays apart: see the
    README)."""
    extras = pyproject["project"]["optional-dependencies"]
    assert set(extras["docs"]) <= set(extras["test"])
    assert "torch" not in {_requirement_name(r) for r in extras["test"]}


def test_the_package_warnings_are_errors_in_its_tests(pyproject):
    """Every warning class the package defines (or issues: scikit-learn's ConvergenceWarning)
    is an error in the tests, so none leaks into pytest's summary unseen: a test that provokes
    one says so with pytest.warns."""
    import importlib
    import inspect
    import warnings

    import sklearn.exceptions

    filters = pyproject["tool"]["pytest"]["ini_options"]["filterwarnings"]
    errors = set()
    for line in filters:
        action, _, category = line.split(":")[:3]
        if action == "error":
            module, _, name = category.rpartition(".")
            errors.add(getattr(importlib.import_module(module), name))
    defined = {obj for module in ("aprank.inference", "aprank.learn", "aprank.validation")
               for _, obj in inspect.getmembers(importlib.import_module(module), inspect.isclass)
               if issubclass(obj, Warning) and obj.__module__.startswith("aprank")}
    assert importlib.import_module("aprank.learn").SlowFitWarning in defined
    for category in defined | {sklearn.exceptions.ConvergenceWarning}:
        assert any(issubclass(category, error) for error in errors), category
        with pytest.raises(category):           # the filters above are this test's too
            warnings.warn("a leak", category)


def test_only_the_package_is_installed(pyproject):
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    assert include and all(pattern.split(".")[0].rstrip("*") == "aprank" for pattern in include)


@pytest.mark.parametrize("tool", ["benchmarks", "experiments"])
def test_each_tool_package_runs_as_a_module(tool):
    assert (REPOSITORY / tool / "__main__.py").is_file()
    assert (REPOSITORY / tool / "__init__.py").is_file()


#: optional packages the tests import (or that libraries probe for) without always being
#: installed: a folder of tests/ by one of these names would be imported in their place
OPTIONAL_MODULES = {"torch", "triton", "dask", "distributed", "lightgbm", "xgboost", "libauc",
                    "pytorch_metric_learning",
                    "datasets", "pandas", "hypothesis", "cloudpickle", "maxflow", "sphinx"}


def test_no_folder_of_the_tests_shadows_a_module():
    """pytest puts tests/ on sys.path (its support modules are imported from there), so a
    folder ``tests/torch`` would be found by ``import torch`` as a namespace package wherever
    PyTorch is not installed, and the tests that should skip would fail instead."""
    import importlib.metadata

    installed = set(importlib.metadata.packages_distributions())
    folders = {p.name for p in (REPOSITORY / "tests").iterdir() if p.is_dir()
               and not p.name.startswith((".", "_"))}
    assert not folders & (installed | OPTIONAL_MODULES | {"aprank", "benchmarks", "experiments",
                                                          "figures"})


# ---------------------------------------------------------------------------- compiled sources
#: The C++ headers' include path besides a module's own folder (setup.py's SHARED).
SHARED_INCLUDE = PACKAGE
CIMPORT = re.compile(r"^\s*(?:from\s+(aprank[\w.]*)\s+cimport\b|cimport\s+(aprank[\w.]*))", re.M)
EXTERN = re.compile(r'^\s*cdef\s+extern\s+from\s+"([^"*]+)"', re.M)


def compiled_sources():
    return sorted(p for suffix in ("*.pyx", "*.pxd") for p in PACKAGE.rglob(suffix))


def compiled_imports(path: Path, shared: Path = SHARED_INCLUDE):
    """(line, dotted module) of each aprank module the source cimports, and (line, header
    path) of each C++ header it includes, resolved as the compiler does (the source's own
    folder, then the shared include folder)."""
    text = path.read_text()
    cimports = [(text.count("\n", 0, m.start()) + 1, m.group(1) or m.group(2))
                for m in CIMPORT.finditer(text)]
    headers = []
    for m in EXTERN.finditer(text):
        found = next((folder / m.group(1) for folder in (path.parent, shared)
                      if (folder / m.group(1)).is_file()), None)
        if found is not None:      # a system header (Python.h) is no module of the package
            headers.append((text.count("\n", 0, m.start()) + 1, found))
    return cimports, headers


def compiled_violations(paths, root: Path = PACKAGE) -> list:
    """Each cimport or include of a compiled source that crosses a package seam the wrong way:
    upwards in the layers, or into another package's compiled implementation (a .pyx) rather
    than its declarations (a .pxd with no .pyx: the C-level interface it offers the layers
    above, as ``aprank.inference._interrupt``'s Ctrl-C polling)."""
    def module_of(path):
        return ".".join(("aprank",) + path.relative_to(root).with_suffix("").parts)

    bad = []
    for path in paths:
        module = module_of(path)
        cimports, headers = compiled_imports(path, root)
        for line, target in cimports:
            if package_of(target) == package_of(module):
                continue
            where = REPOSITORY.joinpath(*target.split("."))
            if layer_of(target) > layer_of(module):
                bad.append(f"{module}:{line} cimports {target} from a higher layer")
            elif where.with_suffix(".pyx").exists() or not where.with_suffix(".pxd").exists():
                bad.append(f"{module}:{line} cimports {target}, not a declarations-only .pxd")
        for line, header in headers:
            owner = module_of(header.parent / "__init__.pxd").rsplit(".", 1)[0]
            # the package root's C++ (the sort the metrics and the kernels share) is the
            # lowest layer's, not the public face's
            layer = 0 if owner == "aprank" else layer_of(owner)
            if package_of(owner) != package_of(module) and layer > layer_of(module):
                bad.append(f"{module}:{line} includes {header.relative_to(root).as_posix()} "
                           "of a higher layer")
    return bad


def test_compiled_sources_cross_seams_only_downwards_and_through_declarations():
    sources = compiled_sources()
    assert PACKAGE / "learn" / "_qp_cy.pyx" in sources
    read = [compiled_imports(p) for p in sources]
    assert sum(len(c) for c, _ in read) >= 10 and sum(len(h) for _, h in read) >= 3
    bad = compiled_violations(sources)
    assert not bad, "\n".join(bad)


def test_the_compiled_rule_sees_a_planted_cimport(tmp_path):
    """The rule above can fail: a model's kernel that cimports a learner's kernel (upwards), one
    that cimports a kind's compiled implementation, and the metrics including a kind's header;
    the planted sources are read as if they were the package's (``root``)."""
    planted = {
        "models/_planted_up.pyx": "from aprank.learn._qp_cy cimport run\n",
        "models/_planted_impl.pyx": "from aprank.inference.ranking._driver_cy cimport rank_one\n",
        "_metrics_cy.pyx": 'cdef extern from "inference/topk/_cstar.hpp":\n    pass\n',
        "models/_planted_fine.pyx": "from aprank.inference._interrupt cimport poll_stop\n",
    }
    (tmp_path / "inference" / "topk").mkdir(parents=True)
    (tmp_path / "inference" / "topk" / "_cstar.hpp").write_text("")
    paths = []
    for name, text in planted.items():
        paths.append(tmp_path / name)
        paths[-1].parent.mkdir(parents=True, exist_ok=True)
        paths[-1].write_text(text)
    bad = compiled_violations(paths, root=tmp_path)
    assert len(bad) == 3, bad
    assert "higher layer" in bad[0] and "declarations-only" in bad[1] and "includes" in bad[2]


# ---------------------------------------------------------------------------- private attributes
def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_attributes_defined(tree: ast.AST) -> set:
    """The private attribute names a module defines: its classes' private methods and class
    attributes, the private attributes it assigns (``x._a = ...``) and passes as keywords
    (``self.__dict__.update(_a=...)``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.add(item.name)
                targets = (item.targets if isinstance(item, ast.Assign)
                           else [item.target] if isinstance(item, ast.AnnAssign) else [])
                out |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)
    return {name for name in out if _is_private(name)}


def private_accesses(tree: ast.AST):
    """(line, name) of each private attribute read off an object other than the module's own
    ``self`` / ``cls`` / ``super()``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if isinstance(base, ast.Call) and getattr(base.func, "id", None) == "super":
                continue
            yield node.lineno, node.attr


def private_overrides(tree: ast.AST, imported_bases: set):
    """(line, name) of each private method a class defines over a base imported from aprank."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", None) in imported_bases
                                                  for b in node.bases):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and _is_private(item.name):
                    yield item.lineno, item.name


TREES = {path: ast.parse(path.read_text()) for path in PACKAGE_FILES + TOOL_FILES}


def _package_folder(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else ""


def private_crossings(trees: dict) -> list:
    """Each private attribute a module reads (or a tool's subclass overrides) that its own
    package never defines and another package of aprank does: a private name crossing a seam
    through an object, where the import rules above cannot see it."""
    defined = {}
    for path, tree in trees.items():
        owner = (_package_folder(path) if path.is_relative_to(PACKAGE)
                 else "tool:" + path.relative_to(REPOSITORY).as_posix())
        defined.setdefault(owner, set()).update(private_attributes_defined(tree))
    bad = []
    for path, tree in trees.items():
        in_package = path.is_relative_to(PACKAGE)
        own = (_package_folder(path) if in_package
               else "tool:" + path.relative_to(REPOSITORY).as_posix())
        elsewhere = set().union(*(names for owner, names in defined.items()
                                  if owner != own and not owner.startswith("tool:")))
        flagged = [(line, name) for line, name in private_accesses(tree)
                   if name not in defined[own] and name in elsewhere]
        if not in_package:
            bases = {alias.asname or alias.name for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom)
                     and (node.module or "").startswith("aprank")
                     for alias in node.names}
            flagged += [(line, name) for line, name in private_overrides(tree, bases)
                        if name in elsewhere]
        bad += [f"{path.relative_to(REPOSITORY)}:{line} uses {name}, private to another package"
                for line, name in flagged]
    return bad


def test_no_private_attribute_crosses_a_package_seam():
    bad = private_crossings(TREES)
    assert not bad, "\n".join(bad)


def test_the_private_attribute_rule_sees_a_planted_access():
    """The rule above can fail: the C-star model reaching into the top-k problem's private
    method, and a tool's subclass overriding a private hook of a package class."""
    model = PACKAGE / "models" / "_cstar.py"
    tool = REPOSITORY / "experiments" / "supervised.py"
    planted = dict(TREES)
    planted[model] = ast.parse(model.read_text() + "\n\ndef planted(problem):\n"
                               "    return problem._check_clamp(None, 1)\n")
    planted[tool] = ast.parse(tool.read_text() + "\n\nfrom aprank.inference import TopKProblem\n"
                              "\n\nclass Planted(TopKProblem):\n"
                              "    def _check_clamp(self, c, kk):\n        return None\n")
    bad = sorted(set(private_crossings(planted)) - set(private_crossings(TREES)))
    assert len(bad) == 2 and all("_check_clamp" in line for line in bad), bad
    assert bad[0].startswith("aprank/models/_cstar.py") and bad[1].startswith("experiments/")


# ---------------------------------------------------------------------------- the tools' graph
def tool_module(path: Path) -> str:
    name = ".".join(path.relative_to(REPOSITORY).with_suffix("").parts)
    return name.removesuffix(".__init__")


def tool_edges(files) -> dict:
    """module -> the tool modules it imports (late imports included: a cycle through a
    function's import is one all the same)."""
    known = {tool_module(f) for f in files}
    edges = {}
    for path in files:
        targets = set()
        for _, module, name in imported(path):
            if module.split(".")[0] in FIGURE_MODULES:      # a figure script's own folder
                module = f"figures.{module}"
            for candidate in (f"{module}.{name}" if name else None, module):
                if candidate in known:
                    targets.add(candidate)
                    break
        edges[tool_module(path)] = targets - {tool_module(path)}
    return edges


def test_no_cycle_among_the_tools():
    edges = tool_edges(TOOL_FILES)
    assert edges["figures.fig_nonlinear"] >= {"experiments.nonlinear"}    # the graph was read
    cycle = import_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# ---------------------------------------------------------------------------- the tests' layout
TESTS = REPOSITORY / "tests"


def test_the_tests_support_modules_are_one_package():
    """pytest puts tests/ on the import path: a support module at its top level (``oracle``,
    ``signals``) would be importable by that bare name from anywhere, and shadow an installed
    module of the same name. They live in one package named after the project instead."""
    top = sorted(p.name for p in TESTS.glob("*.py"))
    assert "conftest.py" in top
    assert [name for name in top if name != "conftest.py" and not name.startswith("test_")] == []
    support = TESTS / "aprank_support"
    assert (support / "__init__.py").is_file() and (support / "oracle.py").is_file()
    assert not list(support.glob("test_*.py"))


def fixtures_by_name(files) -> dict:
    """fixture name -> the files defining a fixture of that name."""
    found: dict = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    "fixture" in ast.unparse(d) for d in node.decorator_list):
                found.setdefault(node.name, []).append(path.relative_to(REPOSITORY).as_posix())
    return found


def test_every_fixture_name_is_defined_once():
    """A fixture that one file redefines over conftest's (``digits`` as three different
    shapes) means a different thing in each file that reads it: each name has one meaning."""
    found = fixtures_by_name(sorted(TESTS.rglob("*.py")))
    assert "digits" in found and "real_data_home" in found      # the files were read
    repeated = {name: files for name, files in found.items() if len(files) > 1}
    assert not repeated, repeated


# ---------------------------------------------------------------------------- scikit-learn
#: every Python file of the repository that could import scikit-learn
SOURCES = sorted(f for folder in ("aprank", "tests", "benchmarks", "experiments", "figures", "docs")
                 for f in (REPOSITORY / folder).rglob("*.py"))
COMPAT = REPOSITORY / "aprank" / "sklearn_compat.py"


def private_sklearn_imports(source: str) -> list:
    """(line, dotted name) of each import of a private scikit-learn module or name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        else:
            continue
        found += [(line, dotted) for line, dotted in names if dotted.split(".")[0] == "sklearn"
                  and any(p.startswith("_") and not p.startswith("__")
                          for p in dotted.split(".")[1:])]
    return found


def test_only_the_compat_module_imports_private_sklearn_names():
    assert COMPAT in SOURCES and REPOSITORY / "aprank" / "learn" / "_checks.py" in SOURCES
    bad = [f"{path.relative_to(REPOSITORY)}:{line} imports {dotted}"
           for path in SOURCES if path != COMPAT
           for line, dotted in private_sklearn_imports(path.read_text())]
    assert not bad, "\n".join(bad)


def test_the_rule_sees_each_form_of_private_import():
    source = ("from sklearn.utils._param_validation import Interval\n"
              "from sklearn.base import _fit_context\n"
              "import sklearn.utils._tags\n"
              "from sklearn.utils import check_random_state\n"
              "from sklearn.base import __version__\n")
    assert [dotted for _, dotted in private_sklearn_imports(source)] == [
        "sklearn.utils._param_validation.Interval", "sklearn.base._fit_context",
        "sklearn.utils._tags"]
    assert private_sklearn_imports(COMPAT.read_text())      # the module itself is read
