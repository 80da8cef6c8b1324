"""The checks every write in storage makes of what it is given (grades, ids, annotator names, question
texts), each an InputError with a hint; and `chunks`, for statements with bounded parameter lists."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from labeler.errors import InputError
from labeler.golden import GRADE_MAX, GRADE_MIN, HINT_QUESTION, question_problem
from labeler.ids import ID_HINT, id_problem
from labeler_storage.records import SOURCE_PREFIX, is_file_source

CHUNK = 500  # rows per executemany / IN (...) list
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def check_grade(grade: Any) -> int:
    """A grade an annotator may give in the app: an int 0-3."""
    if isinstance(grade, bool) or not isinstance(grade, int) or not GRADE_MIN <= grade <= GRADE_MAX:
        raise InputError(f"grade must be an integer {GRADE_MIN}-{GRADE_MAX}, got {grade!r}",
                         hint="0 not relevant, 1 partially relevant, 2 relevant, 3 answers fully.")
    return grade


def check_stored_grade(grade: Any, where: str) -> int:
    """Any grade the database can hold (an imported scale may differ): an int that fits 64 bits."""
    if isinstance(grade, bool) or not isinstance(grade, int) or not INT64_MIN <= grade <= INT64_MAX:
        raise InputError(f"{where}: grade must be an integer that fits 64 bits, got {grade!r:.40}",
                         hint="use grades 0-3 (or a small integer scale read with --keep-scale).")
    return grade


def check_id(value: Any, what: str) -> str:
    """The id, or an InputError saying why it breaks the id policy."""
    if why := id_problem(value, what):
        raise InputError(why, hint=ID_HINT)
    return value


def check_annotator(annotator: Any) -> str:
    """An annotator name: non-empty after stripping, and not a grade source's (they start with "(")."""
    if not isinstance(annotator, str) or not annotator.strip():
        raise InputError("an annotator name is required", hint="pick your name before labelling.")
    if is_file_source(annotator.strip()):
        raise InputError(f"{annotator.strip()!r}: names starting with {SOURCE_PREFIX!r} are reserved for imported "
                         "grades", hint="use your own name.")
    return annotator.strip()


def check_text(text: Any) -> str:
    """A question's text: a non-blank string within the question size cap."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("the question text is empty", hint="write the question as an annotator would ask it.")
    if why := question_problem(text):
        raise InputError(why, hint=HINT_QUESTION)
    return text


def chunks(items: list, size: int = CHUNK) -> Iterator[list]:
    """Consecutive slices of at most `size` items."""
    for i in range(0, len(items), size):
        yield items[i:i + size]
