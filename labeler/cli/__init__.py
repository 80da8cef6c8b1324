"""`labeler` command line: the same core as the app, no browser.

Exit status: 0 ok, 1 a --fail-under bar missed, 2 bad input (message names file, line, fix).
Each command group lives in its own module and imports heavy libraries inside the command,
so `labeler score` starts without torch or faiss.
"""
from __future__ import annotations

import functools
import sys

import click

from labeler.errors import LabelerError

EXIT_OK, EXIT_BAR_MISSED, EXIT_BAD_INPUT = 0, 1, 2


class UserError(click.ClickException):
    """A LabelerError at the CLI edge: printed as one message, exit status 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file=None) -> None:  # noqa: D401 - click API
        click.echo(f"Error: {self.format_message()}", err=True)


def handle_errors(fn):
    """Turn LabelerError into exit status 2 with its message; anything else is a bug."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LabelerError as exc:
            summary = getattr(exc, "summary", None)  # files with many bad lines: the first few, a count, the hint
            raise UserError(summary() if callable(summary) else str(exc)) from exc

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="golden-set-labeler")
def cli() -> None:
    """Golden Set Labeler: label retrieval golden sets and score retrieval against them."""


@cli.command("app")
@click.option("--port", default=8501, show_default=True)
def app_command(port: int) -> None:
    """Start the Streamlit app."""
    import os
    from pathlib import Path

    app = Path(__file__).resolve().parents[2] / "app.py"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.execvp(
        sys.executable,
        [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
         "--server.headless", "true", "--browser.gatherUsageStats", "false"],
    )


def _register() -> None:
    # Each module adds its commands to `cli`; a missing module means that issue has not landed.
    import importlib

    for name in ("retrieval", "scoring", "golden"):
        try:
            importlib.import_module(f"labeler.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"labeler.cli.{name}":
                raise


_register()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="labeler")
