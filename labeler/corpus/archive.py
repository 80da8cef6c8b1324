"""Extracting an uploaded zip's text files: the central directory is counted before zipfile reads it,
and each member is inflated in 1 MiB chunks, counting the bytes actually written (never the sizes its
headers claim), so a zip bomb is refused after a few MiB (the app layer's corpus_files opens what it extracts)."""
from __future__ import annotations

import io
import re
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Protocol

from labeler.corpus import TEXT_SUFFIXES
from labeler.errors import CorpusError
from labeler.file_guard import HINT_LIMIT, too_large


class ZipLimits(Protocol):
    """The bounds an extraction keeps (the app layer's CorpusLimits has them)."""

    max_zip_bytes: int
    max_zip_members: int
    max_zip_ratio: int


CHUNK = 1 << 20
# A member that inflates to less than this cannot hurt whatever its ratio (the total cap bounds
# many of them), and a short repetitive text file may legitimately compress past the ratio.
RATIO_FLOOR = 1 << 20

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


def _text_members(infos: list[zipfile.ZipInfo], shown: str, limits: ZipLimits,
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


def _check_ratio(size: int, compressed: int, where: str, limits: ZipLimits) -> None:
    if size > RATIO_FLOOR and size > limits.max_zip_ratio * compressed:
        raise CorpusError(f"the zip member inflates more than {limits.max_zip_ratio}-fold (a zip bomb?)",
                          path=where, hint="upload the files themselves, or a zip of ordinary text files.")


def _extract_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, compressed: int, target: Path, where: str,
                    limits: ZipLimits, total: int) -> int:
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


def extract_text_members(data: bytes, work: Path, *, shown: str, limits: ZipLimits) -> int:
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
