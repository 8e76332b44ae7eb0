"""Pages of the aprank docs that are written at build time, from the code and the files the
tools write, so that nothing is copied by hand:

* the API reference: one page per public package, listing every name of its ``__all__``
  (autosummary then writes a stub page per name);
* the algorithm table, from ``aprank.algorithms().to_markdown()``;
* the figure gallery, one entry per ``figures/out/*.png`` (caption from the figure script's
  docstring, machine and run time from the JSON next to it), the PNGs copied beside it.

Everything goes to git-ignored folders (``docs/api/generated/``, ``docs/_generated/``), written
once the configuration is read, before Sphinx lists the sources.
``tests/documentation/test_docs.py`` imports this module to check that the API pages cover every
public name.
"""
import ast
import importlib
import importlib.util
import inspect
import json
import pkgutil
import shutil
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
API_OUT = DOCS / "api" / "generated"
GENERATED = DOCS / "_generated"
FIGURES = ROOT / "figures"

#: the public packages, one API page each, in the order of the API index
PACKAGES = ("aprank", "aprank.inference", "aprank.losses", "aprank.learn", "aprank.models",
            "aprank.metrics", "aprank.datasets", "aprank.checks", "aprank.validation",
            "aprank.torch", "aprank.dask", "aprank.boost")

GROUPS = (("classes", "Classes"), ("functions", "Functions"),
          ("exceptions", "Exceptions and warnings"), ("modules", "Modules"),
          ("constants", "Constants"))


def classify(obj) -> str:
    """Which group of an API page a public object belongs to."""
    if inspect.ismodule(obj):
        return "modules"
    if inspect.isclass(obj):
        return "exceptions" if issubclass(obj, BaseException) else "classes"
    if callable(obj):
        return "functions"
    return "constants"


#: the optional subpackages: the extra each needs and the third-party modules it imports
EXTRAS = {"aprank.torch": ("torch", ("torch", "triton")),
          "aprank.dask": ("dask", ("dask", "distributed")),
          "aprank.boost": ("boost", ("lightgbm",))}


def absent_extra_modules() -> list:
    """The optional third-party modules that cannot be imported here (Sphinx mocks them)."""
    return [module for _, modules in EXTRAS.values() for module in modules
            if importlib.util.find_spec(module) is None]


def import_package(package: str):
    """Import a documented package. An optional one whose extra is not installed is imported
    with the missing third-party modules replaced by Sphinx's mocks, as autodoc does with
    ``autodoc_mock_imports``: its API page then renders from the source all the same."""
    try:
        return importlib.import_module(package)
    except ImportError:
        if package not in EXTRAS:
            raise
    from sphinx.ext.autodoc.mock import mock

    with mock(absent_extra_modules()):
        return importlib.import_module(package)


def _unmocked(obj):
    """The function a mocked decorator (``@torch.compiler.disable`` without torch) wraps."""
    from sphinx.ext.autodoc.mock import undecorate

    return undecorate(obj)


def public_names(package: str) -> dict:
    """The package's ``__all__``, grouped as on its API page: {group: [name, ...]}."""
    module = import_package(package)
    groups = {key: [] for key, _ in GROUPS}
    for name in module.__all__:
        groups[classify(_unmocked(getattr(module, name)))].append(name)
    return groups


def _submodules(package: str):
    module = import_package(package)
    yield package
    for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
        yield f"{package}.{info.name}"


def constant_doc(package: str, name: str):
    """The ``#:`` comment documenting a constant of the package's ``__all__``, found in the
    package's own source or in one of its modules; None if there is none (then the package's
    docstring must describe it)."""
    from sphinx.pycode import ModuleAnalyzer

    for modname in _submodules(package):
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except Exception:   # compiled module, no source: nothing to read there
            continue
        if ("", name) in docs:
            return "\n".join(docs[("", name)]).strip()
    return None


def home(package: str, name: str) -> str:
    """The package whose API page documents a public object: the most specific package of
    ``PACKAGES`` that holds the object's defining module and lists the name in its ``__all__``
    (``aprank.infer`` is documented as ``aprank.inference.infer``), else ``package`` itself."""
    obj = getattr(import_package(package), name)
    defined_in = getattr(_unmocked(obj), "__module__", None) or ""
    best = package
    for candidate in PACKAGES:
        if (defined_in == candidate or defined_in.startswith(candidate + ".")) and \
                len(candidate) > len(best) and \
                name in getattr(import_package(candidate), "__all__", ()) and \
                getattr(import_package(candidate), name) is obj:
            best = candidate
    return best


def _entry(package: str, where: str, name: str) -> str:
    """An autosummary entry on ``package``'s page for a name documented in ``where``: relative
    to the page's module (autosummary refuses names that repeat the current module)."""
    if where == package:
        return name
    if where.startswith(package + "."):
        return f"~{where[len(package) + 1:]}.{name}"
    return f"~{where}.{name}"


def _value(obj) -> str:
    text = repr(obj)
    return text if len(text) <= 80 and "\n" not in text else f"a {type(obj).__name__}"


def api_page(package: str) -> str:
    """The reStructuredText of a package's API page (an optional package's page names the
    extra it needs, and renders whether or not that extra is installed)."""
    module = import_package(package)
    lines = [package, "=" * len(package), ""]
    if package in EXTRAS:
        lines += [f"Needs the optional extra ``{EXTRAS[package][0]}`` (installing it: "
                  ":doc:`/getting-started`).", ""]
    lines += [f".. automodule:: {package}", "   :no-members:", "",
              f".. currentmodule:: {package}", ""]
    groups = public_names(package)
    for key, title in GROUPS:
        names = groups[key]
        if not names:
            continue
        lines += [title, "-" * len(title), ""]
        if key in ("classes", "functions", "exceptions"):
            lines += [".. autosummary::", "   :toctree: .", "   :nosignatures:", ""]
            for name in names:
                where = home(package, name)
                lines.append(f"   {_entry(package, where, name)}")
            lines.append("")
        elif key == "modules":
            for name in names:
                target = getattr(module, name).__name__
                lines += [f"* ``{name}``: the module :mod:`{target}`, "
                          f"see :doc:`{target}`"]
            lines.append("")
        else:
            for name in names:
                doc = constant_doc(package, name)
                lines += [f".. py:data:: {name}", f"   :value: {_value(getattr(module, name))}",
                          ""]
                body = doc or f"Described in the module's docstring above (``{package}``)."
                lines += ["   " + line if line else "" for line in body.splitlines()] + [""]
    return "\n".join(lines) + "\n"


def write_if_changed(path: Path, text: str):
    """Write only when the text changed, so that Sphinx rebuilds only what changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_api_pages(out: Path = API_OUT):
    if out.is_dir():    # stubs of names that left an __all__ must not linger
        shutil.rmtree(out)
    for package in PACKAGES:
        write_if_changed(out / f"{package}.rst", api_page(package))
    toc = ["API reference", "=============", "",
           "One page per public package; each lists every name of the package's ``__all__``.",
           "", ".. toctree::", "   :maxdepth: 1", ""]
    toc += [f"   {package}" for package in PACKAGES]
    write_if_changed(out / "index.rst", "\n".join(toc) + "\n")


def write_algorithm_table(out: Path = GENERATED):
    import aprank

    write_if_changed(out / "algorithms.md", aprank.algorithms().to_markdown() + "\n")


def figure_entries(figures: Path = FIGURES):
    """(stem, title, description, json) for every committed figure PNG, sorted by name."""
    entries = []
    for png in sorted((figures / "out").glob("*.png")):
        stem = png.stem
        title, body = stem, ""
        script = figures / f"{stem}.py"
        if script.is_file():
            doc = ast.get_docstring(ast.parse(script.read_text())) or ""
            first, _, rest = doc.partition("\n")
            title, body = first.strip() or stem, rest.strip()
        meta = {}
        if png.with_suffix(".json").is_file():
            meta = json.loads(png.with_suffix(".json").read_text())
        entries.append((stem, title, body, meta))
    return entries


def write_gallery(out: Path = GENERATED, figures: Path = FIGURES):
    images = out / "figures"
    images.mkdir(parents=True, exist_ok=True)
    lines = []
    for stem, title, body, meta in figure_entries(figures):
        shutil.copy2(figures / "out" / f"{stem}.png", images / f"{stem}.png")
        lines += [f"## {title.rstrip('.')}", "", f"`python -m figures.make_figures --only {stem}`",
                  "", f"![{stem}](_generated/figures/{stem}.png)", ""]
        if body:
            lines += [body.replace("``", "`"), ""]
        if meta.get("machine"):
            when = f"; the run took {meta['seconds']:.0f} s" if meta.get("seconds") else ""
            lines += [f"Made on: {meta['machine']}{when}.", ""]
        notes = DOCS / "gallery" / f"{stem}.md"
        if notes.is_file():
            # relative to docs/gallery.md, the page that includes this one (so are the links
            # in the notes)
            lines += ["```{include} " + f"gallery/{stem}.md", "```", ""]
    write_if_changed(out / "gallery.md", "\n".join(lines))


def generate(app=None, config=None):
    write_api_pages()
    write_algorithm_table()
    write_gallery()


def _is_record(obj) -> bool:
    """A dataclass or a NamedTuple: its constructor parameters are its fields."""
    import dataclasses

    return inspect.isclass(obj) and (dataclasses.is_dataclass(obj) or
                                     (issubclass(obj, tuple) and hasattr(obj, "_fields")))


def docstring_problems(obj) -> list:
    """Why a public function or class's docstring is not numpydoc, [] if it is.

    It must exist, parse with ``numpydoc.docscrape`` without warnings, have a summary line,
    and document every named parameter of the signature (``*args``/``**kwargs`` aside) in a
    ``Parameters`` section (``Other Parameters`` too; for a dataclass or NamedTuple, whose
    parameters are its fields, an ``Attributes`` section will do)."""
    import warnings

    from numpydoc.docscrape import ClassDoc, FunctionDoc

    if not inspect.getdoc(obj):
        return ["no docstring"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            doc = (ClassDoc(obj, config={"show_class_members": False}) if inspect.isclass(obj)
                   else FunctionDoc(obj))
        except Exception as exc:     # numpydoc raises on a malformed section
            return [f"numpydoc cannot parse it: {exc}"]
    problems = [f"numpydoc: {w.message}" for w in caught]
    if not doc["Summary"]:
        problems.append("no summary line")
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):   # a builtin without a signature
        return problems
    named = [p.name for p in signature.parameters.values()
             if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not named:
        return problems
    sections = ["Parameters", "Other Parameters"] + (["Attributes"] if _is_record(obj) else [])
    documented = {part.strip().lstrip("*") for section in sections for entry in doc[section]
                  for part in entry.name.split(",")}
    if not any(doc[section] for section in sections):
        problems.append("no Parameters section")
    else:
        missing = [name for name in named if name not in documented]
        if missing:
            problems.append(f"parameters not documented: {', '.join(missing)}")
    return problems


def skip_member(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_<method>_request`` methods (metadata routing,
    documented by scikit-learn, whose docstrings refer to its own glossary)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", skip_member)
    # config-inited: before Sphinx lists the source files (autosummary reads that list)
    app.connect("config-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
