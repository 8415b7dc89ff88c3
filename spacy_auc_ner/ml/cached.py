"""``spacy_auc_ner.CachedFrozenEncoder.v1``: a frozen encoder run in inference mode once per
sentence, its per-token outputs reused in every later epoch (fine-tuning on CPU costs a pass
per sentence per epoch). The key is the doc's token texts and spaces, so the encoder must
depend on the text alone; at most ``max_size`` docs are kept (least recently used dropped
first; 0 keeps nothing) and the cache is never saved.
"""
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

import srsly
from spacy.attrs import ORTH, SPACY
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.model import deserialize_attr, serialize_attr
from thinc.types import Floats2d


class EncoderCache:
    """Least-recently-used map from a doc's token key to its (n_tokens, width) output."""

    def __init__(self, max_size: int):
        if max_size < 0:
            raise ValueError(f"[CachedFrozenEncoder] max_size must be >= 0, not {max_size}")
        self.max_size = int(max_size)
        self._entries: "OrderedDict[bytes, Floats2d]" = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: bytes) -> Optional[Floats2d]:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: bytes, value: Floats2d) -> None:
        if self.max_size == 0:
            return
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_size:
            self._entries.popitem(last=False)

    def lookup(self, keys: Sequence[bytes]) -> Tuple[Dict[bytes, Any], List[int]]:
        """The cached value of each distinct key (None when not cached), and the index of one
        row per distinct key that is not: the rows to compute. Counts the hits and misses."""
        found: Dict[bytes, Any] = {}
        todo: List[int] = []
        for i, key in enumerate(keys):
            if key not in found:
                found[key] = self.get(key)
                if found[key] is None:
                    todo.append(i)
        self.hits += len(found) - len(todo)
        self.misses += len(todo)
        return found, todo

    def clear(self) -> None:
        self._entries.clear()
        self.hits = self.misses = 0

    def __deepcopy__(self, memo) -> "EncoderCache":
        # a copied model starts with an empty cache: entries are derived data, not state
        return EncoderCache(self.max_size)

    def __getstate__(self) -> Dict:
        return {"max_size": self.max_size}

    def __setstate__(self, state: Dict) -> None:
        EncoderCache.__init__(self, state["max_size"])


@serialize_attr.register(EncoderCache)
def _serialize_cache(_, value: EncoderCache, name: str, model: Model) -> bytes:
    return srsly.msgpack_dumps({"max_size": value.max_size})


@deserialize_attr.register(EncoderCache)
def _deserialize_cache(_, value: bytes, name: str, model: Model) -> EncoderCache:
    return EncoderCache(srsly.msgpack_loads(value)["max_size"])


def doc_key(doc: Doc) -> bytes:
    """The token texts and spaces of `doc`, as the bytes of their (n, 2) hash array."""
    return doc.to_array([ORTH, SPACY]).tobytes()


@registry.architectures("spacy_auc_ner.CachedFrozenEncoder.v1")
def CachedFrozenEncoder(
    encoder: Model[List[Doc], List[Floats2d]], max_size: int = 5000
) -> Model[List[Doc], List[Floats2d]]:
    """Any tok2vec, frozen, each doc's output computed once and kept (`max_size` docs; 0 none)."""
    model = Model(
        "cached_frozen_encoder",
        _forward,
        init=_init,
        layers=[encoder],
        dims={"nO": encoder.get_dim("nO") if encoder.has_dim("nO") else None},
        attrs={"cache": EncoderCache(max_size)},
    )
    model.set_ref("encoder", encoder)
    return model


def _init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    encoder = model.layers[0]
    encoder.initialize(X=X)
    model.attrs["cache"].clear()
    if encoder.has_dim("nO"):
        model.set_dim("nO", encoder.get_dim("nO"), force=True)


def _forward(model: Model, docs: List[Doc], is_train: bool):
    """The outputs of the docs (copies, so callers may change them), running the encoder in
    inference mode once over the docs not in the cache; no gradient goes back."""
    cache: EncoderCache = model.attrs["cache"]
    keys = [doc_key(doc) for doc in docs]
    found, todo = cache.lookup(keys)
    if todo:
        outputs = model.layers[0].predict([docs[i] for i in todo])
        for i, value in zip(todo, outputs):
            # an array of its own: a view would keep its whole batch's buffer alive
            found[keys[i]] = value.copy()
            cache.put(keys[i], found[keys[i]])
    Y = [found[key].copy() for key in keys]

    def backprop(dY: List[Floats2d]) -> List[Doc]:
        return docs

    return Y, backprop
