"""What every page shares besides its data: named session keys, the guards that show a user
error instead of a traceback, messages kept across a callback, and who the annotator is.
(The cached store, corpus and retriever are in `pages/_loaders.py`.)"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import streamlit as st

from labeler.errors import BadLinesError, LabelerError, StorageError
from labeler_app.access import Actor
from labeler_app.text import inert

T = TypeVar("T")


HOLES_PARAM = "holes"  # ?holes=<run id>: the Label page shows that run's unjudged top-k documents first


class Keys:
    """Session-state keys shared across pages and callbacks (UI cursors only; data lives in the database)."""

    ANNOTATOR = "annotator"
    ACTOR = "_actor"
    RECHECK = "_recheck_actor"
    SESSION_ENDED = "_session_ended"  # an action found the sign-in gone: rerun the whole page, not a fragment
    QUESTION = "q"
    FOCUS = "focus"
    FLASH = "_flash"
    CONFIRM_DELETE = "confirm_delete"
    EVAL_RUN = "eval_run"
    JUST_RUN = "eval_just_run"  # the run this rerun computed and saved: shown as computed, not read back
    UNDO = "_undo"  # (query_id, doc_id, grade before, grade after) of the last grade action
    EXTRA_SYSTEM = "extra_system"  # a saved system whose top 10 the Label page pools too
    HOLES = "holes_run"  # the saved run whose unjudged top-k documents the Label page shows first


def said(exc: LabelerError) -> str:
    """What the user reads, as inert markdown (a message quotes files, ids and servers: data, never
    markup); a file with bad lines lists them (the first 20), one per line. In team mode a
    database error names no host, user or database (its message does, for the admin): it goes to the
    error log under an id the user quotes."""
    from labeler_app.accounts import team_mode

    if isinstance(exc, StorageError) and team_mode():
        from labeler.bugs import record_bug

        incident, _ = record_bug(exc, f"database error user={st.session_state.get(Keys.ACTOR, '(signing in)')}")
        return (f"The database did not answer as expected (error id {incident}). Try again in a moment; "
                "if it keeps happening, quote the id to your admin.")
    lines = exc.summary().splitlines() if isinstance(exc, BadLinesError) else [str(exc)]
    return "  \n".join(inert(line) for line in lines)


def guard(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call `fn`; a LabelerError is shown to the user and stops the page (anything else is a bug)."""
    try:
        return fn(*args, **kwargs)
    except LabelerError as exc:
        st.error(said(exc))
        st.stop()
        raise  # unreachable: st.stop raises


def act(fn: Callable[..., Any], *args: Any, success: str | None = None, slot: str = Keys.FLASH,
        **kwargs: Any) -> Any:
    """Run an action from a callback: its result (True when it returns nothing), or False after a
    LabelerError. The error (or `success`) shows on the next run, where `show_flash(slot)` is
    called (by default at the top of the page): callbacks run before the page."""
    recheck = st.session_state.get(Keys.RECHECK)  # team mode: the session may have ended since the last run
    if recheck is not None:
        fresh = recheck()
        if fresh is None:  # the sign-in screen of the (whole-page) rerun says so
            st.session_state[Keys.SESSION_ENDED] = True
            return False
        args = tuple(fresh if isinstance(a, Actor) else a for a in args)  # a changed role applies at once
    try:
        result = fn(*args, **kwargs)
    except LabelerError as exc:
        flash(said(exc), slot=slot)
        return False
    except Exception as exc:  # noqa: BLE001 - team mode: never a traceback in the browser
        if recheck is None:
            raise
        from labeler.bugs import record_bug

        flash(f"Something went wrong on our side (error id {record_bug(exc, 'app callback')[0]}); "
              "quote it to your admin.", slot=slot)
        return False
    if success:
        flash(success, "success", slot=slot)
    return True if result is None else result


def flash(message: str, kind: str = "error", *, slot: str = Keys.FLASH) -> None:
    """Keep a message from a callback to show on the next run (callbacks run before the page)."""
    st.session_state.setdefault(slot, []).append((kind, message))


def show_flash(slot: str = Keys.FLASH) -> None:
    """Show and forget the messages callbacks left (in `slot`: next to the control that acted)."""
    for kind, message in st.session_state.pop(slot, []):
        getattr(st, kind)(message)


def pick_declared(label: str, saved: Iterable[str], new: str, *, declare: bool, key: str, kind: str) -> str | None:
    """A select box of the saved declarations, and `new` for who may `declare`; None (said so) when empty."""
    pick = st.selectbox(label, [*saved, *([new] if declare else [])], key=key)
    if pick is None:
        st.info(f"No {kind} is declared yet: an admin declares one here.")
    return pick


def guarded(fn: Callable[..., T], *args: Any) -> T | None:
    """Run a page (or a fragment of one). In team mode an unexpected error is logged under an id
    and the user sees only the id; locally it is shown as usual (the developer is the user)."""
    from labeler_app.accounts import team_mode

    if st.session_state.pop(Keys.SESSION_ENDED, False):
        st.rerun(scope="app")  # a fragment's rerun would not reach the sign-in screen
    _recheck_fragment()
    if not team_mode():
        return fn(*args)
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the one place a team user's unexpected error ends up
        from labeler.bugs import record_bug

        incident, _ = record_bug(exc, f"app user={st.session_state.get(Keys.ACTOR, '(signing in)')}")
        st.error(f"Something went wrong on our side (error id **{incident}**). The details are in the server's "
                 "log; quote this id to your admin.")
        st.stop()
        raise  # unreachable: st.stop raises


def _run_context():
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    return get_script_run_ctx()


def fragment_run() -> bool:
    """This run is a fragment's alone (a grade click, a key), not the whole page's."""
    ctx = _run_context()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def widget_record():
    """Streamlit's own record of this session's widgets (its private SessionState; None outside a run), read for
    what its API does not say: the values the browser sent for controls this run does not hold, and the
    browser message the callbacks are answering (`_current_interaction_widget_states`)."""
    return getattr(getattr(_run_context(), "session_state", None), "_state", None)


def _recheck_fragment() -> None:
    """A fragment's rerun (a grade, a key, a corpus search on the Label page) skips the entry script
    and its sign-in check: re-read the session here (one indexed query), and when it ended or the
    role changed, rerun the whole app, which shows the sign-in form or the reduced role."""
    recheck = st.session_state.get(Keys.RECHECK)
    if recheck is None or not fragment_run():
        return  # local mode, or a whole-page run (the entry script has just checked)
    if recheck() != st.session_state.get(Keys.ACTOR):
        st.rerun(scope="app")


DECIMALS = 4  # as trec_eval prints: every table of scores shows the same number of decimals


def score_columns(frame) -> dict[str, Any]:
    """Column formats for a table of scores: every float column with DECIMALS decimals."""
    return {c: st.column_config.NumberColumn(format=f"%.{DECIMALS}f")
            for c, dtype in frame.dtypes.items() if dtype.kind == "f"}


def actor() -> Actor:
    """Who this rerun acts as (set by the entry script: the local annotator, or the signed-in user)."""
    return st.session_state[Keys.ACTOR]


def refresh_label(key: str, label_of: Callable[[Any], str]) -> None:
    """Before a select box (`key`) is drawn: send its value anew to the browser when the box may show
    another one. Two cases: the label of its picked value changed since the box last showed it (a new
    status mark, an edited text), or the value is not the one the box last showed and no code set it
    this run. That value came from the browser, and the browser may show another: a click sent before
    the browser heard of the last run (just after N) carries the box's value from before it, and
    Streamlit takes it without telling the browser, whose box had meanwhile moved on (the picker said
    q-0002 over q-0001's cards). Only then: a value sent anew also resets what the user is typing into
    the box. After drawing the box, call `shown_label` with what it shows."""
    before, value = st.session_state.get(f"_shown_{key}"), st.session_state.get(key)
    if key in st.session_state and before is not None and (before[0] != value or before[1] != label_of(value)):
        st.session_state[key] = value


def shown_label(key: str, value: Any, label: str) -> None:
    """Remember what the select box `key` shows now (see refresh_label), and since when it shows that value."""
    before = st.session_state.get(f"_shown_{key}")
    since = before[2] if before is not None and before[0] == value else time.monotonic()
    st.session_state[f"_shown_{key}"] = (value, label, since)


def shown_for(key: str) -> float:
    """Seconds since the select box `key` began showing its value (a pick), as `shown_label` recorded."""
    return time.monotonic() - st.session_state[f"_shown_{key}"][2]
