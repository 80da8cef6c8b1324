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
    # when the Label page shows a machine judge's grade of a pair (labeler_app.suggestions): "after" the
    # annotator's own grade, "before" it (to keep or change), or "off"
    "suggestions": "after",
    # the work queue's order (labeler_app.queue_order): "seats" (closest to its overlap first) or "doubts"
    # (where the machine judges are least sure or disagree with a person first)
    "queue_order": "seats",
    # when a machine judge's grades may fill holes in a metric (labeler_app.judges.gate): its calibration rests on
    # min_pairs human pairs at least, binarized kappa (relevant = grade >= 1) >= kappa_binary, and Kendall's
    # tau between the saved runs' orders >= tau once there are min_runs runs
    "judge_bars": {"min_pairs": 100, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4},
}
SUGGESTION_MODES = ("after", "before", "off")
QUEUE_ORDERS = ("seats", "doubts")
CHOICES = {"suggestions": (SUGGESTION_MODES, '"after" shows a machine grade once the annotator has graded the pair.'),
           "queue_order": (QUEUE_ORDERS, '"seats" offers the question closest to its overlap first.')}
JUDGE_BARS = {"min_pairs": (int, 1, 1_000_000), "kappa_binary": (float, -1.0, 1.0), "tau": (float, -1.0, 1.0),
              "min_runs": (int, 2, 1000)}


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
    if key == "judge_bars":
        return check_judge_bars(value)
    if key in CHOICES:
        if value not in CHOICES[key][0]:
            raise InputError(f"{key} must be one of {', '.join(CHOICES[key][0])}, got {value!r}", hint=CHOICES[key][1])
        return value
    raise InputError(f"unknown team setting {key!r}", hint=f"known settings: {', '.join(DEFAULT_SETTINGS)}.")


def check_judge_bars(value: Any) -> dict[str, Any]:
    """The machine-judge bars, every one given and in range (kappa and tau between -1 and 1)."""
    if not isinstance(value, dict) or set(value) != set(JUDGE_BARS):
        raise InputError(f"judge_bars must give {', '.join(JUDGE_BARS)}, got {value!r}",
                         hint="e.g. min_pairs 100, kappa_binary 0.4, tau 0.9, min_runs 4.")
    out = {}
    for name, (kind, low, high) in JUDGE_BARS.items():
        v = value[name]
        ok = not isinstance(v, bool) and (isinstance(v, int) if kind is int else isinstance(v, (int, float)))
        if not ok or not low <= v <= high:
            raise InputError(f"judge bar {name} must be {'a whole number' if kind is int else 'a number'} from {low} "
                             f"to {high}, got {v!r}", hint="e.g. min_pairs 100, kappa_binary 0.4, tau 0.9, min_runs 4.")
        out[name] = kind(v)
    return out
