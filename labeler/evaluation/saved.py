"""Saved reports: the `--json` output of `labeler score` / `labeler eval`, read back for `compare`."""
from __future__ import annotations

import json
import math
from pathlib import Path

from labeler.errors import InputError
from labeler.evaluation.report import EvalReport
from labeler.jsonlines import require_file

MAX_REPORT_BYTES = 512 << 20  # far above any real report; stops a device or a runaway file


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_report_json(text: str, *, source: str | None = None) -> EvalReport:
    """Parse a saved report; raises InputError naming the file when it is not one."""
    hint = "give the output of `labeler score --json` or `labeler eval --json` saved to a file."
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", path=source, line=exc.lineno, hint=hint) from exc
    except RecursionError:
        raise InputError("JSON nested too deep to be a report", path=source, hint=hint) from None
    except ValueError as exc:  # NaN / Infinity: a saved report writes null for those
        raise InputError(f"not a saved report: {exc}", path=source, hint=hint) from None
    if not isinstance(data, dict) or not isinstance(data.get("per_query"), dict) or not isinstance(data.get("metrics"), dict):
        raise InputError("not a saved evaluation report (no \"metrics\" and \"per_query\")", path=source, hint=hint)
    try:
        report = EvalReport.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise InputError(f"malformed evaluation report ({type(exc).__name__}: {exc})", path=source, hint=hint) from None
    bad = next((q for q, r in report.per_query.items() if not all(map(math.isfinite, r.metrics.values()))), None)
    if bad is not None:
        raise InputError(f"question {bad!r} has a metric value that is not a finite number", path=source, hint=hint)
    return report


def read_report(path: str | Path) -> EvalReport:
    """Read a saved report from a file."""
    path = require_file(path, what="report file")  # a FIFO or a device would block or never end
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_REPORT_BYTES + 1)
        text = data.decode("utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the report: {exc.strerror or exc}", path=path, hint="check the path.") from None
    except UnicodeDecodeError:
        raise InputError("the report is not UTF-8 text", path=path,
                         hint="give the output of `labeler score --json` saved to a file.") from None
    if len(data) > MAX_REPORT_BYTES:
        raise InputError(f"the file is over {MAX_REPORT_BYTES >> 20} MiB: not a saved report", path=path,
                         hint="give the output of `labeler score --json` saved to a file.")
    return parse_report_json(text, source=str(path))
