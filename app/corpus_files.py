"""Opening a corpus a browser user names: a path under the corpus roots, or an uploaded file.

On a shared server the person typing a path is not the person who owns the machine, so:
- a typed path must resolve (links followed) inside one of the corpus roots, and only then is it
  looked at; a path that is missing and one that lies outside the roots get the same message, so
  the page cannot be used to learn which server files exist;
- only regular files and folders are read, a file's size is checked before its first byte, a
  folder walk stops after a bounded number of entries, and a corpus stops at a document limit;
- an error from a server file never quotes its content (a CSV header, a JSON line): it keeps the
  path relative to its root and the line number, and says what a valid file looks like;
- an uploaded zip is extracted member by member in 1 MiB chunks, counting the bytes actually
  written (never trusting the sizes its headers claim), so a zip bomb is refused after a few MiB.
"""
from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from app.workspace import normalize_corpus_path
from labeler.corpus import TEXT_SUFFIXES, Corpus, load_corpus
from labeler.errors import CorpusError
from labeler.file_guard import HINT_LIMIT, too_large
from labeler.paths import SAMPLE_CORPUS, labeler_home

ROOTS_ENV = "LABELER_CORPUS_ROOTS"
UPLOAD_SUFFIXES = (".jsonl", ".json", ".ndjson", ".csv", ".zip")
SERVER_SUFFIXES = (".jsonl", ".json", ".ndjson", ".csv", ".txt", ".md")
CHUNK = 1 << 20
# A member that inflates to less than this cannot hurt whatever its ratio (the total cap bounds
# many of them), and a short repetitive text file may legitimately compress past the ratio.
RATIO_FLOOR = 1 << 20
NOT_FOUND = "no corpus at that path under the corpus roots"
LIMIT_ENV = {  # CorpusLimits field -> the variable that sets it
    "max_file_bytes": "LABELER_MAX_CORPUS_BYTES", "max_documents": "LABELER_MAX_DOCUMENTS",
    "max_zip_bytes": "LABELER_MAX_ZIP_BYTES", "max_zip_members": "LABELER_MAX_ZIP_MEMBERS",
    "max_zip_ratio": "LABELER_MAX_ZIP_RATIO", "max_walk_entries": "LABELER_MAX_WALK_ENTRIES",
}


@dataclass(frozen=True)
class CorpusLimits:
    """How much one corpus may make the server read, walk, hold or unpack."""

    max_file_bytes: int = 1 << 30  # one file (or a text folder's files together), and an upload
    max_documents: int = 1_000_000
    max_zip_bytes: int = 1 << 30  # an upload's .txt/.md members, uncompressed, together
    max_zip_members: int = 100_000
    max_zip_ratio: int = 200  # uncompressed / compressed size of one member
    max_walk_entries: int = 200_000  # files and folders looked at in one folder walk

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CorpusLimits:
        """The defaults, each overridden by its `LABELER_MAX_*` variable (a positive integer)."""
        env = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for f in fields(cls):
            raw = env.get(LIMIT_ENV[f.name], "").strip()
            if not raw:
                continue
            try:
                value = int(raw)
            except ValueError:
                value = 0
            if value <= 0:
                raise CorpusError(f"{LIMIT_ENV[f.name]} must be a positive whole number, got {raw[:40]!r}",
                                  hint=f"set it to e.g. {getattr(cls, f.name)} or unset it for that default.")
            values[f.name] = value
        return cls(**values)

    def load_kwargs(self) -> dict[str, Any]:
        """The keyword limits of `labeler.corpus.load_corpus`."""
        return {"max_bytes": self.max_file_bytes, "max_documents": self.max_documents,
                "max_entries": self.max_walk_entries}


# --------------------------------------------------------------------------- paths on the server


def corpus_roots() -> tuple[Path, ...]:
    """The folders a typed path may lead into, resolved: `$LABELER_CORPUS_ROOTS` (separated by
    os.pathsep), else `<data dir>/corpora` (where uploads are kept) and the bundled sample corpus."""
    parts = [p.strip() for p in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if p.strip()]
    roots = [Path(p).expanduser() for p in parts] if parts else [labeler_home() / "corpora", SAMPLE_CORPUS]
    return _resolve_roots(roots)


def _resolve_roots(roots: Iterable[str | Path]) -> tuple[Path, ...]:
    try:
        resolved = tuple(dict.fromkeys(Path(r).resolve() for r in roots))
    except (OSError, RuntimeError, ValueError):
        raise CorpusError(f"{ROOTS_ENV} names a folder that cannot be resolved",
                          hint="give existing folders separated by os.pathsep.") from None
    if not resolved:
        raise CorpusError("no corpus roots are configured", hint=f"set {ROOTS_ENV}.")
    return resolved


def _not_found(roots: tuple[Path, ...]) -> CorpusError:
    # The same error, word for word, for a missing path and for one outside the roots.
    shown = ", ".join(str(r) for r in roots)
    return CorpusError(NOT_FOUND, hint=f"give a file or folder inside {shown} (a relative path starts at "
                                       f"{roots[0]}); the administrator sets the roots with {ROOTS_ENV}.")


def _shown(path: Path, root: Path) -> str:
    """`path` as `<root's name>/<relative path>`: where it is, without the server's layout."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return root.name
    return root.name if rel == Path(".") else f"{root.name}/{rel.as_posix()}"


def _locate(text: str, roots: tuple[Path, ...], limits: CorpusLimits) -> tuple[Path, Path]:
    """(resolved path, the root holding it) of a typed path; see `resolve_server_path`."""
    raw = text.strip()
    if not raw:
        raise _not_found(roots)
    typed = Path(raw)  # no `~` expansion: that would name the server account's home
    try:
        real = (typed if typed.is_absolute() else roots[0] / typed).resolve()
    except (OSError, RuntimeError, ValueError):  # a NUL byte, a link loop, a name too long
        raise _not_found(roots) from None
    root = next((r for r in roots if real == r or real.is_relative_to(r)), None)
    if root is None:
        raise _not_found(roots)
    try:
        info = os.stat(real)
    except (OSError, ValueError):
        raise _not_found(roots) from None
    mode, size = info.st_mode, info.st_size
    if stat.S_ISDIR(mode):
        return real, root
    shown = _shown(real, root)
    if not stat.S_ISREG(mode):
        raise CorpusError("not a regular file or folder (a pipe, socket or device)", path=shown,
                          hint="give a corpus file or folder.")
    if real.suffix.lower() not in SERVER_SUFFIXES:
        raise CorpusError(f"unknown corpus file type {real.suffix.lower() or '(none)'}", path=shown,
                          hint="use .jsonl, .csv, .txt/.md, a folder of .txt/.md files, or a BEIR folder.")
    if size > limits.max_file_bytes:
        raise too_large("the file", limits.max_file_bytes, shown, CorpusError)
    return real, root


def resolve_server_path(text: str, roots: Iterable[str | Path] | None = None,
                        limits: CorpusLimits | None = None) -> Path:
    """The resolved corpus file or folder a typed path names, refused unless it lies inside a root.

    A relative path starts at the first root; links are followed before the containment check; the
    target is looked at (stat, never opened) only once it is known to be inside: a folder, or a
    regular file with a corpus suffix within the size limit. Missing and outside give one message.
    """
    limits = limits or CorpusLimits.from_env()
    return _locate(text, _resolve_roots(roots) if roots is not None else corpus_roots(), limits)[0]


def open_server_corpus(text: str, limits: CorpusLimits | None = None,
                       roots: Iterable[str | Path] | None = None) -> tuple[str, Corpus]:
    """(normalized path, corpus) for a path typed in the browser, loaded within `limits`.

    Errors name the file relative to its root and the line, never the file's content.
    """
    limits = limits or CorpusLimits.from_env()
    real, root = _locate(text, _resolve_roots(roots) if roots is not None else corpus_roots(), limits)
    try:
        corpus = load_corpus(real, **limits.load_kwargs(), within=root)
    except CorpusError as exc:
        raise _without_content(exc, real, root) from None
    return normalize_corpus_path(real), corpus


def load_corpus_within_limits(path: str | Path, limits: CorpusLimits | None = None) -> Corpus:
    """Load a corpus the server was configured with (no roots), still within `limits`."""
    return load_corpus(path, **(limits or CorpusLimits.from_env()).load_kwargs())


_LINE_HINTS = {
    ".csv": "the first row names the columns (id, title, text, ...); every row needs a unique id and non-empty "
            "text, the file is UTF-8, and a field holding commas or line breaks is in double quotes.",
    ".txt": "a document file must hold non-empty UTF-8 text.",
    ".md": "a document file must hold non-empty UTF-8 text.",
}
_JSONL_HINT = ('each line must be one UTF-8 JSON object with a unique "doc_id" (or "_id"/"id") and a '
               'non-empty "text" string.')


def _without_content(exc: CorpusError, real: Path, root: Path) -> CorpusError:
    """`exc` told without the file's content: an error on a line (which may quote the line, the
    CSV header or a document id) becomes a generic one; a whole-file error carries none."""
    where = Path(exc.path) if exc.path else real
    shown = _shown(where, root)
    if exc.line is None:
        return CorpusError(exc.message, path=shown, hint=exc.hint)
    hint = _LINE_HINTS.get(where.suffix.lower(), _JSONL_HINT)
    return CorpusError("not a valid corpus file at this line (its content is not shown here)", path=shown,
                       line=exc.line, hint=hint + " Open the file at this line to see what is wrong.")


# --------------------------------------------------------------------------- uploads


def _upload_name(name: str) -> str:
    """The uploaded file's own name, made safe to use as one: no folders, control characters or
    leading dots, at most 100 characters before the suffix."""
    base = re.sub(r"[\x00-\x1f\x7f]", "_", name.replace("\\", "/").rsplit("/", 1)[-1]).lstrip(".")
    stem, suffix = os.path.splitext(base)
    return (stem[:100] + suffix[:16]) or "corpus"


def save_uploaded_corpus(name: str, data: bytes, *, home: Path | None = None,
                         limits: CorpusLimits | None = None) -> str:
    """Validate an uploaded corpus (JSONL, CSV, or a zip of .txt/.md files) and keep it.

    The file is checked in a temporary folder first; only a corpus that loads is published under
    `<data dir>/corpora/<stem>-<digest>` with one atomic rename, so a bad upload leaves nothing
    behind and an identical upload (same digest, even at the same moment) reuses the kept folder.
    Returns the kept path.
    """
    limits = limits or CorpusLimits.from_env()
    safe = _upload_name(name)
    suffix = Path(safe).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise CorpusError(f"unknown corpus file type {suffix or '(none)'}", path=safe,
                          hint="upload a .jsonl or .csv file, or a .zip of .txt/.md files.")
    if len(data) > limits.max_file_bytes:
        raise too_large("the upload", limits.max_file_bytes, safe, CorpusError)
    digest = hashlib.sha256(data).hexdigest()[:16]
    root = (home or labeler_home()) / "corpora"
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{Path(safe).stem}-{digest}"
    with tempfile.TemporaryDirectory(dir=root, prefix=".upload-", ignore_cleanup_errors=True) as tmp:
        work = Path(tmp) / "corpus"
        work.mkdir()
        if suffix == ".zip":
            extract_text_members(data, work, shown=safe, limits=limits)
            load_path = work
        else:
            load_path = work / safe
            load_path.write_bytes(data)
        try:
            load_corpus(load_path, **limits.load_kwargs())
        except CorpusError as exc:  # name the uploaded file, not the temporary copy
            raise CorpusError(exc.message, path=_upload_where(exc.path, work, safe), line=exc.line,
                              hint=exc.hint) from None
        _publish(work, final)
    return normalize_corpus_path(final if suffix == ".zip" else final / safe)


def _upload_where(path: str | None, work: Path, safe: str) -> str:
    """The upload's name, and inside a zip the member's path: `notes.zip/a/b.md`."""
    try:
        rel = Path(path).relative_to(work) if path else Path(".")
    except ValueError:
        return safe
    return safe if rel in (Path("."), Path(safe)) else f"{safe}/{rel.as_posix()}"


def _publish(work: Path, final: Path) -> None:
    """Move the checked folder into place atomically; an identical upload kept first is reused.

    `os.rename` of a folder onto an existing non-empty folder fails instead of nesting one in the
    other (as `shutil.move` would), so two identical uploads at once leave one folder.
    """
    if final.is_dir():
        return
    try:
        os.rename(work, final)
    except OSError as exc:
        if not final.is_dir():
            raise CorpusError(f"cannot keep the upload: {exc.strerror or exc}", path=final.name,
                              hint="check that the data directory is writable.") from None


# --------------------------------------------------------------------------- zips


_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record
_EOCD64_LOCATOR, _EOCD64 = 20, 56
_CENTRAL_HEADER = 46


def count_zip_members(data: bytes, most: int) -> int:
    """Members in a zip's central directory, counted up to `most + 1` without building ZipInfo
    objects (zipfile builds one per member before anything can be checked); 0 if none is found."""
    start = len(data) - _EOCD.size
    if start < 0:
        return 0
    if data[start:start + 4] != b"PK\x05\x06" or data[-2:] != b"\0\0":
        start = data.rfind(b"PK\x05\x06", max(0, len(data) - (1 << 16) - _EOCD.size))
        if start < 0 or start + _EOCD.size > len(data):
            return 0
    size_cd, end = _EOCD.unpack_from(data, start)[5], start
    locator = start - _EOCD64_LOCATOR
    # As zipfile does: the zip64 record counts only when both its locator and its own signature are there.
    if (locator >= _EOCD64 and data[locator:locator + 4] == b"PK\x06\x07"
            and data[locator - _EOCD64:locator - _EOCD64 + 4] == b"PK\x06\x06"):
        end = locator - _EOCD64
        size_cd = struct.unpack_from("<Q", data, end + 40)[0]
    pos, count = end - size_cd, 0
    if pos < 0:
        return 0
    while pos + _CENTRAL_HEADER <= end and count <= most:
        if data[pos:pos + 4] != b"PK\x01\x02":
            break
        name_len, extra_len, comment_len = struct.unpack_from("<3H", data, pos + 28)
        pos += _CENTRAL_HEADER + name_len + extra_len + comment_len
        count += 1
    return count


def _member_parts(name: str, shown: str) -> tuple[str, ...]:
    """A member's path parts; an absolute name or one climbing out with `..` is refused."""
    posix = name.replace("\\", "/")
    parts = tuple(p for p in posix.split("/") if p not in ("", "."))
    if posix.startswith("/") or re.match(r"^[A-Za-z]:", posix) or ".." in parts:
        raise CorpusError(f"zip member {name[:200]!r} points outside the archive", path=shown,
                          hint="re-create the zip with relative paths.")
    return parts


def _is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def _compressed_bounds(infos: list[zipfile.ZipInfo], archive_size: int) -> dict[int, int]:
    """Per member (by id), the most compressed bytes it can really have: its stated size, but no
    more than the distance to the next member's header. A member claiming a huge compressed size
    (to pass the ratio check) or overlapping another (to reuse one compressed stream) is caught."""
    offsets = sorted({i.header_offset for i in infos} | {archive_size})
    following = dict(zip(offsets, offsets[1:]))
    return {id(i): max(1, min(i.compress_size, following.get(i.header_offset, archive_size) - i.header_offset))
            for i in infos}


def _text_members(infos: list[zipfile.ZipInfo], shown: str, limits: CorpusLimits,
                  archive_size: int) -> list[tuple[zipfile.ZipInfo, tuple[str, ...], int]]:
    """The members to extract, with their compressed-size bound: visible .txt/.md files. Everything
    else is skipped unread; the declared sizes are checked here, so an honest bomb is refused
    before any inflating."""
    chosen, declared = [], 0
    bounds = _compressed_bounds(infos, archive_size)
    for info in infos:
        parts = _member_parts(info.filename, shown)
        if (info.is_dir() or _is_link(info) or not parts or any(p.startswith(".") for p in parts)
                or Path(parts[-1]).suffix.lower() not in TEXT_SUFFIXES):
            continue
        where = f"{shown}/{'/'.join(parts)}"
        if info.flag_bits & 0x1:
            raise CorpusError("the zip member is encrypted", path=where, hint="upload a zip without a password.")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise CorpusError("the zip member uses a compression other than deflate", path=where,
                              hint="re-create the zip with ordinary (deflate) compression.")
        declared += info.file_size
        if declared > limits.max_zip_bytes:
            raise too_large("the total size of the zip's .txt/.md files", limits.max_zip_bytes, shown, CorpusError)
        _check_ratio(info.file_size, bounds[id(info)], where, limits)
        chosen.append((info, parts, bounds[id(info)]))
    return chosen


def _check_ratio(size: int, compressed: int, where: str, limits: CorpusLimits) -> None:
    if size > RATIO_FLOOR and size > limits.max_zip_ratio * compressed:
        raise CorpusError(f"the zip member inflates more than {limits.max_zip_ratio}-fold (a zip bomb?)",
                          path=where, hint="upload the files themselves, or a zip of ordinary text files.")


def _extract_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, compressed: int, target: Path, where: str,
                    limits: CorpusLimits, total: int) -> int:
    """Inflate one member to `target` in chunks, counting real bytes; the new running total."""
    written = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with zf.open(info) as src, open(target, "xb") as dst:
        while chunk := src.read(CHUNK):
            written += len(chunk)
            total += len(chunk)
            if total > limits.max_zip_bytes:
                raise too_large("the total size of the zip's .txt/.md files", limits.max_zip_bytes, where, CorpusError)
            _check_ratio(written, compressed, where, limits)
            dst.write(chunk)
    return total


def extract_text_members(data: bytes, work: Path, *, shown: str, limits: CorpusLimits) -> int:
    """Extract the .txt/.md members of zip `data` into the empty folder `work`, within `limits`;
    the number extracted. Other members are skipped without being inflated."""
    if count_zip_members(data, limits.max_zip_members) > limits.max_zip_members:
        raise CorpusError(f"the zip holds more than {limits.max_zip_members:,} members", path=shown,
                          hint=HINT_LIMIT)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if len(infos) > limits.max_zip_members:
                raise CorpusError(f"the zip holds more than {limits.max_zip_members:,} members", path=shown,
                                  hint=HINT_LIMIT)
            members, total = _text_members(infos, shown, limits, len(data)), 0
            for info, parts, compressed in members:
                where = f"{shown}/{'/'.join(parts)}"
                try:
                    total = _extract_member(zf, info, compressed, work.joinpath(*parts), where, limits, total)
                except FileExistsError:
                    raise CorpusError("the zip holds this path twice (as two files, or a file and a folder)",
                                      path=where, hint="re-create the zip with each file once.") from None
                except OSError as exc:
                    raise CorpusError(f"cannot extract the zip member: {exc.strerror or exc}", path=where,
                                      hint="re-create the zip with ordinary file names.") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError,
            ValueError, struct.error):
        raise CorpusError("not a valid zip archive", path=shown,
                          hint="upload a .zip of .txt/.md files, or a .jsonl/.csv file.") from None
    if not members:
        raise CorpusError("the zip holds no .txt or .md files", path=shown,
                          hint="upload a .zip of .txt/.md files, or a .jsonl/.csv file.")
    return len(members)
