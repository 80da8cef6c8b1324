"""The shared JSON-lines reader and atomic writer: every bad line reported, never raised."""
from __future__ import annotations

import io
import os
import stat

import pytest

from labeler.errors import InputError
from labeler.jsonlines import (
    BadLine, binary_lines, open_lines, parse_json_lines, path_kind, read_json_lines, split_lines,
    write_text_atomic, write_texts_atomic,
)

TEXT = '\ufeff{"a": 1}\r\n\n  \n{"b": "x\u2028y"}\n'


def test_split_lines_and_binary_lines_agree_on_bom_crlf_and_u2028():
    # Line 4 holds U+2028 inside a string: only "\n" ends a line.
    expected = [(1, '{"a": 1}'), (2, ""), (3, "  "), (4, '{"b": "x\u2028y"}'), (5, "")]
    assert list(split_lines(TEXT)) == expected
    assert list(binary_lines(io.BytesIO(TEXT.encode()))) == expected[:-1]  # a file has no line after the last "\n"


def test_parse_json_lines_skips_blank_lines_and_numbers_from_one():
    assert list(parse_json_lines(TEXT)) == [(1, {"a": 1}), (4, {"b": "x\u2028y"})]


@pytest.mark.parametrize("raw, reason", [
    ('{"a": 1, "a": 2}', "broken JSON: duplicate key 'a' in one object"),
    ('{"a": NaN}', "broken JSON: NaN is not valid JSON"),
    ('{"a": Infinity}', "broken JSON: Infinity is not valid JSON"),
    ('[-Infinity]', "broken JSON: -Infinity is not valid JSON"),
    ('{"a": 1', "broken JSON: Expecting ',' delimiter at column 8"),
    ("[" * 100_000 + "]" * 100_000, "broken JSON: nested too deeply"),
    ("{\"a\":" * 100_000 + "1" + "}" * 100_000, "broken JSON: nested too deeply"),
    ('"\\ud800"', "lone surrogate"),
    ('"\\udc00 tail"', "lone surrogate"),
    ("9" * 5000, "broken JSON: Exceeds the limit"),
])
def test_parse_json_lines_reports_refused_json_as_bad_line(raw, reason):
    [(n, bad)] = list(parse_json_lines('{"ok": 1}\n' + raw + "\n"))[1:]
    assert n == 2 and isinstance(bad, BadLine) and bad.kind == "json"
    assert reason in bad.reason


def test_parse_json_lines_keeps_a_valid_surrogate_pair_escape():
    assert list(parse_json_lines('{"e": "\\ud83d\\ude00"}')) == [(1, {"e": "\U0001F600"})]


def test_binary_lines_reports_non_utf8_line_and_goes_on():
    lines = list(binary_lines(io.BytesIO(b'{"a": 1}\n{"b": "caf\xe9"}\n{"c": 3}\n')))
    assert lines[1] == (2, BadLine("not valid UTF-8: byte 0xe9 at column 11", "encoding"))
    assert lines[2] == (3, '{"c": 3}')


@pytest.mark.parametrize("size, too_long", [(64, False), (65, True)])
def test_line_limit_is_in_bytes_for_text_and_files(size, too_long):
    # "é" is 2 bytes: 32 of them are 64 bytes, the limit.
    line = "é" * (size // 2) + "a" * (size % 2)
    for lines in (split_lines(line + "\n", max_line_bytes=64),
                  binary_lines(io.BytesIO((line + "\n").encode()), max_line_bytes=64)):
        first = next(iter(lines))[1]
        assert isinstance(first, BadLine) == too_long
        if too_long:
            assert first.kind == "too_long" and f"line is {size} bytes long; the limit is 64" in first.reason


def test_read_json_lines_reads_path_binary_and_text_files(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(TEXT, encoding="utf-8")
    expected = list(parse_json_lines(TEXT))
    assert list(read_json_lines(path)) == expected
    assert list(read_json_lines(str(path))) == expected
    assert list(read_json_lines(io.BytesIO(TEXT.encode()))) == expected
    assert list(read_json_lines(io.StringIO(TEXT))) == expected


@pytest.mark.parametrize("name, words", [
    ("missing.jsonl", "no such file"),
    ("", "expected a file, got a folder"),
    ("x" * 5000, "no such file"),  # ENAMETOOLONG: pathlib's is_dir() would raise OSError
    ("nul\x00byte", "no such file"),
])
def test_open_lines_refuses_unusable_paths_with_input_error(tmp_path, name, words):
    with pytest.raises(InputError, match=words):
        with open_lines(tmp_path / name):
            pass


def test_path_kind_never_raises(tmp_path):
    (tmp_path / "f").write_text("x")
    assert [path_kind(tmp_path), path_kind(tmp_path / "f"), path_kind(tmp_path / "n"), path_kind("a" * 5000)] == \
        ["folder", "file", "missing", "missing"]


# --------------------------------------------------------------------------- writing


def test_write_text_atomic_writes_utf8_bytes_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "sub" / "out.txt"
    write_text_atomic(path, "héllo\r\n有\n")
    assert path.read_bytes() == "héllo\r\n有\n".encode()
    assert os.listdir(path.parent) == ["out.txt"]


def test_write_text_atomic_gives_a_new_file_the_usual_mode_and_keeps_an_existing_one(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    path = tmp_path / "new.txt"
    write_text_atomic(path, "x")
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600
    path.chmod(0o640)
    write_text_atomic(path, "y")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and path.read_text() == "y"


@pytest.mark.parametrize("where, words", [
    (lambda tmp: tmp / "file.txt" / "x.jsonl", "is a file, not a folder"),
    (lambda tmp: tmp / "file.txt" / "deeper" / "x.jsonl", "is a file, not a folder"),
    (lambda tmp: tmp / "folder", "a folder has this name"),
])
def test_write_text_atomic_unwritable_path_is_input_error_with_hint(tmp_path, where, words):
    (tmp_path / "file.txt").write_text("keep")
    (tmp_path / "folder").mkdir()
    path = where(tmp_path)
    with pytest.raises(InputError, match=words) as info:
        write_text_atomic(path, "x")
    assert info.value.path == str(path) and info.value.hint
    assert (tmp_path / "file.txt").read_text() == "keep"
    assert sorted(os.listdir(tmp_path)) == ["file.txt", "folder"] and os.listdir(tmp_path / "folder") == []


def test_write_text_atomic_lone_surrogate_is_input_error_and_writes_nothing(tmp_path):
    with pytest.raises(InputError, match="lone surrogate"):
        write_text_atomic(tmp_path / "x.txt", "bad \ud800")
    assert not (tmp_path / "x.txt").exists()


def test_write_texts_atomic_replaces_nothing_when_one_file_cannot_be_written(tmp_path):
    (tmp_path / "a.txt").write_text("old")
    (tmp_path / "blocker").write_text("a file where a folder should be")
    with pytest.raises(InputError, match="is a file, not a folder"):
        write_texts_atomic({tmp_path / "a.txt": "new", tmp_path / "blocker" / "b.txt": "new"})
    assert (tmp_path / "a.txt").read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "blocker"]
