"""The command lines of the repository's tools: ``python -m benchmarks``, ``python -m
benchmarks.dask_bench`` and ``python -m experiments``.

As in ``python -m aprank``: every error is one line on stderr, exit status 2 for a usage error,
1 for missing data or a failure while running, and ``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import argparse
import os
import sys

from aprank.datasets import ChecksumError, DataUnavailableError

__all__ = ["Parser", "at_least", "run"]


class Parser(argparse.ArgumentParser):
    """An ``argparse.ArgumentParser`` whose usage errors are one line, with ``--debug``.

    The line says what is wrong (an unknown option by name), then the command's usage and
    where its help is.

    Parameters
    ----------
    prog : str
        The command as typed, e.g. ``"python -m benchmarks"``.
    description : str
        The help text; line breaks are kept.
    """

    def __init__(self, prog: str, description: str):
        super().__init__(prog=prog, description=description,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
        self.add_argument("--debug", action="store_true",
                          help="show the full traceback of an error instead of one line")

    def error(self, message):
        """Exit with status 2 and one line: what is wrong, the usage and where help is."""
        usage = " ".join(self.format_usage().split())
        self.exit(2, f"{self.prog}: error: {message}; {usage} (see {self.prog} --help)\n")


def at_least(low, kind=int):
    """An argparse type: a number of ``kind`` no smaller than ``low``.

    Parameters
    ----------
    low : int or float
        The smallest value accepted (NaN is refused too).
    kind : type, default=int
        ``int`` or ``float``.

    Returns
    -------
    callable
        The parser of one command-line value; a bad one is a usage error saying why.
    """
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") from None
        if not value >= low:
            raise argparse.ArgumentTypeError(f"must be at least {low:g}, got {text}")
        return value
    return parse


def run(command, args, where: str) -> int:
    """Call ``command(args)`` with every error turned into one line on stderr.

    Parameters
    ----------
    command : callable
        Takes the parsed arguments and returns the exit status.
    args : argparse.Namespace
        Parsed by a :class:`Parser` (its ``debug`` re-raises errors instead).
    where : str
        What the error line starts with, e.g. ``"python -m experiments birds"``.

    Returns
    -------
    int
        The command's status; 1 for missing data or an exception, 130 when interrupted.
    """
    try:
        return command(args)
    except BrokenPipeError:         # stdout closed early (`| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"{where}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:        # noqa: BLE001 -- one line; --debug for the traceback
        if args.debug:
            raise
        text = " ".join(str(exc).split())
        if isinstance(exc, (DataUnavailableError, ChecksumError)):   # the data, not the code
            print(f"{where}: {text}", file=sys.stderr)
        else:
            print(f"{where}: {type(exc).__name__}: {text} (--debug shows the traceback)",
                  file=sys.stderr)
        return 1
