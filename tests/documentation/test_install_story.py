"""One install story: the README, docs/getting-started.md and docs/torch.md (and every other
page that says how to install something) give the same command for the same thing.

* PyTorch: the CPU build from PyTorch's own index, as PyTorch's selector gives it for pip,
  ``pip install torch --index-url https://download.pytorch.org/whl/cpu``; never a plain
  ``pip install torch`` or the ``torch`` extra (``pip install -e ".[torch]"``), which take
  PyPI's default build, a multi-GB CUDA one on Linux.
* The extras: ``pip install -e ".[dask]"`` and ``pip install -e ".[boost]"``, in that form.
* The tests: the README's command, ``pip install -e ".[test]" && pytest -n auto --dist
  loadfile``, which CI runs verbatim (tests/documentation/test_readme.py); a page that installs
  the test extra and runs the tests gives that command and no other.
* The set-up: ``pip install -e . && python -m aprank bench --quick``, the same on the README
  and on Getting started.

A command is a line of a ```sh (```bash, ```console) block, comments left out, or an inline
code span that starts with ``pip install`` or ``pytest``.
"""
import re
import shlex
from pathlib import Path

import pytest

from aprank_support.doc_pages import user_pages

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: the pages that tell a new user how to install and test: each gives the whole story
STORY = ["README.md", "docs/getting-started.md", "docs/torch.md"]

TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
EXTRAS = {"dask": 'pip install -e ".[dask]"', "boost": 'pip install -e ".[boost]"'}
SETUP = "pip install -e . && python -m aprank bench --quick"


def block_commands(text):
    """The lines of the page's shell blocks, comments (and a trailing comment) cut."""
    found = []
    for block in re.findall(r"^```(?:sh|bash|console|shell)[ \t]*\n(.*?)^```", text,
                            flags=re.S | re.M):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line.strip().removeprefix("$ ")).strip()
            if line and not line.startswith("#"):
                found.append(line)
    return found


def commands(text):
    """The page's commands: lines of its shell blocks and inline code spans that start with
    ``pip install`` or ``pytest``."""
    return block_commands(text) + [
        span.strip() for span in re.findall(r"(?<!`)`([^`\n]+)`(?!`)", text)
        if re.match(r"\s*(pip install|pytest)\b", span)]


def readme_test_command():
    """The README's test command: the line of its shell blocks that installs the test extra."""
    readme = commands((ROOT / "README.md").read_text())
    found = [c for c in readme if '".[test]"' in c and "pytest" in c]
    assert len(set(found)) == 1, found
    return found[0]


def pip_installs(command):
    """The argument lists of each ``pip install`` in a command (``&&``, ``;`` split it)."""
    out = []
    for part in re.split(r"&&|;|\|\|", command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        if words[:2] == ["pip", "install"] or words[:4] == ["python", "-m", "pip", "install"]:
            out.append(words[words.index("install") + 1:])
    return out


def installs_torch(args):
    return any(re.fullmatch(r"torch(?:[=<>!~].*)?", a) or "[torch" in a or
               re.search(r"\[[^\]]*\btorch\b", a) for a in args)


def problems(text, test_command):
    """What a page's commands say that the install story does not."""
    found = []
    for command in commands(text):
        for args in pip_installs(command):
            if installs_torch(args) and command != TORCH:
                found.append(f"{command!r}: PyTorch is installed by {TORCH!r}")
            for extra, wanted in EXTRAS.items():
                if any(re.search(rf"\[[^\]]*\b{extra}\b", a) for a in args) and command != wanted:
                    found.append(f"{command!r}: the {extra} extra is installed by {wanted!r}")
            if any(re.search(r"\[[^\]]*\btest\b", a) for a in args) and "pytest" in command \
                    and command != test_command:
                found.append(f"{command!r}: the tests run by {test_command!r}")
    for command in block_commands(text):
        if re.fullmatch(r"pytest", command):     # a shell block telling to run the tests so
            found.append(f"{command!r}: the tests run by {test_command!r}")
    return found


def test_the_readme_commands_are_the_story():
    readme = commands((ROOT / "README.md").read_text())
    assert readme_test_command() == 'pip install -e ".[test]" && pytest -n auto --dist loadfile'
    assert SETUP in readme and TORCH in readme


@pytest.mark.parametrize("page", STORY)
def test_each_install_page_tells_the_whole_story(page):
    """The set-up, the tests and PyTorch on every page of the story; the extras where the
    page lists them (Getting started)."""
    found = commands((ROOT / page).read_text())
    assert TORCH in found, f"{page} does not give {TORCH!r}"
    if page != "docs/torch.md":
        assert SETUP in found and readme_test_command() in found, page
    if page == "docs/getting-started.md":
        for wanted in EXTRAS.values():
            assert wanted in found, f"{page} does not give {wanted!r}"


@pytest.mark.parametrize("page", user_pages())
def test_no_page_tells_another_install_or_test_command(page):
    found = problems((ROOT / page).read_text(), readme_test_command())
    assert not found, f"{page}:\n" + "\n".join(found)


def test_the_rule_catches_other_commands():
    readme = readme_test_command()
    for bad in ('Optional: `pip install -e ".[torch]"` for the losses.',
                "Install `pip install torch` first.",
                '```sh\npip install -e ".[test]" && pytest\n```\n',
                "```sh\npytest\n```\n",
                "`pip install aprank[dask]`",
                '`pip install "torch>=2.13"`'):
        assert problems(bad, readme), bad
    for good in (f"`{TORCH}`", '`pip install -e ".[dask]"`',
                 f"```sh\n{readme}\n```\n", '`pytest -m "not slow"`',
                 '`pip install --no-deps libauc pytorch-metric-learning`'):
        assert not problems(good, readme), good
