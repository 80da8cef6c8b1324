"""Reading a file or walking a folder someone else named, without hanging or reading without end.

A web page lets people on a shared server name paths, so every read here is bounded:
- `open_regular` opens with O_NONBLOCK and checks what was opened (fstat), so a FIFO or a device
  swapped in after an earlier stat can neither hang the open nor be read; the size limit is
  checked before a byte is read.
- `CappedReader` stops a file whose size said little but whose reads go on (a file growing while
  it is read, or a /proc-like file that stats as 0 bytes).
- `walk_files` lists a folder's files with a bound on the entries it looks at and the files it
  keeps; it never descends into a linked folder (as `Path.rglob` does not), and with `within`
  it skips a linked file whose target lies outside that folder.
Limits are optional: `None` means "no limit", so a local CLI user reads as before.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Collection
from pathlib import Path
from typing import IO

from labeler.errors import InputError

HINT_LIMIT = "give a smaller corpus, or ask the administrator for a higher limit."


def too_large(what: str, limit: int, path: str | Path, error: type[InputError] = InputError,
              hint: str = HINT_LIMIT) -> InputError:
    """The error for a file or folder past a byte limit."""
    return error(f"{what} is larger than the limit of {limit:,} bytes", path=path, hint=hint)


def is_within(path: Path, folder: Path) -> bool:
    """`path`, once links are followed, is the (resolved) `folder` or lies under it; a looping link is not."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError, ValueError):  # Python 3.11 raises RuntimeError on a link loop
        return False
    return real == folder or real.is_relative_to(folder)


def open_regular(path: str | Path, *, max_bytes: int | None = None,
                 error: type[InputError] = InputError, hint: str = HINT_LIMIT) -> IO[bytes]:
    """`path` opened for binary reading when it is a regular file within `max_bytes`; else `error`."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "bad file name"
        raise error(f"cannot read the file: {reason}", path=path, hint="check the path and its permissions.") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error("not a regular file (a pipe, socket or device)", path=path, hint="give a regular file.")
        if max_bytes is not None and info.st_size > max_bytes:
            raise too_large("the file", max_bytes, path, error, hint)
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class CappedReader:
    """A binary file that raises `error` once more than `limit` bytes have been read from it."""

    def __init__(self, f: IO[bytes], limit: int | None, path: str | Path,
                 error: type[InputError] = InputError, hint: str = HINT_LIMIT) -> None:
        self._f, self._limit, self._path, self._error, self._hint = f, limit, path, error, hint
        self._seen = 0
        self.name = str(path)

    def _count(self, data: bytes) -> bytes:
        self._seen += len(data)
        if self._limit is not None and self._seen > self._limit:
            raise too_large("the file", self._limit, self._path, self._error, self._hint)
        return data

    def read(self, n: int = -1) -> bytes:
        """Like `IO.read`, counted. Reading to the end asks first for the size the file states (a
        buffer of the limit's size would be allocated up front), then goes on in 1 MiB pieces."""
        if n is not None and n >= 0:
            return self._count(self._f.read(n))
        first = self._stated_size() + 1
        if self._limit is not None:
            first = min(first, self._limit - self._seen + 1)
        parts = [self._count(self._f.read(first))]
        while parts[-1] and (chunk := self._count(self._f.read(1 << 20))):
            parts.append(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _stated_size(self) -> int:
        try:
            return max(0, os.fstat(self._f.fileno()).st_size - self._f.tell())
        except (OSError, AttributeError, ValueError):
            return 0

    def readline(self, n: int = -1) -> bytes:
        """Like `IO.readline`, counted."""
        return self._count(self._f.readline(n))


def read_capped(path: str | Path, *, max_bytes: int | None = None, error: type[InputError] = InputError) -> bytes:
    """The bytes of a regular file, refusing one larger than `max_bytes` (checked before reading)."""
    with open_regular(path, max_bytes=max_bytes, error=error) as f:
        try:
            return CappedReader(f, max_bytes, path, error).read()
        except OSError as exc:  # a path can open and still fail to read (a dying disk)
            raise error(f"cannot read the file: {exc.strerror or exc}", path=path,
                        hint="give a readable regular file.") from None


def walk_files(folder: Path, suffixes: Collection[str], *, max_entries: int | None = None,
               max_files: int | None = None, within: Path | None = None,
               error: type[InputError] = InputError) -> list[Path]:
    """Regular files under `folder` whose suffix (lower-cased) is in `suffixes`, sorted; hidden
    files and folders (a name starting with ".") are skipped, as are pipes, sockets and devices.

    Raises `error` once more than `max_entries` directory entries were looked at or more than
    `max_files` files were found, so `/` or a huge tree fails fast instead of being walked.
    """
    found: list[Path] = []
    seen = 0
    stack = [folder]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:  # an unreadable subfolder is skipped, as Path.rglob does
            continue
        with entries:
            for entry in entries:
                seen += 1
                if max_entries is not None and seen > max_entries:
                    raise error(f"the folder holds more than {max_entries:,} files and folders", path=folder,
                                hint="point at a smaller folder or at a JSONL file; " + HINT_LIMIT)
                if entry.name.startswith(".") or not _keep(entry, suffixes, stack, within):
                    continue
                found.append(Path(entry.path))
                if max_files is not None and len(found) > max_files:
                    raise error(f"the folder holds more than {max_files:,} documents", path=folder, hint=HINT_LIMIT)
    return sorted(found)


def _keep(entry: os.DirEntry, suffixes: Collection[str], stack: list[Path], within: Path | None) -> bool:
    """Whether a walked entry is a file to keep; a real subfolder is pushed on `stack` instead."""
    try:
        if entry.is_dir(follow_symlinks=False):
            stack.append(Path(entry.path))
            return False
        if Path(entry.name).suffix.lower() not in suffixes:
            return False
        if entry.is_symlink():
            if within is not None and not is_within(Path(entry.path), within):
                return False
            return entry.is_file()
        return entry.is_file(follow_symlinks=False)
    except (OSError, RuntimeError):  # a broken or looping link is no file
        return False
