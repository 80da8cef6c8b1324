"""One exception hierarchy for everything a user can fix.

A message says what happened, where (file and line), and how to fix it (a "Hint:").
Pages show a LabelerError with st.error; the CLI turns it into exit status 2.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def ended(text: str) -> str:
    """`text` as a sentence: a full stop added unless it ends with one (or ! ? :), before a hint follows."""
    return text if text.endswith((".", "!", "?", ":")) else text + "."


class LabelerError(Exception):
    """Base class: an error in the user's input or setup, with where and how to fix it."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        return f"{where}{ended(self.message)} Hint: {self.hint}" if self.hint else f"{where}{self.message}"


class InputError(LabelerError):
    """A file or value given by the user is malformed."""


class ImportConflictError(InputError):
    """An import would change questions the collection already holds, and no one chose how."""


class CorpusError(InputError):
    """A corpus file or folder cannot be loaded."""


class RunFileError(InputError):
    """A TREC run file is malformed."""


@dataclass(frozen=True)
class LineProblem:
    """One bad line of a file: its number (1-based) and the reason."""

    line: int
    reason: str


class BadLinesError(InputError):
    """A file has one or more bad lines, every one of them reported; nothing from it was used."""

    consequence = "nothing was used."

    def __init__(self, path: str | Path | None, problems: list[LineProblem], hint: str | None = None):
        self.problems = list(problems)
        first = self.problems[0] if self.problems else LineProblem(0, "unknown error")
        more = f" (and {len(self.problems) - 1} more bad lines)" if len(self.problems) > 1 else ""
        super().__init__(first.reason + more, path=path, line=first.line or None, hint=hint)

    def report(self) -> str:
        """Every bad line, one per row: `file:line: reason`."""
        prefix = f"{self.path}:" if self.path else "line "
        return "\n".join(f"{prefix}{p.line}: {p.reason}" for p in self.problems)

    def summary(self, max_shown: int = 20) -> str:
        """The first `max_shown` bad lines, then a count and the hint.

        A file with one bad line gives exactly one line: `file:line: reason. Hint: ...`.
        """
        lines = self.report().split("\n")
        hint = f" Hint: {self.hint}" if self.hint else ""
        if len(lines) == 1:
            return ended(lines[0]) + hint
        shown = lines[:max_shown]
        if len(lines) > max_shown:
            shown.append(f"... and {len(lines) - max_shown} more")
        return "\n".join(shown) + f"\n{len(self.problems)} bad lines; {self.consequence}{hint}"


class GoldenFormatError(BadLinesError):
    """A golden-set file has one or more bad lines; nothing from it was used (imported, or scored)."""

    consequence = "nothing from the file was used."


class RunFormatError(BadLinesError, RunFileError):
    """A TREC run file has one or more bad lines; nothing from it was scored."""

    consequence = "nothing was scored."


class ConfigError(LabelerError):
    """A run configuration or option value is invalid."""


class StorageError(LabelerError):
    """The database cannot be opened or is in an unexpected state."""


class AccessDenied(LabelerError):
    """The signed-in user's role does not allow the action (checked in the app layer, whatever a page shows)."""


class SignInError(LabelerError):
    """A sign-in, invite or session was refused (wrong password, throttled, expired)."""
