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
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from labeler.corpus import Corpus, load_corpus
from labeler.corpus.archive import count_zip_members, extract_text_members  # noqa: F401 - count_zip_members: tests
from labeler.errors import CorpusError
from labeler.file_guard import too_large
from labeler.paths import SAMPLE_CORPUS, labeler_home
from labeler_app.workspace import normalize_corpus_path

ROOTS_ENV = "LABELER_CORPUS_ROOTS"
UPLOAD_SUFFIXES = (".jsonl", ".json", ".ndjson", ".csv", ".zip")
SERVER_SUFFIXES = (".jsonl", ".json", ".ndjson", ".csv", ".txt", ".md")
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
