"""Option words that mean one thing in every command: `-k/--depth` is how many documents are
retrieved per question; `--cutoffs` are the metric cutoffs. (`score` and `compare` once took
cutoffs as `-k`: that spelling still works there, with a deprecation note.)"""
from __future__ import annotations

import math
from collections.abc import Sequence

import click

from labeler.errors import ConfigError
from labeler.metrics import DEFAULT_CUTOFFS

CUTOFFS_TEXT = ",".join(map(str, DEFAULT_CUTOFFS))
_CUTOFFS_HINT = "give positive integers separated by commas, e.g. --cutoffs 1,3,5,10."


class Depth(click.ParamType):
    """A positive integer; a comma list gets told apart from cutoffs instead of a bare type error."""

    name = "N"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).strip()
        if "," in text:
            self.fail(f"{text!r}: -k/--depth is how many documents to retrieve per question (one number). "
                      f"Hint: for metric cutoffs use --cutoffs {text}.", param, ctx)
        if not text.isdigit() or int(text) < 1:
            self.fail(f"{text!r} is not a positive whole number of documents. Hint: e.g. -k 100.", param, ctx)
        return int(text)


def depth_option(default: int, help_text: str = "Documents retrieved per question."):
    """`-k/--depth N` (the old `--top-k` spelling still accepted)."""
    return click.option("-k", "--depth", "--top-k", "depth", type=Depth(), default=default, show_default=True,
                        help=help_text)


def cutoffs_options(fn):
    """`--cutoffs 1,3,5,10` plus the deprecated `-k 1,3,5,10` of `score`/`compare`."""
    fn = click.option("-k", "old_cutoffs", default=None, hidden=True)(fn)
    return click.option("--cutoffs", default=None, metavar="K,K,...",
                        help=f"Metric cutoffs, comma-separated [default: {CUTOFFS_TEXT}].")(fn)


def resolve_cutoffs(cutoffs: str | None, old_cutoffs: str | None) -> tuple[int, ...]:
    """The cutoffs given by `--cutoffs`, or by the deprecated `-k` (with a note on stderr)."""
    if old_cutoffs is not None:
        if cutoffs is not None:
            raise ConfigError("both -k and --cutoffs given", hint="give the cutoffs once, with --cutoffs.")
        click.echo("note: -k for metric cutoffs is deprecated; use --cutoffs (-k is the retrieval depth "
                   "in every command).", err=True)
        cutoffs = old_cutoffs
    return parse_cutoffs(CUTOFFS_TEXT if cutoffs is None else cutoffs)


def parse_cutoffs(text: str) -> tuple[int, ...]:
    """"1,3,5,10" -> (1, 3, 5, 10); a bad value raises ConfigError with a hint."""
    cutoffs = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise ConfigError(f"bad cutoff {part!r} in {text!r}", hint=_CUTOFFS_HINT)
        cutoffs.append(int(part))
    if not cutoffs:
        raise ConfigError("no cutoff given", hint=_CUTOFFS_HINT)
    return tuple(sorted(set(cutoffs)))


def parse_bars(specs: Sequence[str]) -> list[tuple[str, float]]:
    """["ndcg@10=0.6"] -> [("ndcg@10", 0.6)]: the --fail-under bars."""
    from labeler.metrics import parse_measure

    bars = []
    for spec in specs:
        name, sep, value = spec.partition("=")
        try:
            bar = float(value)
        except ValueError:
            bar = math.nan
        if not sep or math.isnan(bar):
            raise ConfigError(f"bad --fail-under {spec!r}", hint="write METRIC=VALUE, e.g. --fail-under ndcg@10=0.6.")
        bars.append((str(parse_measure(name)), bar))
    return bars
