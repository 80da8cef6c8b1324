"""Where unexpected errors go: a traceback in the server's log under an incident id, never to a
browser or a terminal user, who get one line with the id to quote."""
from __future__ import annotations

import datetime as _dt
import os
import tempfile
import traceback
import uuid
from pathlib import Path


def error_log() -> Path:
    """Where unexpected tracebacks go: `$LABELER_HOME/logs/errors.log`, else the temp folder."""
    home = os.environ.get("LABELER_HOME") or Path.cwd() / ".labeler"
    for folder in (Path(home) / "logs", Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / ("errors.log" if folder.name == "logs" else "labeler-errors.log")
            with open(path, "a", encoding="utf-8", errors="backslashreplace"):
                return path
        except OSError:
            continue
    raise OSError("no writable folder for the error log")


def record_bug(exc: BaseException, context: str = "") -> tuple[str, Path | None]:
    """Append the traceback of `exc` to the error log; (incident id, log path or None if none could be written)."""
    incident = uuid.uuid4().hex[:8]
    text = "".join(traceback.format_exception(exc))
    try:
        path = error_log()
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(f"--- {incident} {_dt.datetime.now(_dt.timezone.utc).isoformat()} {context}\n{text}\n")
        return incident, path
    except OSError:
        return incident, None
