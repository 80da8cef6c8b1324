"""One JSON-lines reader and one atomic writer, shared by every file format the labeler reads or writes.

Reading (golden JSONL, BEIR `queries.jsonl` and qrels, the JSONL corpus):
- A source is a path, a binary file or a text file (`open_lines`), or literal text (`split_lines`).
- Lines are numbered from 1; a UTF-8 byte-order mark at the start is ignored (Windows editors
  write one); `\\r\\n` endings are accepted; only `\\n` ends a line, since JSON strings may hold
  U+2028, which `str.splitlines()` would cut at.
- A line that is not UTF-8 or is longer than `max_line_bytes` is reported as a `BadLine`, never
  raised; a binary file's over-long line is never held in memory whole.
- `json_values` skips blank lines and parses the others strictly: a duplicate key, `NaN` or
  `Infinity`, a lone surrogate escape (`"\\ud800"`, not UTF-8) and nesting deeper than Python's
  recursion limit (`[[[[...`) are each a `BadLine`, never an exception.

Writing: `write_text_atomic` writes the whole file or nothing (temp file in the same folder, then
`os.replace`); a path it cannot write raises `InputError` naming the path, with a hint.
"""
from __future__ import annotations

import codecs
import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from labeler.errors import InputError
from labeler.file_guard import HINT_LIMIT, CappedReader, open_regular, too_large

MAX_LINE_BYTES = 1 << 20  # 1 MiB: room for tens of thousands of judgments on one question
HINT_ENCODING = ("save the file as UTF-8 text, e.g. `iconv -f utf-16 -t utf-8 in.jsonl > out.jsonl` (UTF-16, which "
                 "starts with byte 0xff or 0xfe) or `-f latin1` (Latin-1); a binary file is no text to convert.")


@dataclass(frozen=True)
class BadLine:
    """Why one line could not be read: `kind` is "encoding", "too_long" or "json"."""

    reason: str
    kind: Literal["encoding", "too_long", "json"] = "json"


# A line is (line number, its text without the line ending) or (line number, why it is unreadable).
Line = tuple[int, "str | BadLine"]


def _too_long(n_bytes: int, limit: int) -> BadLine:
    return BadLine(f"line is {n_bytes:,} bytes long; the limit is {limit:,} bytes per line", "too_long")


def split_lines(text: str, *, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """The numbered lines of literal text (see the module docstring)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    for n, raw in enumerate(text.split("\n"), start=1):
        # A character is at most 4 bytes: only a long line needs encoding to measure it.
        if len(raw) * 4 > max_line_bytes:
            size = len(raw.encode("utf-8", "surrogatepass"))
            if size > max_line_bytes:
                yield n, _too_long(size, max_line_bytes)
                continue
        yield n, raw[:-1] if raw.endswith("\r") else raw


def binary_lines(f: IO[bytes], *, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """The numbered lines of a binary file, each decoded on its own; memory stays under the limit."""
    n = 0
    while True:
        chunk = f.readline(max_line_bytes + 1)
        if not chunk:
            return
        n += 1
        if len(chunk) > max_line_bytes and not chunk.endswith(b"\n"):
            size = len(chunk)
            while not chunk.endswith(b"\n"):
                chunk = f.readline(1 << 20)
                if not chunk:
                    break
                size += len(chunk)
            yield n, _too_long(size - (1 if chunk.endswith(b"\n") else 0), max_line_bytes)
            continue
        if n == 1 and chunk.startswith(codecs.BOM_UTF8):
            chunk = chunk[len(codecs.BOM_UTF8):]
        try:
            line = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield n, BadLine(f"not valid UTF-8: byte 0x{chunk[exc.start]:02x} at column {exc.start + 1}", "encoding")
            continue
        if line.endswith("\n"):
            line = line[:-1]
        yield n, line[:-1] if line.endswith("\r") else line


def path_kind(path: str | Path) -> Literal["file", "folder", "other", "missing"]:
    """What is at `path`, without raising: a name too long or holding a NUL byte is "missing"."""
    try:
        mode = os.stat(Path(path).expanduser()).st_mode
    except (OSError, ValueError):  # pathlib's is_dir() raises on ENAMETOOLONG; this must not
        return "missing"
    return "file" if stat.S_ISREG(mode) else "folder" if stat.S_ISDIR(mode) else "other"


def require_file(source: str | Path, *, error: type[InputError] = InputError, what: str = "file") -> Path:
    """`source` as a Path when it is a regular file; else `error` saying what is there instead."""
    path = Path(source).expanduser()
    kind = path_kind(path)
    if kind == "folder":
        raise error(f"expected a {what}, got a folder", path=path, hint=f"give the {what} itself.")
    if kind == "missing":
        raise error(f"no such {what}", path=path, hint="check the path.")
    if kind == "other":  # opening a named pipe would wait for a writer forever
        raise error("not a regular file (a pipe, socket or device)", path=path, hint=f"give a regular {what}.")
    return path


@contextmanager
def open_lines(source: str | Path | IO, *, max_line_bytes: int = MAX_LINE_BYTES, max_bytes: int | None = None,
               error: type[InputError] = InputError,
               hint: str = HINT_LIMIT) -> Iterator[tuple[str | None, Iterator[Line]]]:
    """(display name, numbered lines) of a path, a binary file or a text file; closes what it opened.

    A path that is missing, a folder or unreadable raises `error` (an InputError subclass). A file
    over `max_bytes` raises `error` naming it: a path's or a seekable file's size before a line is
    read, and any file's once more than that was read (nothing past the cap is held).
    """
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        shown = str(name) if isinstance(name, (str, Path)) else None
        if max_bytes is not None and _size_left(source) > max_bytes:
            raise too_large("the file", max_bytes, shown or "the file", error, hint)
        if isinstance(source.read(0), bytes):
            capped = source if max_bytes is None else CappedReader(source, max_bytes, shown or "the file", error, hint)
            yield shown, binary_lines(capped, max_line_bytes=max_line_bytes)
        else:
            text = source.read() if max_bytes is None else source.read(max_bytes + 1)
            if max_bytes is not None and len(text) > max_bytes:
                raise too_large("the file", max_bytes, shown or "the file", error, hint)
            yield shown, split_lines(text, max_line_bytes=max_line_bytes)
        return
    path = require_file(source, error=error)
    with open_regular(path, max_bytes=max_bytes, error=error, hint=hint) as f:
        lines = binary_lines(CappedReader(f, max_bytes, path, error, hint), max_line_bytes=max_line_bytes)
        yield str(path), _read_or_raise(lines, path, error)


def _size_left(f: IO) -> int:
    """Bytes from a file's position to its end (0 when it cannot seek: the reads are counted instead)."""
    try:
        if not f.seekable():
            return 0
        here = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(here)
        return end - here
    except (OSError, ValueError, AttributeError):
        return 0


def _read_or_raise(lines: Iterator[Line], path: Path, error: type[InputError]) -> Iterator[Line]:
    # A path can stat as a regular file and still fail to read (/proc/self/mem, a dying disk).
    try:
        yield from lines
    except OSError as exc:
        raise error(f"cannot read the file: {exc.strerror or exc}", path=path,
                    hint="give a readable regular file.") from None


# --------------------------------------------------------------------------- strict JSON


class _Refused(ValueError):
    pass


def _pairs_no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # the fast path builds the dict once; find the key only on error
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {key!r} in one object")
            seen.add(key)
    return out


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not valid JSON")


# One decoder for every line: json.loads with options would build a new one per call.
_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_no_duplicates, parse_constant=_refuse_constant)
# An escaped surrogate (`\ud800`) may be half a pair or alone; only lines holding one are checked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def loads_strict(raw: str) -> Any | BadLine:
    """One JSON value, or a BadLine saying why `raw` is refused (see the module docstring)."""
    try:
        value = _DECODER.decode(raw)
    except json.JSONDecodeError as exc:
        return BadLine(f"broken JSON: {exc.msg} at column {exc.colno}")
    except RecursionError:
        return BadLine("broken JSON: nested too deeply")
    except ValueError as exc:  # _Refused, or an integer of more than 4,300 digits
        return BadLine(f"broken JSON: {exc}")
    if ("\\ud" in raw or "\\uD" in raw) and _SURROGATE_ESCAPE.search(raw):  # substring test first: cheap
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return BadLine("broken JSON: a \\u escape encodes a lone surrogate, which is not UTF-8 text")
    return value


def json_values(lines: Iterable[Line]) -> Iterator[tuple[int, Any | BadLine]]:
    """(line number, parsed value or BadLine) for each non-blank line."""
    for n, raw in lines:
        if isinstance(raw, BadLine):
            yield n, raw
        elif raw.strip():
            yield n, loads_strict(raw)


def parse_json_lines(text: str, *, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, Any | BadLine]]:
    """(line number, parsed value or BadLine) for each non-blank line of literal text."""
    return json_values(split_lines(text, max_line_bytes=max_line_bytes))


def read_json_lines(source: str | Path | IO, *, max_line_bytes: int = MAX_LINE_BYTES,
                    error: type[InputError] = InputError) -> Iterator[tuple[int, Any | BadLine]]:
    """(line number, parsed value or BadLine) for each non-blank line of a path or file."""
    with open_lines(source, max_line_bytes=max_line_bytes, error=error) as (_, lines):
        yield from json_values(lines)


# --------------------------------------------------------------------------- atomic writes


def _write_error(path: Path, exc: OSError) -> InputError:
    """The InputError for an OSError met while writing `path`: what went wrong and what to do."""
    ancestor = path.parent
    while path_kind(ancestor) == "missing" and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if path_kind(ancestor) in ("file", "other"):
        return InputError(f"cannot write here: {ancestor} is a file, not a folder", path=path,
                          hint="choose an output path inside a folder.")
    if path_kind(path) == "folder":
        return InputError("cannot write the file: a folder has this name", path=path,
                          hint="give a file name, not a folder.")
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return InputError(f"cannot write the file: {exc.strerror or 'permission denied'}", path=path,
                          hint="choose a folder you can write to.")
    if exc.errno == errno.ENOSPC:
        return InputError("cannot write the file: the disk is full", path=path, hint="free some space and retry.")
    return InputError(f"cannot write the file: {exc.strerror or exc}", path=path, hint="check the path.")


def _create_temp(path: Path) -> tuple[int, str]:
    """A new temp file beside `path`, opened for writing; created with mode 0666 so the umask
    applies as to any new file (tempfile.mkstemp's 0600 would make an export owner-only)."""
    while True:
        tmp = str(path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp"))
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def write_texts_atomic(files: Mapping[str | Path, str]) -> None:
    """Write several UTF-8 files, each whole or not at all; all are staged before any is replaced."""
    staged: list[tuple[str, Path]] = []
    try:
        for raw_path, text in files.items():
            path = Path(raw_path).expanduser()
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InputError(f"the text holds a lone surrogate (U+{ord(exc.object[exc.start]):04X}), "
                                 "which UTF-8 cannot hold", path=path,
                                 hint="such text cannot come from a UTF-8 file; fix that character and write again.",
                                 ) from None
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = _create_temp(path)
                staged.append((tmp, path))
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                if path_kind(path) == "file":  # replacing a file keeps its mode
                    os.chmod(tmp, stat.S_IMODE(path.stat().st_mode))
            except OSError as exc:
                raise _write_error(path, exc) from None
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise _write_error(path, exc) from None
    finally:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `text` to `path` as UTF-8, whole or not at all (temp file in the same folder + os.replace)."""
    write_texts_atomic({path: text})


__all__ = [
    "HINT_ENCODING", "MAX_LINE_BYTES", "BadLine", "Line", "binary_lines", "json_values", "loads_strict",
    "open_lines", "parse_json_lines", "path_kind", "read_json_lines", "split_lines", "write_text_atomic",
    "write_texts_atomic",
]
