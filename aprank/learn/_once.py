"""The estimators' warnings about the data or the search, said once per call of the user's.

A scikit-learn search or cross-validation fits and scores a clone per fold and candidate, and
each would repeat the warning of its fit or score (ten lines for a 2 x 3 ``GridSearchCV``).
Python's default filter, once per warning text and line, cannot merge them:

* the folds differ in their numbers (``1 of 7 training queries``, then ``2 of 9``), so the
  texts differ;
* the frame a warning points at, the first outside aprank and scikit-learn, is joblib's in
  a search, not the user's line;
* scikit-learn runs every task under ``warnings.catch_warnings()`` (and every input check,
  ``check_array``, under another), and every change of the filters clears Python's record of
  what was said.

So :func:`say_once` keeps its own record per outer call, keyed by the ``joblib.Parallel`` of
the search or cross-validation nearest the user's code (found in the frames between the
user's line and the warning: the one running the task, or the search's local that its refit
runs beside), and drops a warning of a kind already said in that call. Every warning points
at the user's line; one said in a search's task speaks for all the folds (``in_search``). The
next call says it again, a new search as a direct ``fit`` (a loop of direct fits says it every
time, as scikit-learn's own warnings are said). The record only drops what the filters would
say once anyway ("default", "module", "once"): under "always" and "error" (pytest's ``warns``,
the tests' filters) every occurrence goes through, and an ignored one takes no place in it.

The folds of ``n_jobs`` > 1 run in loky worker processes, whose frames hold no trace of the
search: a worker keeps its own record for its life (once per worker and kind; loky keeps its
workers for the next search a few minutes, which then does not repeat what they said). The
threads of joblib's threading backend are as far from the search; each keeps its own record
(once per thread and kind: joblib makes the pool for the call, unless the user's ``with
Parallel(...)`` block keeps one for several).
"""
from __future__ import annotations

import os
import sys
import threading
import warnings
import weakref
from pathlib import Path

import joblib
import sklearn

__all__ = ["say_once"]

#: the folders whose frames a warning skips: this package's, scikit-learn's and joblib's
_INSIDE = tuple(os.path.join(str(folder), "") for folder in (
    Path(__file__).resolve().parents[1], Path(sklearn.__file__).resolve().parent,
    Path(joblib.__file__).resolve().parent))
#: the folders whose frames may hold the outer call's joblib.Parallel
_RUNNERS = _INSIDE[1:]
#: the functions that run one task of a joblib call (scikit-learn's wrapper, joblib's batch)
_TASKS = frozenset({"_FuncWrapper.__call__", "BatchedCalls.__call__"})
#: the function at the bottom of a loky worker's stack, under every task it runs
_LOKY_WORKER = "_process_worker"
#: the filter actions that say a warning once: where a record of ours may drop a repeat
_ONCE_ACTIONS = frozenset({"default", "module", "once"})

#: what was said in each outer call, by its joblib.Parallel (dropped with it), or in each
#: thread of a thread pool's tasks
_SAID: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: what this process said as a loky worker
_SAID_IN_WORKER: set = set()


class _Where:
    """Where a warning is said: the user's frame and its stacklevel, and the call around it."""

    __slots__ = ("frame", "level", "outer", "in_task", "in_worker")

    def __init__(self, start, level: int):
        self.outer = None
        self.in_task = self.in_worker = False
        frame = start
        while frame.f_back is not None and frame.f_code.co_filename.startswith(_INSIDE):
            code = frame.f_code
            self.in_task |= code.co_qualname in _TASKS
            if code.co_name == _LOKY_WORKER:
                # no user frame below a worker's tasks: the worker's line says where
                self.in_worker = True
                break
            if code.co_filename.startswith(_RUNNERS):
                for value in frame.f_locals.values():
                    if isinstance(value, joblib.Parallel):
                        self.outer = value              # the outermost wins
            frame, level = frame.f_back, level + 1
        self.frame, self.level = frame, level

    def action(self, text: str, category: type[Warning]) -> str:
        """The action the warning filters take on this warning said here, as ``warnings``
        matches them (message, category, module, line)."""
        module = self.frame.f_globals.get("__name__", "<string>")
        lineno = self.frame.f_lineno
        for action, message, kind, mod, line in warnings.filters:
            if ((message is None or message.match(text)) and issubclass(category, kind)
                    and (mod is None or mod.match(module)) and (line == 0 or line == lineno)):
                return action
        # what no filter matches gets the module's default action (typeshed leaves it out)
        return getattr(warnings, "defaultaction", "default")

    def record(self) -> set | None:
        """The record of what was said in this call, None outside a search's."""
        if self.in_worker:
            # a Parallel in a worker's frames is a call nested in the user's, not the user's
            return _SAID_IN_WORKER
        if self.outer is not None:
            return _SAID.setdefault(self.outer, set())
        thread = threading.current_thread()
        if self.in_task and thread is not threading.main_thread():
            # a thread pool's task: the pool's thread, made for the call, keeps the record
            return _SAID.setdefault(thread, set())
        return None


def say_once(text: str, category: type[Warning], kind: tuple, *,
             in_search: str | None = None) -> None:
    """Issue a warning once per kind and outer call, pointing at the user's line.

    Parameters
    ----------
    text : str
        The warning, as a direct call says it.
    category : type of Warning
        Its class.
    kind : tuple
        What it is about, the same for all the folds of a search (the estimator's name, say,
        but not a fold's numbers): a second warning of a kind already said in the same outer
        call is dropped.
    in_search : str, optional
        The text a task of a search or cross-validation says instead, for all its folds
        (without the numbers of the first fold).
    """
    where = _Where(sys._getframe(1), 2)
    if in_search is not None and (where.in_task or where.in_worker):
        text = in_search
    said = where.record()
    if said is not None and where.action(text, category) in _ONCE_ACTIONS:
        key = (category, *kind)
        if key in said:
            return
        said.add(key)
    warnings.warn(text, category, stacklevel=where.level)
