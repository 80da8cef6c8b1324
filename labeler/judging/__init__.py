"""Judging order and stopping: the per-question relevance model, the stopping estimate, the simulator.

Pure core (no storage, no streamlit): `ActiveOrder` orders a question's unjudged documents from the
grades given so far, `estimate_remaining` bounds the relevant documents still unjudged from a random sample
(assumption-free), `model_remaining` from the model's calibrated scores (assumes calibration), and
`labeler simulate` runs both against an oracle that grades from a collection's full qrels.
"""
from labeler.judging.active import ActiveOrder
from labeler.judging.calibrated import ModelEstimate, model_remaining
from labeler.judging.features import CorpusText, QuestionFeatures, question_features
from labeler.judging.stopping import RemainingEstimate, StoppingRule, estimate_remaining, hypergeometric_upper

__all__ = ["ActiveOrder", "CorpusText", "ModelEstimate", "QuestionFeatures", "RemainingEstimate", "StoppingRule",
           "estimate_remaining", "hypergeometric_upper", "model_remaining", "question_features"]
