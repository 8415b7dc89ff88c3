"""Sentence-level resampling (Wang & Wang, NAACL 2022): how many times to repeat each sentence.
With c(t, s) the tokens of type t in sentence s, l its length and r_t = -log_b(share of all
corpus tokens of type t):

    sC    = 1 + sum_t c(t, s)
    sCR   = 1 + ceil(sqrt(sum_t r_t c(t, s)))
    sCRD  = 1 + ceil(sum_t r_t c(t, s) / sqrt(l))
    nsCRD = 1 + ceil(sum_t r_t sqrt(c(t, s)) / sqrt(l))

The paper prints r_t = -log(sum_s c(t, s) / N) without a base; the authors' code takes base 2,
this module's default ``base``. The authors' code puts the 1 inside (ceil(sqrt(1 + sum r c)),
...) and keeps entity-free sentences once: ``variant="code"``.
"""
import math
from typing import Sequence, Union

import numpy

from ..data.files import DataError, is_number

METHODS = ("sC", "sCR", "sCRD", "nsCRD")
VARIANTS = ("paper", "code")
# ceil() tolerance, so that a value that is an integer up to float rounding is not pushed up
_EPS = 1e-9


def rareness(type_tokens: Union[Sequence[float], numpy.ndarray], n_tokens: int, base: float = 2.0) -> numpy.ndarray:
    """(T,) r_t = -log_base(tokens of type t / all tokens), the self-information of type t."""
    counts = numpy.asarray(type_tokens, dtype="f8")
    if n_tokens <= 0:
        raise ValueError("rareness needs a corpus with at least one token")
    check_base(base, "[base]")
    if (counts <= 0).any() or (counts > n_tokens).any():
        raise ValueError("rareness needs each type's token count in 1..n_tokens")
    return -numpy.log(counts / n_tokens) / numpy.log(base)


def check_base(base, where: str) -> None:
    """The log base of the rareness: a finite number above 1. Below 1 every r_t is negative
    and NaN (base = nan in a config) passed the old test; both repeated sentences a negative
    number of times, which numpy refused naming nothing."""
    if not (is_number(base) and 1 < base < math.inf):
        raise DataError(f"{where} the log base must be a finite number above 1, got {base!r}")


def frequencies(
    counts: numpy.ndarray,
    lengths: Union[Sequence[int], numpy.ndarray],
    rare: Union[Sequence[float], numpy.ndarray],
    method: str,
    variant: str = "paper",
) -> numpy.ndarray:
    """(S,) copies of each sentence (always >= 1) from counts (S, T) c(t, s), lengths (S,) l
    and rareness (T,) r_t."""
    if method not in METHODS:
        raise ValueError(f"[method] unknown resampling method {method!r}; choose one of {', '.join(METHODS)}")
    if variant not in VARIANTS:
        raise ValueError(f"[variant] unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    c = numpy.asarray(counts, dtype="f8").reshape(len(lengths), -1)
    r = numpy.asarray(rare, dtype="f8").reshape(1, -1)
    sqrt_l = numpy.sqrt(numpy.maximum(numpy.asarray(lengths, dtype="f8"), 1.0))
    if method == "sC":
        return (1 + c.sum(axis=1)).astype("i8")
    weighted = (r * (numpy.sqrt(c) if method == "nsCRD" else c)).sum(axis=1)
    if variant == "paper":
        inner = numpy.sqrt(weighted) if method == "sCR" else weighted / sqrt_l
        return (1 + _ceil(inner)).astype("i8")
    inner = numpy.sqrt(1 + weighted) if method == "sCR" else (1 + weighted) / sqrt_l
    out = _ceil(inner)
    out[c.sum(axis=1) == 0] = 1
    return numpy.maximum(out, 1).astype("i8")


def _ceil(x: numpy.ndarray) -> numpy.ndarray:
    return numpy.maximum(numpy.ceil(x - _EPS), 0.0)

