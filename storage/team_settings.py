"""Team settings: session length, the role an OpenID Connect sign-in gets, saved search systems, the
overlap of judges per question, blind judging; stored in `team_settings`, each checked on the way in.
`Accounts.settings` / `set_setting` are the store's way in; `read_settings` reads them inside a
caller's transaction."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.errors import InputError
from labeler_storage import schema as S

DEFAULT_SETTINGS: Mapping[str, Any] = {
    "session_hours": 12,  # a built-in sign-in lasts this long
    "oidc_default_role": "none",  # role of an OIDC user not in the list ("none": refused)
    "systems": {},  # saved search systems: name -> declaration (labeler_app.systems checks them; no secret inside)
    "overlap": 1,  # independent judgments wanted per question (the work queue, labeler_storage.work_queue)
    "blind": None,  # hide others' grades until I finish a question; None: on in team mode (labeler_app.label)
}


def read_settings(conn: Connection) -> dict[str, Any]:
    """Every team setting (defaults filled in), inside the caller's transaction."""
    return stored_settings(conn)


def stored_settings(conn: Connection) -> dict[str, Any]:
    stored = {r.key: r.value for r in conn.execute(sa.select(S.team_settings))}
    return {**DEFAULT_SETTINGS, **{k: v for k, v in stored.items() if k in DEFAULT_SETTINGS}}


def check_setting(key: str, value: Any) -> Any:
    if key == "session_hours":
        try:
            hours = 0.0 if isinstance(value, bool) else float(value)
        except (TypeError, ValueError):
            hours = 0.0
        if not 0 < hours <= 24 * 90:
            raise InputError(f"session_hours must be a number of hours between 0 and 2160, got {value!r}",
                             hint="e.g. 12 for a working day.")
        return hours
    if key == "oidc_default_role":
        if value != "none":
            from labeler_storage.accounts import check_role  # the roles live with the accounts

            check_role(value)
        return value
    if key == "systems":
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in value.items()):
            raise InputError("systems must map names to declarations", hint="save systems from the Evaluate page.")
        return value
    if key == "overlap":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 20:
            raise InputError(f"overlap must be a whole number of judges between 1 and 20, got {value!r}",
                             hint="e.g. 2 for two independent judgments per question.")
        return value
    if key == "blind":
        if value is not None and not isinstance(value, bool):
            raise InputError(f"blind must be true or false, got {value!r}", hint="true hides others' grades.")
        return value
    raise InputError(f"unknown team setting {key!r}", hint=f"known settings: {', '.join(DEFAULT_SETTINGS)}.")
