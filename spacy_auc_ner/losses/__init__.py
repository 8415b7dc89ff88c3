"""Registered token losses; see :mod:`spacy_auc_ner.losses.base` for the interface."""
from .auc import AUCMargin, make_auc_margin
from .base import LossOutput, LossParam, LossWrapper, TokenLoss, Truth
from .compositional import Compositional, make_compositional
from .crf import CRFLoss, make_crf_loss
from .crossentropy import BinaryCE, SoftmaxCE, make_binary_ce, make_softmax_ce
from .dice import Dice, make_dice
from .focal import Focal, make_focal
from .mom import MoM, make_mom
from .negative_sampling import NegativeSampling, make_negative_sampling
from .sequence_auc import CRFWithAUC, make_crf_with_auc
from .weighted import WeightedCE, make_weighted_ce

__all__ = [
    "AUCMargin",
    "BinaryCE",
    "CRFLoss",
    "CRFWithAUC",
    "Compositional",
    "Dice",
    "Focal",
    "LossOutput",
    "LossParam",
    "LossWrapper",
    "MoM",
    "NegativeSampling",
    "SoftmaxCE",
    "TokenLoss",
    "Truth",
    "WeightedCE",
    "make_auc_margin",
    "make_binary_ce",
    "make_compositional",
    "make_crf_loss",
    "make_crf_with_auc",
    "make_dice",
    "make_focal",
    "make_mom",
    "make_negative_sampling",
    "make_softmax_ce",
    "make_weighted_ce",
]
