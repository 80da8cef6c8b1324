"""Machine judges: relevance graders declared as data, and how far to trust them.

`spec` (JudgeSpec: a declaration, parsed and validated), `base` (JudgePair, MachineGrade,
JudgeFailure, the Judge protocol, make_judge), the kinds (`openai`, `pyjudge`, `filejudge`,
`embedding`), `prompt` (UMBRELA's prompt, strict answer parsing), `calibration` (agreement
with people and system-ranking agreement, with bootstrap CIs) and `checks` (the judge's own
stability: run-to-run, document position, a circular model).
"""
from __future__ import annotations

from labeler.judges.base import Judge, JudgeFailure, JudgePair, JudgeResult, MachineGrade, make_judge
from labeler.judges.spec import KINDS, JudgeSpec, judge_spec_from_dict, parse_judge_spec, read_judge_spec

__all__ = ["KINDS", "Judge", "JudgeFailure", "JudgePair", "JudgeResult", "JudgeSpec", "MachineGrade",
           "judge_spec_from_dict", "make_judge", "parse_judge_spec", "read_judge_spec"]
