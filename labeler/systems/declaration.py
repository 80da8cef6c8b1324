"""Reading a declaration file (a system's or a judge's): its text, and its TOML or JSON decoded, with
the file and line of a syntax error (ConfigError)."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from labeler.errors import ConfigError

_TOML_LINE = re.compile(r"at line (\d+)")


def read_declaration_text(path: Path, what: str) -> str:
    """The UTF-8 text of a declaration file; ConfigError naming `what` ("system", "judge") when unreadable."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the {what} declaration: {exc}", path=path,
                          hint="give a readable UTF-8 .toml or .json file.") from None


def decode_declaration(text: str, source: str | Path | None, fmt: str) -> Any:
    """`text` decoded as TOML (`fmt` "toml") or JSON; ConfigError with the line of a syntax error."""
    if fmt == "toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            found = _TOML_LINE.search(str(exc))
            raise ConfigError(f"not valid TOML: {exc}", path=source, line=int(found.group(1)) if found else None,
                              hint="see https://toml.io for the syntax.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc.msg}", path=source, line=exc.lineno,
                          hint="fix the JSON, or write the declaration as TOML.") from None


def file_format(path: Path) -> str:
    """"json" for a .json file, else "toml"."""
    return "json" if path.suffix.lower() == ".json" else "toml"
