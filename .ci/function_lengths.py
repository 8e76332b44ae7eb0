"""List the package's functions longer than a limit, with file:line and length, and a total.

A development tool beside ``.ci/run`` (standard library only)::

    python .ci/function_lengths.py                 # the functions of aprank/ over 80 lines
    python .ci/function_lengths.py --limit 60 aprank/inference

A function's length runs from the line of its ``def`` (or its C++ signature) to its last line
of code; nested functions are counted on their own as well as inside the function holding them.
Three readers, one per language:

- ``.py``: Python's ``ast`` (``def`` and ``async def``).
- ``.pyx``/``.pxd``: an indentation scan, since ``ast`` cannot read Cython. A ``def``, ``cpdef``
  or ``cdef`` whose header (its lines joined until the brackets close) holds a ``(`` and ends
  in ``:`` opens a function (``cdef int x = f(a)`` does not end in ``:``, ``cdef extern ...:``
  and ``cdef class``/``struct`` are not functions); it ends before the first line of code
  indented no deeper than the header.
- ``.hpp``: a brace scan over the code with comments and literals blanked. A ``{`` outside any
  function opens one when the text since the last ``;``, ``{`` or ``}`` holds a ``(`` and is no
  ``if``/``for``/``while``/``switch``/``catch``; the function ends at the matching ``}``.
  Lambdas and local blocks inside a function belong to it.

The exit status is 0 whatever is found: the tool reports, and a test or CI lane decides.
"""
import argparse
import ast
import re
import sys
from pathlib import Path
from typing import NamedTuple

#: The default limit, in lines.
LIMIT = 80
#: The folder scanned when none is given, relative to the repository root.
PACKAGE = Path(__file__).resolve().parent.parent / "aprank"


class Function(NamedTuple):
    """One function: where it starts, its name and its length in lines."""

    path: Path
    line: int
    name: str
    length: int


def python_functions(path: Path, text: str) -> list[Function]:
    """The functions of a Python file, read by ``ast``."""
    tree = ast.parse(text, filename=str(path))
    return [Function(path, node.lineno, node.name, node.end_lineno - node.lineno + 1)
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


#: A Cython line that may open a function: its first word and the rest.
_CYTHON_DEF = re.compile(r"^(\s*)(def|cpdef|cdef)\s+(.*)$")
#: ``cdef`` forms that open something other than a function.
_CYTHON_NOT_FUNCTION = re.compile(
    r"^(extern|class|struct|union|enum|cppclass|packed|fused|readonly|public\s+(class|struct))\b")
#: The name before the argument list of a function header.
_NAME_BEFORE_PAREN = re.compile(r"([A-Za-z_]\w*)\s*\($")


def _code_lines(text: str) -> list[str]:
    """The file's lines with comments and the insides of triple-quoted strings blanked.

    Line numbers are kept; a blanked line reads as blank, so docstrings whose lines are indented
    less than their function cannot end it early.
    """
    lines = []
    quote = None   # the triple quote of an open string, if any
    for raw in text.splitlines():
        out = []
        opened_here = False   # whether the open string began on this line
        i = 0
        while i < len(raw):
            if quote is not None:
                end = raw.find(quote, i)
                if end < 0:
                    i = len(raw)
                else:
                    # A string closed on the line it opened keeps a place in the code; the end
                    # of one from an earlier line reads as blank, whatever its indentation.
                    if opened_here:
                        out.append('""')
                    i = end + 3
                    quote = None
                continue
            ch = raw[i]
            if raw.startswith('"""', i) or raw.startswith("'''", i):
                quote = raw[i:i + 3]
                opened_here = True
                i += 3
            elif ch in "\"'":
                end = i + 1
                while end < len(raw) and raw[end] != ch:
                    end += 2 if raw[end] == "\\" else 1
                out.append('""')
                i = end + 1
            elif ch == "#":
                break
            else:
                out.append(ch)
                i += 1
        lines.append("".join(out).rstrip())
    return lines


def _cython_header(lines: list[str], start: int) -> tuple[str, int]:
    """The header that starts at ``start``, joined until its brackets close, and its last line."""
    parts = []
    depth = 0
    end = start
    while end < len(lines):
        line = lines[end]
        parts.append(line.strip())
        depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
        if depth <= 0 and not line.endswith("\\"):
            break
        end += 1
    return " ".join(parts), end


def cython_functions(path: Path, text: str) -> list[Function]:
    """The functions of a Cython file, found by an indentation scan."""
    lines = _code_lines(text)
    found = []
    for start, line in enumerate(lines):
        match = _CYTHON_DEF.match(line)
        if match is None or _CYTHON_NOT_FUNCTION.match(match.group(3)):
            continue
        header, header_end = _cython_header(lines, start)
        paren = header.find("(")
        if paren < 0 or not header.endswith(":"):
            continue
        name = _NAME_BEFORE_PAREN.search(header[:paren + 1])
        indent = len(match.group(1))
        last = header_end
        for j in range(header_end + 1, len(lines)):
            body = lines[j]
            if not body.strip():
                continue
            if len(body) - len(body.lstrip()) <= indent:
                break
            last = j
        found.append(Function(path, start + 1, name.group(1) if name else "?", last - start + 1))
    return found


#: C++ words that open a block that is not a function.
_CPP_NOT_FUNCTION = re.compile(r"\b(if|for|while|switch|catch|do|else)\b")
#: A C++ literal or comment: blanked before braces are counted.
_CPP_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', re.S)


def cpp_functions(path: Path, text: str) -> list[Function]:
    """The functions of a C++ header, found by a brace scan."""
    # Blank comments and literals but keep their newlines, so line numbers stay true.
    code = _CPP_NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    code = "\n".join("" if line.lstrip().startswith("#") else line for line in code.split("\n"))
    found = []
    depth = 0
    function_depth = None   # the brace depth a function's body opened at, while inside one
    header_start = 0        # the offset where the text before the next brace begins
    opened = None           # (line, name) of the function being read
    line = 1
    for i, ch in enumerate(code):
        if ch == "\n":
            line += 1
        elif ch == ";" and function_depth is None:
            header_start = i + 1
        elif ch == "{":
            header = code[header_start:i]
            if (function_depth is None and "(" in header
                    and not _CPP_NOT_FUNCTION.search(header.split("(")[0])):
                name = _NAME_BEFORE_PAREN.search(header[:header.index("(") + 1])
                stripped = len(header) - len(header.lstrip())
                first = line - header[stripped:].count("\n")
                opened = (first, name.group(1) if name else "?")
                function_depth = depth
            depth += 1
            if function_depth is None:
                header_start = i + 1
        elif ch == "}":
            depth -= 1
            if function_depth is not None and depth == function_depth:
                found.append(Function(path, opened[0], opened[1], line - opened[0] + 1))
                function_depth = None
            if function_depth is None:
                header_start = i + 1
    return found


#: The reader of each file suffix.
READERS = {
    ".py": python_functions,
    ".pyx": cython_functions,
    ".pxd": cython_functions,
    ".hpp": cpp_functions,
}


def functions(root: Path) -> list[Function]:
    """Every function of the files under ``root`` (or of ``root`` itself) that a reader knows."""
    paths = [root] if root.is_file() else sorted(root.rglob("*"))
    found = []
    for path in paths:
        reader = READERS.get(path.suffix)
        if reader is not None and path.is_file():
            found.extend(reader(path, path.read_text(encoding="utf-8")))
    return found


def main(argv: list[str] | None = None) -> int:
    """Print the functions over the limit, longest first, then their count."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[PACKAGE],
                        help="files or folders to scan (default: the package)")
    parser.add_argument("--limit", type=int, default=LIMIT,
                        help=f"report functions longer than this many lines (default {LIMIT})")
    args = parser.parse_args(argv)
    long = [f for root in args.paths for f in functions(root) if f.length > args.limit]
    long.sort(key=lambda f: (-f.length, str(f.path), f.line))
    cwd = Path.cwd()
    for f in long:
        where = f.path.resolve()
        shown = where.relative_to(cwd) if where.is_relative_to(cwd) else where
        print(f"{shown}:{f.line}: {f.name} {f.length} lines")
    print(f"{len(long)} functions over {args.limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
