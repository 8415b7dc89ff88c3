"""A ``[pretraining]`` block for any training config. spaCy loads ``[initialize] init_tok2vec``
only when that block is filled (the empty one of ``configs/base_cpu.cfg`` would silently
ignore the weights), so :func:`named_pretraining` fills in spaCy's defaults and names the
component and layer (`pretraining_config` after merging a fragment into a base config, the
orchestrator when a config's component is null; one rule, `pretrains`, says when a config
pretrains); spaCy's ``ner`` projects its encoder
inside one layer, where no objective fits, so its encoder moves to a ``tok2vec`` pipe it
listens to (the same network). One config then serves ``spacy pretrain`` and ``spacy train``.
``RawText.v1`` reads ``.txt``, ``.jsonl`` or ``.spacy`` (so raw text can default to the
training file).
"""
from pathlib import Path
from typing import Callable, Iterator, Optional, Tuple

from spacy.language import Language
from spacy.pipeline import Tok2Vec
from spacy.pipeline.transition_parser import Parser
from spacy.training import Example
from spacy.util import load_model_from_config, registry
from thinc.api import Config, ConfigValidationError

from ..data.columns import DataError
from ..data.config_files import config_error_text, load_config_file
from ..data.files import PathLike
from .unlabeled import pool_docs, read_pool

SHARED = "tok2vec"


@registry.readers("spacy_auc_ner.RawText.v1")
def create_raw_text(path: Optional[PathLike], min_length: int = 1, max_length: int = 500, limit: int = 0) -> Callable[[Language], Iterator[Example]]:
    """Unannotated text (``spacy pretrain``'s, self-training's pool) from a ``.txt``, ``.jsonl`` or ``.spacy`` file,
    ``min_length``, ``max_length`` and ``limit`` as spaCy's ``JsonlCorpus.v1`` (0: no bound)."""
    for name, value in (("min_length", min_length), ("max_length", max_length), ("limit", limit)):
        if not isinstance(value, int) or value < 0:
            raise DataError(f"spacy_auc_ner.RawText.v1: {name} = {value!r}: expected a whole number >= 0")

    def read(nlp: Language) -> Iterator[Example]:
        # checked when read, not when made: spacy train makes every reader of [corpora],
        # the raw text of pretraining and self-training included, and reads none of them
        if path is None:
            raise DataError("spacy_auc_ner.RawText.v1 reads no file (its path is null): give the raw text with --paths.raw_text")
        kept = short = long = 0
        docs = pool_docs(nlp, read_pool(path))
        for doc in docs:
            if min_length and len(doc) < min_length:
                short += 1
                continue
            if max_length and len(doc) >= max_length:
                long += 1
                continue
            yield Example(doc, doc)
            kept += 1
            if kept == limit:
                return
        if not kept:  # spacy pretrain would run its epochs on 0 words and say nothing
            raise DataError(f"{path}: none of its {len(docs)} texts is within min_length = {min_length} and max_length = {max_length} tokens "
                            f"({short} shorter, {long} as long or longer), so it gives no text; lower min_length or raise max_length (0: no bound)")

    return read


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


def pretrains(config: Config, where: PathLike = "the config") -> bool:
    """The one rule for "this config pretrains", for ``recipe`` and the lab's cells alike: its
    ``[pretraining]`` has an objective and ``max_epochs`` >= 1 (0: no pretraining). The component
    and layer may be null: `named_pretraining` names them."""
    block = config.get("pretraining") or {}
    epochs = block.get("max_epochs", 0)
    if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 0:
        raise DataError(f"{where}: [pretraining.max_epochs] must be a whole number >= 0 (0: no pretraining), not {epochs!r}")
    return bool(block.get("objective")) and epochs >= 1


def named_pretraining(config: Config, component: Optional[str] = None) -> Config:
    """``config`` as ``spacy pretrain`` and then ``spacy train`` read it: spaCy's defaults filled
    in (spacy pretrain reads only a filled config) and ``[pretraining] component`` and ``layer``
    named when the component is null (or set to ``component``): the first encoder of its own in
    the pipeline; a transition-based pipe's encoder moves into a shared ``tok2vec`` pipe first."""
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
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


def pretraining_config(base: PathLike, fragment: PathLike, component: Optional[str] = None) -> Config:
    """The base config with the fragment merged in, as `named_pretraining` fills and names it
    (``spacy-auc-ner pretrain-config``), its raw text read by RawText.v1 where the fragment
    names spaCy's JsonlCorpus.v1."""
    config = load_config_file(base)
    extra = load_config_file(fragment)
    if "nlp" not in config:  # a method's partial config, or the fragment given first
        raise DataError(f"{base}: not a full training config (no [nlp]); assemble one with spacy-auc-ner config first")
    if not extra.get("pretraining"):
        raise DataError(f"{fragment}: has no [pretraining] block")
    # spaCy's JsonlCorpus.v1 reads .jsonl only and finds nothing in a .txt file (a warning, then
    # pretraining on 0 words that reports success); RawText.v1 reads .txt, .jsonl and .spacy
    # with the same bounds, so a written config takes the raw text a user has
    reader = ((extra.get("corpora") or {}).get("pretrain") or {})
    if reader.get("@readers") == "spacy.JsonlCorpus.v1":
        reader["@readers"] = "spacy_auc_ner.RawText.v1"
    try:
        return named_pretraining(config.merge(extra), component)
    except ConfigValidationError as err:  # spaCy's error dumps the whole config
        raise DataError(f"{base} with {fragment}: {config_error_text(err)}") from None


def check_pretraining_text(config: Config, where: PathLike) -> None:
    """Read the text that spacy pretrain will read (the filled config's ``[pretraining] corpus``
    reader, on the config's language), now, so that a bad file, or bounds that leave no text,
    fail before a recipe claims its folder: one line naming the block. Skipped while the file
    does not exist yet (the training file a recipe converts into its output folder): the reader
    refuses the same when pretraining reads it."""
    import spacy
    from spacy.util import dot_to_object, resolve_dot_names

    interpolated = config.interpolate()
    key = interpolated["pretraining"].get("corpus", "corpora.pretrain")
    path = dot_to_object(interpolated, key).get("path")
    if not isinstance(path, str) or not Path(path).is_file():
        return
    (reader,) = resolve_dot_names(interpolated, [key])
    try:
        words = sum(len(eg.reference) for eg in reader(spacy.blank(interpolated["nlp"]["lang"])))
    except DataError as err:
        raise DataError(f"[{key}] of {where}: {err}") from None
    if not words:  # another reader (spacy.JsonlCorpus.v1) that leaves out every text, silently
        raise DataError(f"[{key}] of {where}: {path} gives pretraining no text (0 words); check the block's min_length, max_length and limit")
