"""Registered token losses; see :mod:`spacy_auc_ner.losses.base` for the interface."""
from .auc import AUCMargin, make_auc_margin
from .base import LossOutput, TokenLoss, Truth
from .crf import CRFLoss, make_crf_loss
from .crossentropy import BinaryCE, SoftmaxCE, make_binary_ce, make_softmax_ce

__all__ = [
    "AUCMargin",
    "BinaryCE",
    "CRFLoss",
    "LossOutput",
    "SoftmaxCE",
    "TokenLoss",
    "Truth",
    "make_auc_margin",
    "make_binary_ce",
    "make_crf_loss",
    "make_softmax_ce",
]
