"""The one progress callback type: `progress(done, total, stage)`, called as work advances.

The CLI draws a bar (or logs a line per stage), the app a `st.progress`; the core only calls it.
"""
from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int, str], None]
