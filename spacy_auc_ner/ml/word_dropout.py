"""Word dropout at the encoder input: in training only, a token's NORM key becomes an unknown key
with probability ``rate``. With 20 sentences the NORM rows alone fit every training mention, and
an unseen word then reads rows only O words trained; dropping them makes the model use prefix,
suffix and shape too. ``unknown = "random"`` draws a fresh key per dropped token (the rows an
unseen word reads at prediction), ``"unk"`` one fixed key. :func:`MultiHashEmbed` is spaCy's
``MultiHashEmbed.v2`` with this layer before the hash tables.
"""
from typing import List, Union

from spacy.attrs import intify_attr
from spacy.ml.featureextractor import FeatureExtractor
from spacy.ml.staticvectors import StaticVectors
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import HashEmbed, Maxout, Model, chain, concatenate, list2ragged, ragged2list, with_array
from thinc.types import Floats2d, Ragged

UNKNOWN_MODES = ("random", "unk")
# the key every dropped token gets with unknown = "unk" (no string hashes to it in practice)
UNK_KEY = 0x0DD0C0FFEE


def word_dropout(column: int, rate: float, unknown: str = "random") -> Model[Ragged, Ragged]:
    """On (N, n_attrs) uint64 feature keys: in training, each row's key in `column` is
    replaced with probability `rate` (see the module docstring for `unknown`); at prediction
    the keys pass through. Keys carry no gradient: backprop hands its input back."""
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"[model] word_dropout must be in [0, 1), not {rate}")
    if unknown not in UNKNOWN_MODES:
        raise ValueError(f"[model] word_dropout_unknown must be one of {', '.join(UNKNOWN_MODES)}, not {unknown!r}")
    return Model("word_dropout", _forward, attrs={"column": column, "rate": rate, "unknown": unknown})


def _forward(model: Model, X: Ragged, is_train: bool):
    rate = model.attrs["rate"]
    if not is_train or rate == 0.0 or X.dataXd.shape[0] == 0:
        return X, lambda dY: dY
    xp = model.ops.xp
    keys = X.dataXd
    n = keys.shape[0]
    dropped = xp.random.uniform(0.0, 1.0, n) < rate
    new_keys = keys.copy()
    if model.attrs["unknown"] == "unk":
        replacement = xp.full(n, UNK_KEY, dtype=keys.dtype)
    else:
        replacement = xp.random.randint(0, 2**62, size=n, dtype="int64").astype(keys.dtype)
    column = model.attrs["column"]
    new_keys[:, column] = xp.where(dropped, replacement, keys[:, column])
    return Ragged(new_keys, X.lengths), lambda dY: dY


@registry.architectures("spacy_auc_ner.MultiHashEmbed.v1")
def MultiHashEmbed(
    width: int,
    attrs: List[Union[str, int]],
    rows: List[int],
    include_static_vectors: bool,
    word_dropout_rate: float = 0.0,
    word_dropout_attr: str = "NORM",
    word_dropout_unknown: str = "random",
) -> Model[List[Doc], List[Floats2d]]:
    """spaCy's MultiHashEmbed.v2 (same parameters: its pipelines load as v2's) plus word
    dropout of the `word_dropout_attr` key with probability `word_dropout_rate`
    (`word_dropout_unknown`: "random" or "unk"); a rate of 0 is MultiHashEmbed.v2."""
    if len(rows) != len(attrs):
        raise ValueError(f"[model] MultiHashEmbed: {len(rows)} rows for {len(attrs)} attrs")
    names = [intify_attr(a) for a in attrs]
    target = intify_attr(word_dropout_attr)
    if target not in names:
        raise ValueError(f"[model] word_dropout_attr {word_dropout_attr!r} is not one of attrs {list(attrs)}")
    # the seeds spaCy's MultiHashEmbed.v2 gives its tables: 8, 9, ...
    embeddings = [HashEmbed(width, rows[i], column=i, seed=8 + i, dropout=0.0) for i in range(len(attrs))]
    concat_size = width * (len(embeddings) + include_static_vectors)
    max_out = with_array(Maxout(width, concat_size, nP=3, dropout=0.0, normalize=True))
    features = chain(
        FeatureExtractor(attrs),
        list2ragged(),
        word_dropout(names.index(target), word_dropout_rate, word_dropout_unknown),
        with_array(concatenate(*embeddings)),
    )
    if include_static_vectors:
        return chain(concatenate(features, StaticVectors(width, dropout=0.0)), max_out, ragged2list())
    return chain(features, max_out, ragged2list())
