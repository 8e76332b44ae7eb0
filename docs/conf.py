"""Sphinx configuration of the aprank docs: ``sphinx-build -W --keep-going -b html docs
docs/_build/html`` from the repository root (offline: no intersphinx, no remote images).

The API pages, the algorithm table and the figure gallery are written at build time by the
local extension ``_ext/aprank_docs.py`` (into git-ignored folders)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

import aprank_docs  # noqa: E402  (the local extension: which optional modules are absent)

import aprank  # noqa: E402  (the package these docs describe, imported from the venv)

project = "aprank"
author = "the aprank developers"
copyright = "2026, the aprank developers"
release = version = aprank.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "aprank_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated", "gallery/*.md", "Thumbs.db", ".DS_Store"]

# autosummary: a stub page per public name, written into docs/api/generated/ (git-ignored)
autosummary_generate = True
autosummary_generate_overwrite = True
autodoc_member_order = "bysource"
autodoc_typehints = "none"          # numpydoc's Parameters sections say the types
# the optional extras (PyTorch, Dask, LightGBM) that are not installed: mocked, so that their
# packages' API pages render from the source in any environment
autodoc_mock_imports = aprank_docs.absent_extra_modules()
# numpydoc: the class templates list the members themselves
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# MyST: Markdown pages; headings get anchors so pages can link to sections
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "alabaster"
html_title = f"aprank {release}"
html_static_path = []
html_theme_options = {"description": "exact loss-augmented inference and structured SVMs "
                                     "for ranking losses"}


# --------------------------------------------------------------------------- class pages
# The estimators inherit fit, score, decision_function and predict from private bases
# (``_StructuredSVM``, ``_SVMCV``, ...): the class template asks for inherited members, so a
# page lists every public method a user calls, and the two hooks below keep what is not
# aprank's own out of the page: the methods of scikit-learn's mixins and the methods and
# attributes of Python's types (``get_params``, ``tuple.count``, ``int.from_bytes`` and
# ``int.real`` of an IntEnum: documented where they are defined), and private bases in
# the "Bases:" line (each replaced by its own bases, down to public classes).
def _defined_outside_aprank(obj) -> bool:
    obj = getattr(obj, "__func__", obj)
    module = getattr(obj, "__module__", None)
    if module is None and hasattr(obj, "__objclass__"):      # a method of a builtin type
        module = obj.__objclass__.__module__
    elif module is None and isinstance(getattr(obj, "__self__", None), type):
        # a builtin type's classmethod bound to a class that inherits it (int.from_bytes of
        # an IntEnum): the module of the class that defines it
        owner = next((c for c in obj.__self__.__mro__ if obj.__name__ in vars(c)), None)
        module = None if owner is None else owner.__module__
    return module is not None and not module.startswith("aprank")


def _skip_foreign_members(app, what, name, obj, skip, options):
    import inspect

    if what == "class" and (inspect.isroutine(obj) or hasattr(obj, "__wrapped__")
                            or inspect.isgetsetdescriptor(obj)) \
            and _defined_outside_aprank(obj):
        return True
    return None


def _public_bases(app, name, obj, options, bases):
    def public(base):
        if not getattr(base, "__name__", "").startswith("_"):
            return [base]
        return [b for parent in base.__bases__ if parent is not object for b in public(parent)]

    shown = []
    for base in bases:
        for b in public(base):
            if b not in shown:
                shown.append(b)
    bases[:] = shown


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("autodoc-process-bases", _public_bases)
