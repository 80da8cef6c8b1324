"""`CallableJudge`: a Python function `"package.module:function"` as a judge (CLI only, as for systems).

The function is called as `grade(question, title, text)` and returns the grade: an int 0-3, a
`(grade, rationale)` pair, or an answer string parsed as a chat judge's is (`##final score: N`).
Importing happens once (`labeler.systems.pycallable.import_target`: a missing module or a wrong
signature is a ConfigError). Per pair, raising, calling sys.exit, or returning anything else
(a grade outside 0-3, a float, None) is that pair's `JudgeFailure`, never a 0.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from labeler.judges.base import JudgeFailure, JudgePair, JudgeResult, LocalJudge, grade_of
from labeler.judges.prompt import UnparsedAnswer, parse_grade
from labeler.progress import Progress
from labeler.systems.pycallable import exit_call, import_target

SHAPE = "def grade(question: str, title: str, text: str) -> int (0-3)"


class CallableJudge(LocalJudge):
    """A Python function as a judge (imported once, at construction)."""

    kind = "python"

    def __init__(self, spec) -> None:
        super().__init__(spec)
        self.target = spec.params["target"]
        self.function = import_target(self.target, spec.params.get("path"), what="python judge",
                                      call=("question", "title", "text"), called="question, title, text", shape=SHAPE)

    def judge_one(self, pair: JudgePair) -> JudgeResult:
        """Call the function on one pair; what it returns is checked strictly."""
        def failed(why: str) -> JudgeFailure:
            return JudgeFailure(pair.query_id, pair.doc_id, f"{self.target} {why}")

        try:
            result = self.function(pair.question, pair.title, pair.text)
        except SystemExit as exc:
            return failed(f"called {exit_call(exc)}")
        except Exception as exc:  # noqa: BLE001 - the user's code: its failure is this pair's
            return failed(f"raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        rationale = None
        if isinstance(result, tuple) and len(result) == 2 and (result[1] is None or isinstance(result[1], str)):
            result, rationale = result
        if isinstance(result, str):
            try:
                grade, parsed = parse_grade(result)
            except UnparsedAnswer as exc:
                return failed(f"returned an unparsed answer: {exc}")
            return grade_of(self.spec, pair, grade, result, rationale or parsed)
        if isinstance(result, bool) or not isinstance(result, int) or not 0 <= result <= 3:
            return failed(f"returned {result!r}, not a grade 0-3 (return an int 0-3)")
        return grade_of(self.spec, pair, result, str(result), rationale)

    def judge(self, pairs: Iterable[JudgePair], progress: Progress | None = None) -> Iterator[JudgeResult]:
        """Every pair in order."""
        pairs = list(pairs)
        for done, pair in enumerate(pairs, start=1):
            yield self.judge_one(pair)
            if progress:
                progress(done, len(pairs), "judging")
