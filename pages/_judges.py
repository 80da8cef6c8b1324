"""The Judges page's sections: declaring a judge and testing it on one pair, the team's bars, a judge's
calibration with its confusion matrix as a heat map and the gate's verdict, grading a run's holes and
the judged evaluation. Wiring only: labeler_app.judges checks, runs and decides everything."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from labeler.corpus import Corpus
from labeler.judges import JudgeFailure
from labeler_app import judges as J
from labeler_app import stores as db
from labeler_app import suggestions as sg
from labeler_app.access import Actor, Can
from labeler_app.stores import Store
from labeler_app.text import inert
from labeler_pages._common import act, flash, guard, pick_declared, score_columns, show_flash

NEW = "(new judge)"
SLOT = "judges_flash"


def _save(s: Store, me: Actor, key: str) -> None:
    name = act(J.declare_judge, s, me, st.session_state.get(key) or "", slot=SLOT)
    if name:
        st.session_state["judge_pick"] = name
        flash(f"Saved judge {inert(repr(name))}.", "success", slot=SLOT)


def _delete(s: Store, me: Actor, name: str) -> None:
    if act(J.delete_judge, s, me, name, slot=SLOT):
        st.session_state.pop("judge_pick", None)
        flash(f"Deleted judge {inert(repr(name))} (its grades stay).", "success", slot=SLOT)


def declare_section(s: Store, me: Actor, corp: Corpus) -> str | None:
    """Pick a saved judge or declare one (admins): its TOML, a test on one pair, save, delete. The pick."""
    show_flash(SLOT)
    saved = guard(J.judge_specs, s)
    declare = me.can(Can.DECLARE_JUDGES)
    pick = pick_declared("Judge", saved, NEW, declare=declare, key="judge_pick", kind="judge")
    if pick is None:
        return None
    shown = guard(J.saved_judge, s, pick).to_dict() if pick in saved else None
    text = st.text_area("Declaration (TOML or JSON)", height=260, key=f"judge_text_{pick}", disabled=not declare,
                        value=J.EXAMPLE if shown is None else json.dumps(shown, indent=2, ensure_ascii=False),
                        help="Header values may read the environment variables listed in LABELER_SYSTEM_ENV as "
                             "${NAME}; the prompt is UMBRELA's unless you write one with {question}, {title}, {text}.")
    if declare:
        questions = {q.question.query_id: q for q in guard(db.questions, s)}
        t1, t2, t3 = st.columns([2, 2, 1], vertical_alignment="bottom")
        qid = t1.selectbox("Test question", list(questions), key="judge_test_q")
        first = next((j.doc_id for j in questions[qid].judgments), "") if qid else ""
        doc_id = t2.text_input("Document id", value=first, key=f"judge_test_doc_{qid}")
        if qid and t3.button("Test on one pair", key="judge-test"):
            result = guard(J.test_pair, me, text, guard(J.sample_pair, s, corp, qid, doc_id.strip()))
            if isinstance(result, JudgeFailure):
                st.error(inert(f"No grade: {result.error}"))
            else:
                st.success(f"Grade {result.grade} from {inert(result.judge)} ({inert(result.model)}).")
                with st.expander("Raw answer"):
                    st.code(result.raw or "(empty)", language=None)
        b1, b2, _ = st.columns([1, 1, 4])
        b1.button("Save", key="judge-save", on_click=_save, args=(s, me, f"judge_text_{pick}"))
        if pick in saved:
            b2.button("Delete", key="judge-delete", on_click=_delete, args=(s, me, pick))
    return pick if pick in saved else None


def bars_section(s: Store, me: Actor) -> None:
    """The team's bars; admins change them."""
    bars = guard(J.judge_bars, s)
    st.caption(f"The team's bars: at least {bars['min_pairs']} human pairs, binarized kappa >= {bars['kappa_binary']}"
               f", Kendall tau >= {bars['tau']} once there are {bars['min_runs']} saved runs. Below them a judge's "
               "grades are suggestions only and change no metric.")
    if not me.can(Can.TEAM_SETTINGS):
        return
    with st.expander("Change the bars"), st.form("judge_bars_form"):
        c = st.columns(4)
        values = {"min_pairs": c[0].number_input("Human pairs", 1, 1_000_000, int(bars["min_pairs"]), key="bar_pairs"),
                  "kappa_binary": c[1].number_input("Binarized kappa", -1.0, 1.0, float(bars["kappa_binary"]),
                                                    key="bar_kappa"),
                  "tau": c[2].number_input("Kendall tau", -1.0, 1.0, float(bars["tau"]), key="bar_tau"),
                  "min_runs": c[3].number_input("Runs for tau", 2, 1000, int(bars["min_runs"]), key="bar_runs")}
        if st.form_submit_button("Save the bars"):
            guard(J.set_judge_bars, s, me, values)
            st.success("Bars saved.")


def calibration_section(cal, verdict) -> None:
    """The statistics with their intervals, the confusion matrix as a heat map, the verdict."""
    data = cal.calibration.to_dict()
    stats = [{"statistic": k, "value": data[k], "ci95 low": (data["ci95"].get(k) or [None, None])[0],
              "ci95 high": (data["ci95"].get(k) or [None, None])[1]}
             for k in ("kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "bias",
                       "kendall_tau", "tau_ap")]
    st.caption(f"{cal.calibration.pairs} pairs graded by people and by the judge, over {cal.calibration.questions} "
               f"questions; {len(cal.runs)} saved runs for tau; calibration {cal.fingerprint}.")
    c1, c2 = st.columns([1, 1])
    c1.dataframe(frame := pd.DataFrame(stats), hide_index=True, key="calibration_table",
                 column_config=score_columns(frame))
    confusion = pd.DataFrame(J.confusion_rows(cal)).set_index("human grade")
    c2.markdown("**Confusion matrix** (rows: people's grade, columns: the judge's)")
    c2.container(key="confusion").dataframe(confusion.style.background_gradient(cmap="Blues", axis=None),
                                            key="confusion_table")
    (st.success if verdict.passes else st.warning)(inert(verdict.line))


def evaluation_section(s: Store, me: Actor, judged) -> None:
    """A run's numbers with people's grades beside the filled ones, and judged@k split; the filled numbers
    saved as a run of their own."""
    st.dataframe(frame := pd.DataFrame(judged.rows()), hide_index=True, key="judged_metrics",
                 column_config=score_columns(frame))
    st.dataframe(frame := pd.DataFrame(judged.judged_rows()), hide_index=True, key="judged_split",
                 column_config=score_columns(frame))
    with st.expander("What this evaluation rests on (judge, calibration, bars)"):
        st.json(judged.record())
    if judged.filled is not None and st.button("Save the filled numbers as a run", key="judged-save",
                                               disabled=not me.can(Can.RUN_EVALUATION)):
        saved = guard(J.save_judged, s, me, judged)
        st.success(f"Saved as run #{saved.run_id} ({inert(saved.name)}): compare it with the human-only run.")


def post_edit_section(s: Store) -> None:
    """What annotators did with the judges' suggestions on the Label page (labeler_app.suggestions)."""
    rows = guard(sg.post_edit_rows, s)
    if not rows:
        return
    st.markdown("**Suggestions on the Label page**: *post-edited* pairs were shown the judge's grade before the "
                "annotator graded them (kept it, or changed it up or down); *blind* ones after. A post-edited "
                "kappa well above the blind one is anchoring.")
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="post_edit")
