"""The Evaluate page's result sections: the metric table with what its columns rest on, the
abstention sweep with what its scores are, and bringing the results into view after a run."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from labeler.evaluation import EvalReport
from labeler_app import evaluate as ev
from labeler_pages._common import score_columns

SCROLL_PENDING = "_scroll_to_results"
RESULTS_KEY = "eval-results"
# No data in it: the selector is a constant; the nonce (a counter) makes each run's script a new element.
SCROLL = """<span hidden data-results-scroll="{nonce}"></span><script>
setTimeout(() => {{
  const heading = window.parent.document.querySelector('.st-key-{key}') || document.querySelector('.st-key-{key}');
  if (heading) heading.scrollIntoView({{block: 'start', behavior: 'instant'}});
}}, 80);
</script>"""


def scroll_after_run() -> None:
    """Have the next drawing of the results heading bring it into view (once)."""
    st.session_state[SCROLL_PENDING] = True


def results_heading() -> None:
    """The Results heading; right after a run, a script scrolls it to the top of the window."""
    st.container(key=RESULTS_KEY).subheader("Results", anchor=False)
    if st.session_state.pop(SCROLL_PENDING, False):
        st.session_state["_results_scroll_nonce"] = st.session_state.get("_results_scroll_nonce", 0) + 1
        st.html(SCROLL.format(key=RESULTS_KEY, nonce=st.session_state["_results_scroll_nonce"]),
                unsafe_allow_javascript=True)


def metrics_section(report: EvalReport, cutoff: int) -> None:
    """Means with their CIs at the cutoff; judged@cutoff and the CI method said once, under the table."""
    metrics = pd.DataFrame(ev.metric_rows(report, cutoff))
    st.container(key="metrics").dataframe(metrics, hide_index=True, key="metrics_table", width=640,
                                          column_config=score_columns(metrics))
    for line in (ev.judged_line(report, cutoff), ev.ci_line(report)):
        if line:
            st.caption(line)


def abstention_section(report: EvalReport, config: Mapping[str, Any]) -> None:
    """Abstention at the run's threshold, the suggested one, the sweep, and what the scores are."""
    st.markdown("**Unanswerable questions: abstaining when the top score is below a threshold**")
    a1, a2 = st.columns([2, 3])
    for label, value, help_text in ev.abstention_lines(report):
        a1.metric(label, value, help=help_text)
    a1.caption(ev.suggestion_line(report))
    if note := ev.score_scale_note(config):
        a1.caption(note)
    if rows := ev.sweep_rows(report):
        a2.line_chart(pd.DataFrame(rows), x="threshold", height=260)
