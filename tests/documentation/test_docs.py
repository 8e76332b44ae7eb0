"""The docs stay true: every Python block on their pages runs, every public name has a numpydoc
docstring and an entry in the API reference, and Sphinx builds them with warnings as errors.

The docs tools (Sphinx, numpydoc, MyST) come with the test extra; without them the tests that
need them skip, saying so, except where ``CI=true`` (``.ci/run`` sets it), where a missing tool
is a failure.
"""
import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aprank_support.named_warnings import only_the_warnings_named_in

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import aprank_docs  # noqa: E402  (the extension that writes the API pages)

#: the packages whose public names must be documented (every package with an API page)
PACKAGES = aprank_docs.PACKAGES
#: optional extras a page's blocks may import; without them the page skips, saying so
EXTRAS = {"torch": "aprank[torch]", "dask": "aprank[dask]", "distributed": "aprank[dask]",
          "lightgbm": "aprank[boost]"}
#: the extras' modules that the test extra does not install
OUTSIDE_THE_TEST_EXTRA = {"torch", "lightgbm"}


def require(module: str):
    """Import a docs tool; skip without it, but fail under CI=true (CI installs it)."""
    if os.environ.get("CI", "").lower() == "true":
        try:
            return importlib.import_module(module)
        except ImportError as exc:
            pytest.fail(f"CI=true and {module} is missing ({exc}): the test extra installs it, "
                        f"pip install -e \".[test]\"")
    return pytest.importorskip(module, reason=f"needs {module}: pip install -e \".[test]\"")


# --------------------------------------------------------------------------- (a) code blocks
def doc_pages():
    """Every Markdown (and hand-written reStructuredText) page under docs/, relative paths."""
    skip = ("_build", "_generated", "generated", "_templates")
    pages = [p for p in sorted(DOCS.rglob("*.md")) + sorted(DOCS.rglob("*.rst"))
             if not set(p.relative_to(DOCS).parts) & set(skip)]
    return [p.relative_to(DOCS).as_posix() for p in pages]


MD_BLOCK = re.compile(r"^```(?:python|\{code-block\} python)[ \t]*\n((?::[^\n]*\n)*)(.*?)^```",
                      re.S | re.M)
RST_BLOCK = re.compile(r"^\.\. code-block:: python[ \t]*\n((?:[ \t]+:[^\n]*\n)*)\n"
                       r"((?:[ \t]+[^\n]*\n|\n)+)",
                       re.M)


def python_blocks(page: str):
    """The page's Python blocks, in order (a MyST ```python fence or {code-block} python; an
    rst ``.. code-block:: python``)."""
    text = (DOCS / page).read_text()
    if page.endswith(".md"):
        return [m.group(2) for m in MD_BLOCK.finditer(text)]
    import textwrap
    return [textwrap.dedent(m.group(2)) for m in RST_BLOCK.finditer(text)]


PAGES_WITH_CODE = [p for p in doc_pages() if python_blocks(p)]


def test_code_blocks_are_found():
    assert len(PAGES_WITH_CODE) >= 10, PAGES_WITH_CODE
    for page in ("getting-started.md", "inference.md", "learning.md", "torch.md", "dask.md"):
        assert page in PAGES_WITH_CODE


#: pages whose blocks take long: dask.md starts a local cluster of worker processes
SLOW_PAGES = {"dask.md"}


def _page_marks(page):
    """slow for SLOW_PAGES; extras (.ci/run's extras lane) for a page importing an extra that
    the test extra leaves out."""
    code = "\n".join(python_blocks(page))
    needs = {module for module in EXTRAS
             if re.search(rf"^\s*(import|from) {module}\b", code, flags=re.M)}
    return ([pytest.mark.slow] if page in SLOW_PAGES else []) + \
        ([pytest.mark.extras] if needs & OUTSIDE_THE_TEST_EXTRA else [])


@pytest.mark.min_versions
@pytest.mark.parametrize("page", [pytest.param(p, marks=_page_marks(p)) for p in PAGES_WITH_CODE])
def test_python_blocks_run(page, tmp_path, monkeypatch):
    """A page's blocks run in order in one namespace (later blocks use what earlier ones
    define), in a temporary working directory; data comes from the page itself (scikit-learn's
    datasets, random arrays) or from the data home (aprank.datasets: skipped without it)."""
    from aprank.datasets import DataUnavailableError

    blocks = python_blocks(page)
    code = "\n".join(blocks)
    for module, extra in EXTRAS.items():
        if re.search(rf"^\s*(import|from) {module}\b", code, flags=re.M) and \
                importlib.util.find_spec(module) is None:
            pytest.skip(f"docs/{page} needs {extra}")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}     # the Dask example guards its cluster by this
    try:
        with only_the_warnings_named_in(code):
            for k, block in enumerate(blocks):
                exec(compile(block, f"docs/{page} block {k + 1}", "exec"), namespace)
    except DataUnavailableError:
        pytest.skip(f"docs/{page} needs the data home (docs/data.md)")


# --------------------------------------------------------------------------- (b) public names
def public_names():
    """(package, name) for every name of every documented package's __all__; a package whose
    optional extra is missing contributes a single (package, None), which skips."""
    out = []
    for package in PACKAGES:
        try:
            module = importlib.import_module(package)
        except ImportError:
            out.append((package, None))
            continue
        out += [(package, name) for name in module.__all__]
    return out


PUBLIC = public_names()
#: the same as parameters: those of the packages that need an extra outside the test extra
#: marked for .ci/run's extras lane
PUBLIC_PARAMS = [pytest.param(package, name, id=f"{package}.{name}",
                              marks=[pytest.mark.extras] if package in ("aprank.torch",
                                                                        "aprank.boost") else [])
                 for package, name in PUBLIC]


def _module(package):
    try:
        return importlib.import_module(package)
    except ImportError:
        pytest.skip(f"{package} needs its optional extra")


def test_the_required_packages_are_documented():
    required = {"aprank", "aprank.learn", "aprank.inference", "aprank.models", "aprank.metrics",
                "aprank.datasets", "aprank.torch", "aprank.dask"}
    assert required <= set(PACKAGES)


@pytest.mark.parametrize("package,name", PUBLIC_PARAMS)
def test_public_name_has_an_api_entry(package, name):
    """The API page written from the package's __all__ lists the name: an autosummary entry
    (the name, or a re-exported name's entry in its home package), a module link or a
    constant."""
    require("sphinx")
    module = _module(package)
    page = aprank_docs.api_page(package)
    kind = aprank_docs.classify(getattr(module, name))
    if kind in ("classes", "functions", "exceptions"):
        home = aprank_docs.home(package, name)
        entry = aprank_docs._entry(package, home, name)
        assert re.search(rf"^   {re.escape(entry)}$", page, flags=re.M), page
        assert name in getattr(importlib.import_module(home), "__all__")
    elif kind == "modules":
        target = getattr(module, name).__name__
        assert target in PACKAGES and f":doc:`{target}`" in page
    else:
        assert f".. py:data:: {name}" in page


@pytest.mark.parametrize("package,name", PUBLIC_PARAMS)
def test_public_name_has_a_numpydoc_docstring(package, name):
    """Functions and classes: a docstring numpydoc parses without warnings, with a summary line
    and every named parameter documented (see ``aprank_docs.docstring_problems``); constants:
    a ``#:`` comment or a mention in the package's docstring; modules: a docstring."""
    require("numpydoc")
    module = _module(package)
    obj = getattr(module, name)
    kind = aprank_docs.classify(obj)
    if kind == "constants":
        require("sphinx")
        assert aprank_docs.constant_doc(package, name) or name in (module.__doc__ or ""), \
            f"{package}.{name}: document it with a #: comment or in {package}'s docstring"
        return
    if kind == "modules":
        assert inspect.getdoc(obj), f"{package}.{name} has no docstring"
        return
    problems = aprank_docs.docstring_problems(obj)
    assert not problems, f"{package}.{name} ({obj.__module__}): {'; '.join(problems)}"


# --------------------------------------------------------------------------- (c) the build
@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    """Build the docs once, as the README says, into a temporary folder: (rc, output, html
    folder, seconds)."""
    for tool in ("sphinx", "numpydoc", "myst_parser"):
        require(tool)
    out = tmp_path_factory.mktemp("docs-html")
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                          "html", "-d", str(out / ".doctrees"), str(DOCS), str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    return run.returncode, run.stdout + run.stderr, out, time.perf_counter() - t0


@pytest.mark.slow          # the build: about 20 s
def test_docs_build_without_warnings(built_docs):
    rc, output, _, seconds = built_docs
    assert rc == 0, f"sphinx-build -W failed after {seconds:.0f} s:\n{output[-6000:]}"


@pytest.mark.slow
def test_built_api_reference_has_a_page_per_package_and_name(built_docs):
    rc, _, html, _ = built_docs
    assert rc == 0
    for package in PACKAGES:
        assert (html / "api" / "generated" / f"{package}.html").is_file(), package
    for package, name in PUBLIC:
        if name is None:
            continue
        module = importlib.import_module(package)
        if aprank_docs.classify(getattr(module, name)) in ("classes", "functions", "exceptions"):
            home = aprank_docs.home(package, name)
            assert (html / "api" / "generated" / f"{home}.{name}.html").is_file(), \
                f"{package}.{name}"


def _declared_in_source(package: str):
    """(``__all__``, the names of it defined by ``def`` or ``class``) of a subpackage, read
    from its source without importing it (its extra may be absent)."""
    import ast

    folder = ROOT / Path(*package.split("."))
    names, defined = [], set()
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.col_offset == 0:
                defined.add(node.name)
            if path.name == "__init__.py" and isinstance(node, ast.Assign) and \
                    any(getattr(t, "id", None) == "__all__" for t in node.targets):
                names = ast.literal_eval(node.value)
    return names, defined


@pytest.mark.slow
@pytest.mark.parametrize("package", sorted(aprank_docs.EXTRAS))
def test_built_api_reference_renders_an_extra_installed_or_not(built_docs, package):
    """An optional package's API page lists every name of its ``__all__`` and says which extra
    it needs, and each function and class has its own page with its signature, whether or not
    the extra is installed where the docs are built (Sphinx mocks what is absent)."""
    rc, _, html, _ = built_docs
    assert rc == 0
    names, defined = _declared_in_source(package)
    assert names, f"no __all__ found in {package}'s source"
    page = (html / "api" / "generated" / f"{package}.html").read_text()
    assert "Needs the optional extra <code" in page and aprank_docs.EXTRAS[package][0] in page
    for name in names:
        assert name in page, f"{package}.{name} missing from its API page"
        if name in defined:
            stub = html / "api" / "generated" / f"{package}.{name}.html"
            assert stub.is_file(), stub.name
            assert 'class="sig-paren"' in stub.read_text(), \
                f"{stub.name}: no signature (documented as data, not as a function or class)"


@pytest.mark.slow
def test_built_pages_include_the_tools_tables_and_figures(built_docs):
    """The tables the tools write and the figures are in the built pages, via directives."""
    rc, _, html, _ = built_docs
    assert rc == 0
    included = "\n".join(p.read_text() for p in DOCS.rglob("*.md")
                         if "_build" not in p.parts and "_generated" not in p.parts)
    for table in sorted((ROOT / "figures" / "tables").glob("*.md")):
        if not table.stem.endswith("-quick"):
            assert f"figures/tables/{table.name}" in included, table.name
    for result in sorted((ROOT / "benchmarks" / "results").glob("*.md")):
        assert f"benchmarks/results/{result.name}" in included, result.name
        assert result.read_text().startswith("Regenerate: `"), \
            f"{result.name}: the first line names the command that regenerates it"
    gallery = (html / "gallery.html").read_text()
    for png in sorted((ROOT / "figures" / "out").glob("*.png")):
        assert png.name in gallery and (html / "_images" / png.name).is_file(), png.name
    algorithms = (html / "inference.html").read_text()
    for algo in __import__("aprank").algorithms():
        assert f"<td><p>{algo.name}</p></td>" in algorithms, algo.name


#: the methods an estimator's API page shows wherever the class offers them
ESTIMATOR_METHODS = ("fit", "partial_fit", "score", "decision_function", "predict",
                     "predict_proba", "transform")


def public_estimators():
    """(home package, name) of every scikit-learn estimator in a documented package's
    __all__, found by type so that a new estimator is covered without listing it."""
    from sklearn.base import BaseEstimator

    found = {}
    for package, name in PUBLIC:
        if name is None:
            continue
        obj = getattr(importlib.import_module(package), name)
        if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
            found[(aprank_docs.home(package, name), name)] = obj
    return found


def _signature_names(html: str, anchor: str):
    """The parameter names the page shows in the signature of the object ``anchor``; None
    where the page has no such object."""
    match = re.search(rf'<dt class="sig sig-object py" id="{re.escape(anchor)}">(.*?)</dt>',
                      html, flags=re.S)
    if match is None:
        return None
    return re.findall(r'<em class="sig-param">(?:<span class="o"><span class="pre">\*\*?'
                      r'</span></span>)?<span class="n"><span class="pre">(\w+)</span>',
                      match.group(1))


@pytest.mark.slow
def test_built_estimator_pages_list_the_public_methods_and_no_private_base(built_docs):
    """Every public estimator's page shows fit, score, decision_function and predict (those
    it offers, inherited from a private base or not) with all their named parameters (qid=,
    sample_weight=, bags=, groups=, ...), and its "Bases:" line names no private class."""
    rc, _, html, _ = built_docs
    assert rc == 0
    estimators = public_estimators()
    assert {"APSVM", "APSVMCV", "LatentAPSVM", "HOBSVM"} <= {n for _, n in estimators}
    for (home, name), cls in estimators.items():
        page = (html / "api" / "generated" / f"{home}.{name}.html").read_text()
        bases = re.search(r"<p>Bases: (.*?)</p>", page, flags=re.S)
        if bases is not None:
            shown = re.findall(r'<span class="pre">([\w.]+)</span>', bases.group(1))
            assert shown and not [b for b in shown if b.rsplit(".", 1)[-1].startswith("_")], \
                f"{home}.{name}: Bases: {shown}"
        for method in ESTIMATOR_METHODS:
            if not hasattr(cls, method):
                continue
            expected = [p.name for p in inspect.signature(getattr(cls, method)).parameters.values()
                        if p.name != "self"]
            shown = _signature_names(page, f"{home}.{name}.{method}")
            assert shown is not None, f"{home}.{name}: no {method} on its page"
            assert shown == expected, f"{home}.{name}.{method}: shows {shown}, has {expected}"
