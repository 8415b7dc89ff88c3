"""Registered token losses; see :mod:`spacy_auc_ner.losses.base` for the interface."""
from .auc import AUCMargin
from .base import LossOutput, LossParam, LossWrapper, TokenLoss, Truth
from .compositional import Compositional
from .crf import CRFLoss
from .crossentropy import BinaryCE, SoftmaxCE
from .dice import Dice
from .focal import Focal
from .mom import MoM
from .negative_sampling import NegativeSampling
from .sequence_auc import CRFWithAUC
from .weighted import WeightedCE

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
]
