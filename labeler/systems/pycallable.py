"""`CallableSystem`: a Python function `"package.module:function"` with signature
`(question: str, k: int) -> iterable of (doc_id, score)` as a System.

Importing it happens once, at construction: an import error, a missing attribute or a signature
that cannot take (question, k) is a ConfigError. Each call's problems — the function raises (or
calls sys.exit, which would otherwise end the whole evaluation without a word), or returns
something other than (doc_id, score) pairs — fail that question only (`SearchFailed`).
KeyboardInterrupt is not caught: Ctrl-C still stops the run. Items may also be `Hit`s or
mappings with "doc_id" and "score".
"""
from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

from labeler.errors import ConfigError
from labeler.systems.base import Hit, SearchFailed, System, check_doc_id, check_k, check_score, doc_hits

TARGET = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_HINT = 'write "package.module:function", e.g. "my_search:search".'
_EXIT_HINT = "return the hits, or raise an exception to fail one question; sys.exit ends the whole program."


def exit_call(exc: SystemExit) -> str:
    """How the user's code ended the program, as written: "sys.exit(3)", "sys.exit()"."""
    return f"sys.exit({'' if exc.code is None else repr(exc.code)})"


def import_target(target: str, path: str | Path | None = None, *, what: str = "python system",
                  call: tuple = ("question", 10), called: str = "question, k",
                  shape: str = "def search(question: str, k: int) -> list of (doc_id, score)") -> Callable:
    """The function named by "package.module:function" (`path`, if given, is put first on sys.path)
    that can be called with `call`'s arguments (`what` and `shape` name it and its signature in errors)."""
    if not isinstance(target, str) or not TARGET.fullmatch(target):
        raise ConfigError(f"{what} {target!r} is not of the form package.module:function", hint=_HINT)
    module_name, _, attr = target.partition(":")
    if path is not None:
        folder = str(Path(path).resolve())
        if folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"{what} {target!r}: cannot import {module_name!r} ({exc})",
                          hint="install its package, or give the folder holding it as path.") from None
    except SystemExit as exc:  # a script's sys.exit at import would end labeler silently
        raise ConfigError(f"{what} {target!r}: importing {module_name!r} called {exit_call(exc)}",
                          hint="move the script's top-level code under if __name__ == \"__main__\":.") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed while importing: say how
        raise ConfigError(f"{what} {target!r}: importing {module_name!r} raised "
                          f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
                          hint="fix the module so that `python -c 'import " + module_name + "'` works.") from None
    fn: Any = module
    for part in attr.split("."):
        if not hasattr(fn, part):
            raise ConfigError(f"{what} {target!r}: {module_name!r} has no attribute {attr!r}",
                              hint="check the function's name after the colon.")
        fn = getattr(fn, part)
    if not callable(fn):
        raise ConfigError(f"{what} {target!r} is a {type(fn).__name__}, not a function", hint=_HINT)
    try:
        inspect.signature(fn).bind(*call)
    except TypeError:
        raise ConfigError(f"{what} {target!r} cannot be called as {attr}({called})",
                          hint=f"define it as {shape}.") from None
    except ValueError:
        pass  # builtins without a signature: trust them
    return fn


def _pair(item: Any, i: int) -> tuple[str, float]:
    if isinstance(item, Hit):
        return item.doc_id, item.score
    if isinstance(item, Mapping) and "doc_id" in item and "score" in item:
        doc_id, score = item["doc_id"], item["score"]
    elif isinstance(item, (tuple, list)) and len(item) == 2:
        doc_id, score = item
    else:
        shown = repr(item)
        raise SearchFailed(f"item {i} is {shown[:60]}, not a (doc_id, score) pair", kind="bad_return",
                           hint="return a list of (doc_id, score) tuples.")
    try:
        return check_doc_id(doc_id, f"item {i}"), check_score(score, f"item {i}")
    except SearchFailed as exc:
        raise SearchFailed(exc.message, kind="bad_return", hint="return a list of (doc_id, score) tuples.") from None


class CallableSystem(System):
    """A Python function as a System (imported once, at construction)."""

    kind = "python"

    def __init__(self, target: str, *, name: str | None = None, path: str | Path | None = None) -> None:
        self.target = target
        self.path = str(path) if path is not None else None
        self.function = import_target(target, path)
        self.name = name or target

    def describe(self) -> dict[str, Any]:
        """Kind, name, target (and the import folder, if one was given)."""
        out = {"kind": self.kind, "name": self.name, "target": self.target}
        if self.path is not None:
            out["path"] = self.path
        return out

    def search(self, question: str, k: int) -> list[Hit]:
        """Call the function; raising or a wrong return shape fails this question (SearchFailed)."""
        k = check_k(k)
        try:
            result = self.function(question, k)
        except SystemExit as exc:  # would end the evaluation with no output: this question's error instead
            raise SearchFailed(f"{self.target} called {exit_call(exc)}", kind="exception", hint=_EXIT_HINT) from None
        except Exception as exc:  # noqa: BLE001 - the user's code: its failure is this question's error
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise SearchFailed(f"{self.target} raised {type(exc).__name__}: {first}", kind="exception",
                               hint="run the function on this question by hand to see the traceback.") from None
        if isinstance(result, (str, bytes, Mapping)) or not hasattr(result, "__iter__"):
            raise SearchFailed(f"{self.target} returned {type(result).__name__}, not an iterable of "
                               "(doc_id, score) pairs", kind="bad_return", hint="return a list of (doc_id, score).")
        try:
            pairs = [_pair(item, i) for i, item in enumerate(result)]
        except SearchFailed:
            raise
        except SystemExit as exc:
            raise SearchFailed(f"{self.target} called {exit_call(exc)} while yielding results", kind="exception",
                               hint=_EXIT_HINT) from None
        except Exception as exc:  # noqa: BLE001 - a generator of the user's raised while we read it
            raise SearchFailed(f"{self.target} raised {type(exc).__name__} while yielding results: {exc}",
                               kind="exception") from None
        return list(doc_hits(pairs, k))
