"""A ``[pretraining]`` block for any training config, so that ``spacy pretrain`` can pretrain
its tok2vec on raw text and ``spacy train`` can start from the weights.

spaCy pretrains "the layer ``[pretraining] layer`` of the pipe ``[pretraining] component``"
and, in ``spacy train``, loads ``[initialize] init_tok2vec`` into that same layer, but only
when the config's ``[pretraining]`` block is filled: with the empty block of
``configs/base_cpu.cfg`` the weights would be silently ignored. :func:`pretraining_config` therefore merges a fragment
(``configs/pretrain/characters.cfg``: ``[paths] raw_text``, ``[corpora.pretrain]`` and the
``[pretraining]`` block) into a base config, fills in spaCy's defaults (``spacy pretrain``
does not) and names the component and layer:

- a shared ``tok2vec`` pipe if there is one: its whole model;
- else a pipe whose model holds its own encoder as the ``tok2vec`` layer (``auc_ner``);
- spaCy's transition-based ``ner`` holds its encoder inside a layer that also projects it
  (encoder >> list2array >> Linear), which the pretraining objectives cannot sit on; its
  encoder block moves into a ``tok2vec`` pipe that the ``ner`` listens to
  (``spacy.Tok2VecListener.v1``), spaCy's standard layout for pretraining, with the same
  network.

The one merged config then serves both commands, as spaCy advises ("ideally ... the same
config file for both").
"""
from pathlib import Path
from typing import Optional, Tuple, Union

from spacy.language import Language
from spacy.pipeline import Tok2Vec
from spacy.pipeline.transition_parser import Parser
from spacy.util import load_config, load_model_from_config
from thinc.api import Config

from ..data.columns import DataError

PathLike = Union[str, Path]
SHARED = "tok2vec"


def tok2vec_layer(nlp: Language, component: Optional[str] = None) -> Tuple[str, str, bool]:
    """(component, layer, move): the encoder to pretrain, ``layer`` "" for a whole pipe, and
    whether the encoder must first move into a shared tok2vec pipe (a transition-based pipe)."""
    if component is not None and component not in nlp.pipe_names:
        raise DataError(f"[pretraining.component] the pipeline has no pipe {component!r} (it has {', '.join(nlp.pipe_names)})")
    names = [component] if component is not None else nlp.pipe_names
    for name in names:
        if isinstance(nlp.get_pipe(name), Tok2Vec):
            return name, "", False
    for name in names:
        pipe = nlp.get_pipe(name)
        model = getattr(pipe, "model", None)
        if model is None or not model.has_ref("tok2vec"):
            continue
        inner = model.get_ref("tok2vec")
        if any("listener" in node.name.lower() for node in inner.walk()):
            if component is not None:
                raise DataError(f"[pretraining.component] pipe {name!r} listens to a shared encoder: pretrain that pipe instead")
            continue
        return name, "tok2vec", isinstance(pipe, Parser)
    where = f"pipe {component!r}" if component is not None else f"any pipe of the pipeline ({', '.join(nlp.pipe_names)})"
    raise DataError(f"[pretraining.component] no tok2vec encoder of its own in {where} to pretrain")


def _share_encoder(config: Config, nlp: Language, name: str) -> Config:
    """The config with pipe ``name``'s encoder moved into a ``tok2vec`` pipe it listens to."""
    if SHARED in config["components"]:
        raise DataError(f"[components.{SHARED}] exists already: cannot move the encoder of {name!r} into it")
    width = nlp.get_pipe(name).model.get_ref("tok2vec").layers[0].get_dim("nO")
    model = config["components"][name]["model"]
    config["components"][SHARED] = {"factory": "tok2vec", "model": model["tok2vec"]}
    model["tok2vec"] = {"@architectures": "spacy.Tok2VecListener.v1", "width": width, "upstream": SHARED}
    config["nlp"]["pipeline"] = [SHARED] + list(config["nlp"]["pipeline"])
    return config


def pretraining_config(base: PathLike, fragment: PathLike, component: Optional[str] = None) -> Config:
    """The base config with spaCy's defaults filled in, the fragment's pretraining settings
    merged in, and ``[pretraining] component`` and ``layer`` set (unless the fragment sets
    the component)."""
    for path in (base, fragment):
        if not Path(path).is_file():
            raise DataError(f"{path}: no such config file")
    config = load_config(base, interpolate=False)
    extra = load_config(fragment, interpolate=False)
    if not extra.get("pretraining"):
        raise DataError(f"{fragment}: has no [pretraining] block")
    nlp = load_model_from_config(config.merge(extra), auto_fill=True, validate=True)
    filled = nlp.config
    if component is None and filled["pretraining"].get("component"):
        return filled
    name, layer, move = tok2vec_layer(nlp, component)
    if move:
        filled = load_model_from_config(_share_encoder(filled, nlp, name), auto_fill=True, validate=True).config
        name, layer = SHARED, ""
    filled["pretraining"]["component"] = name
    filled["pretraining"]["layer"] = layer
    return filled
