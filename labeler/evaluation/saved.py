"""Saved reports: the `--json` output of `labeler score` / `labeler eval`, read back for `compare`."""
from __future__ import annotations

import json
from pathlib import Path

from labeler.errors import InputError
from labeler.evaluation.report import EvalReport


def parse_report_json(text: str, *, source: str | None = None) -> EvalReport:
    """Parse a saved report; raises InputError naming the file when it is not one."""
    hint = "give the output of `labeler score --json` or `labeler eval --json` saved to a file."
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", path=source, line=exc.lineno, hint=hint) from exc
    except RecursionError:
        raise InputError("JSON nested too deep to be a report", path=source, hint=hint) from None
    if not isinstance(data, dict) or not isinstance(data.get("per_query"), dict) or not isinstance(data.get("metrics"), dict):
        raise InputError("not a saved evaluation report (no \"metrics\" and \"per_query\")", path=source, hint=hint)
    try:
        return EvalReport.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"malformed evaluation report ({exc!r})", path=source, hint=hint) from exc


def read_report(path: str | Path) -> EvalReport:
    """Read a saved report from a file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read report: {exc}", path=path, hint="check the path.") from exc
    return parse_report_json(text, source=str(path))
