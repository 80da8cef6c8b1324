"""Judging order and stopping: the per-question relevance model, the stopping estimate, the simulator.

Pure core (no storage, no streamlit): `ActiveOrder` orders a question's unjudged documents from the
grades given so far, `estimate_remaining` bounds the relevant documents still unjudged from a random sample
(assumption-free), `curve_remaining` from the judged order's falling rate of relevant documents (the
simulator's stopping decision beside the sample's; assumes the rate's shape), `model_remaining` from the
model's calibrated scores (no longer used: too flat), and `labeler simulate` runs them against an oracle
that grades from a collection's full qrels.
"""
from labeler.judging.active import ActiveOrder
from labeler.judging.calibrated import ModelEstimate, model_remaining
from labeler.judging.features import CorpusText, QuestionFeatures, question_features
from labeler.judging.gain_curve import CurveEstimate, curve_remaining
from labeler.judging.stopping import RemainingEstimate, StoppingRule, estimate_remaining, hypergeometric_upper

__all__ = ["ActiveOrder", "CorpusText", "CurveEstimate", "ModelEstimate", "QuestionFeatures", "RemainingEstimate",
           "StoppingRule", "curve_remaining", "estimate_remaining", "hypergeometric_upper", "model_remaining", "question_features"]
