"""The library and the repository's tools kept apart (issue 23), read from the code: the package
never imports the tools nor matplotlib, the tools use only public names of aprank, and the
tools are never installed."""
import ast
import re
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
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
    assert {"benchmarks/__main__.py", "benchmarks/bench.py", "experiments/__main__.py",
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
                      "from aprank.checks import _solve\nfrom aprank.checks import bench_instance\n")
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


def test_only_the_package_is_installed(pyproject):
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    assert include and all(pattern.split(".")[0].rstrip("*") == "aprank" for pattern in include)


@pytest.mark.parametrize("tool", ["benchmarks", "experiments"])
def test_each_tool_package_runs_as_a_module(tool):
    assert (REPOSITORY / tool / "__main__.py").is_file()
    assert (REPOSITORY / tool / "__init__.py").is_file()
